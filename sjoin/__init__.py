"""sjoin: declarative stream-stream joins for Spark.

The public API: check a spec, plan it.  Nothing here imports pyspark.
"""

from __future__ import annotations

__version__ = "0.1.0"

from sjoin.api import CheckResult, check_file, check_text, plan_file, plan_text

__all__ = ["CheckResult", "__version__", "check_file", "check_text", "plan_file", "plan_text"]
