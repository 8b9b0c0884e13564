"""The columnar runtime: the reference runtime's semantics a batch at a time on polars
(``sjoin run --engine columnar``; ``--engine auto``, the default, picks it for a trace whose
batches are large enough to pay for it: ``runtime/choice.py``).

Importing this package loads nothing: ``support`` (what runs columnar, decided from the Plan)
has no polars, so a run can pick its engine first; only ``query``, ``join``, ``frames`` and
``trace`` import polars, and only ``runtime/__init__.py`` imports them, for a columnar run.
So polars is never loaded by ``import sjoin``, ``check``, ``plan`` or ``compile``.
"""
