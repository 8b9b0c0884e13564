"""sjoin in the editor: `sjoin lsp`, a Language Server Protocol server (docs/editors.md).

A peer of ``reports/``: it reads the compiler's results through ``api.py`` and the
compiler's public objects (the AST, the bound model, the plan, the tables of codes,
functions and settings) and decides nothing itself; nothing in ``compiler/`` or
``runtime/`` imports it.
"""
