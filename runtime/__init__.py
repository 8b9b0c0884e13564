"""The runtime: run a plan over a trace with Spark's micro-batch semantics, on one of its two
engines (the reference engine, a row at a time, or the columnar one on polars,
``columnar/``; ``choose_engine`` picks), and get, per executed batch (no-data batches
included), the output rows, the watermark and the state metrics Spark would report
(language brief §7).

* ``run(plan, trace)`` returns a ``RunResult`` in memory;
* ``iter_batches(plan, trace)`` yields one batch at a time and keeps none;
* ``run_to_files(plan, trace, output=..., progress=...)`` streams the §7 JSON lines out as
  each batch completes (what ``sjoin run`` calls);
* ``output_line`` / ``progress_line`` format single lines;
* ``RunProgress``: what ``run_to_files(on_progress=...)`` is told after each batch (batches
  done and to go, rows per second, watermark, state rows, time left; ``progress.py``).

It reads only the plan (never the front end) and never imports pyspark.  This module only
hands names on: the runner and the calls are in ``runner.py``, the sinks in ``sinks.py``, the
checkpoint protocol in ``recovery.py`` (the directory in ``checkpoint.py``), the batch records
and line formats in ``output.py``, the making of them in ``emit.py``, the engine choice in
``choice.py``.

The names are loaded on first use (PEP 562), each from its own module: ``from ..runtime
import UsageError`` (what `sjoin compile` needs to check its output path) imports
``errors.py``, not the runner, the operators and the trace readers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .choice import EngineChoice, TraceShape, choose_engine, scan_trace
    from .errors import (
        CheckpointError,
        QueryError,
        RunError,
        UnsafeFileError,
        UnsupportedExpression,
        UsageError,
        WriteError,
    )
    from .io.files import Place
    from .io.output import BatchOutput, RunResult, RunSummary, output_line, progress_line
    from .io.sinks import OUTPUT_FORMATS, OutputFormat
    from .io.trace import BadRow, TraceError
    from .operators import ENGINES, EngineName
    from .progress import RunProgress
    from .runner import TraceInput, delta_options, iter_batches, run, run_to_files

# each public name -> the module (of this folder) that defines it
_HOMES = {
    **dict.fromkeys(["EngineChoice", "TraceShape", "choose_engine", "scan_trace"], "choice"),
    **dict.fromkeys(
        [
            "CheckpointError",
            "QueryError",
            "RunError",
            "UnsafeFileError",
            "WriteError",
            "UnsupportedExpression",
            "UsageError",
        ],
        "errors",
    ),
    "Place": "io.files",
    **dict.fromkeys(["ENGINES", "EngineName"], "operators"),
    **dict.fromkeys(
        ["BatchOutput", "RunResult", "RunSummary", "output_line", "progress_line"], "io.output"
    ),
    **dict.fromkeys(
        ["TraceInput", "delta_options", "iter_batches", "run", "run_to_files"], "runner"
    ),
    **dict.fromkeys(["OUTPUT_FORMATS", "OutputFormat"], "io.sinks"),
    "RunProgress": "progress",
    **dict.fromkeys(["BadRow", "TraceError"], "io.trace"),
}

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
    "RunProgress",
    "RunResult",
    "RunSummary",
    "TraceError",
    "TraceInput",
    "TraceShape",
    "UnsafeFileError",
    "UnsupportedExpression",
    "UsageError",
    "WriteError",
    "choose_engine",
    "delta_options",
    "iter_batches",
    "output_line",
    "progress_line",
    "run",
    "run_to_files",
    "scan_trace",
]


def __getattr__(name: str) -> Any:
    """A public name on first use, from its module (then kept here)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
