"""What sjoin says about a Plan: plan text and JSON, Mermaid, capacity, diffs."""
