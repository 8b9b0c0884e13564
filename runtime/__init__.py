"""The pure-Python reference runtime: run a plan over a trace with Spark's micro-batch
semantics and get, per executed batch (no-data batches included), the output rows, the
watermark and the state metrics Spark would report (language brief §7).

* ``run(plan, trace)`` returns a ``RunResult`` in memory;
* ``iter_batches(plan, trace)`` yields one batch at a time and keeps none;
* ``run_to_files(plan, trace, output=..., progress=...)`` streams the §7 JSON lines out as
  each batch completes (what ``sjoin run`` calls);
* ``output_line`` / ``progress_line`` format single lines.

It reads only the plan (never the front end) and never imports pyspark.  This module only
hands names on: the runner and the calls are in ``runner.py``, the sinks in ``sinks.py``, the
checkpoint protocol in ``recovery.py`` (the directory in ``checkpoint.py``), the batch records
and line formats in ``output.py``, the making of them in ``emit.py``, the engine choice in
``choice.py``.
"""

from __future__ import annotations

from .choice import EngineChoice, TraceShape, choose_engine, scan_trace
from .errors import (
    CheckpointError,
    QueryError,
    RunError,
    UnsafeFileError,
    UnsupportedExpression,
    UsageError,
)
from .files import Place
from .operators import ENGINES, EngineName
from .output import BatchOutput, RunResult, RunSummary, output_line, progress_line
from .runner import TraceInput, delta_options, iter_batches, run, run_to_files
from .sinks import OUTPUT_FORMATS, OutputFormat
from .trace import BadRow, TraceError

__all__ = [
    "ENGINES",
    "OUTPUT_FORMATS",
    "BadRow",
    "BatchOutput",
    "CheckpointError",
    "EngineChoice",
    "EngineName",
    "OutputFormat",
    "Place",
    "QueryError",
    "RunError",
    "RunResult",
    "RunSummary",
    "TraceError",
    "TraceInput",
    "TraceShape",
    "UnsafeFileError",
    "UnsupportedExpression",
    "UsageError",
    "choose_engine",
    "delta_options",
    "iter_batches",
    "output_line",
    "progress_line",
    "run",
    "run_to_files",
    "scan_trace",
]
