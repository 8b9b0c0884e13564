"""sjoin: declarative stream-stream joins for Spark.

The public API: check a spec, plan it.  Nothing here imports pyspark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .version import __version__

if TYPE_CHECKING:
    from .api import CheckResult, check_dataframe, check_file, check_text, plan_file, plan_text

__all__ = [
    "CheckResult",
    "__version__",
    "check_dataframe",
    "check_file",
    "check_text",
    "plan_file",
    "plan_text",
]


def __getattr__(name: str) -> Any:
    """The API on first use (PEP 562): `sjoin --version` and `--help` import this package,
    and must not pay for the parser and sqlglot (about 0.25 s) that the API needs."""
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'sjoin' has no attribute {name!r}")
