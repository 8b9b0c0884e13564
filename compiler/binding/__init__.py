"""AST to the bound model: names, types, values."""
