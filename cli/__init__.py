"""The `sjoin` command: its commands (``main``) and what they print (diagnostics, tables, the
HTML report), the scaffold of ``sjoin init`` and the front of ``sjoin diff``."""
