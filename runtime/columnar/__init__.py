"""The columnar runtime: the reference runtime's semantics a batch at a time on polars
(``sjoin run --engine columnar``, the default of ``sjoin run``).

Only ``runtime/__init__.py`` imports this package, and only for a columnar run, so polars is
never loaded by ``import sjoin``, ``check``, ``plan`` or ``compile``.
"""

from __future__ import annotations

from .query import ColumnarEngine, ColumnarQuery

__all__ = ["ColumnarEngine", "ColumnarQuery"]
