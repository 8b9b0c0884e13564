"""sjoin's pytest plugin (registered as the `sjoin` pytest11 entry point).

For teams that keep `.sjoin` specs in their repository:

* ``sjoin_snapshot(spec)`` snapshots a spec's plan JSON and its generated PySpark job with
  syrupy (a .json and a .py file per test under ``__snapshots__``), failing on any error
  diagnostic;
* ``sjoin_run(spec, trace)`` runs a trace on the reference runtime (milliseconds, no JVM)
  and returns a ``Run`` whose ``assert_batches({batch: rows})`` checks the output batch by
  batch;
* the ``sjoin_spark`` marker also runs ``sjoin_run``'s traces on real local Spark
  (`sjoin verify`) and fails on any difference; without Java it skips with the reason.

For teams that build streaming DataFrames in code (docs/pyspark.md, "In your own tests"):

* ``sjoin_check(df, warnings_ok=True)`` checks a streaming DataFrame (Spark Connect or
  classic) with ``sjoin.check_dataframe`` and fails the test with the rendered diagnostics
  on any error (and on any warning with ``warnings_ok=False``);
* ``sjoin_plan(df)`` returns its plan JSON without source places, for a syrupy snapshot:
  ``assert sjoin_plan(df) == snapshot``.

Importing this module costs nothing: syrupy, the runtime and pyspark load on first use.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from .api import CheckResult, check_any, check_dataframe


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sjoin_spark: also run sjoin_run's traces on real local Spark (verify)"
    )


def _checked(spec: str | Path, relation: str | None = None) -> CheckResult:
    """A .sjoin spec, or a pipeline (a .sql file, a project directory), without errors."""
    result = check_any(spec, relation)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    if errors or result.plan is None:
        from .reports.diagnostics import render_plain

        text = "\n\n".join(render_plain(d, result.source) for d in errors)
        pytest.fail(f"{spec} has errors:\n{text}", pytrace=False)
    return result


@pytest.fixture
def sjoin_snapshot(snapshot: Any) -> Callable[[str | Path], None]:
    """``sjoin_snapshot(spec)``: the plan JSON and the PySpark job of ``spec`` equal their
    snapshots (create or refresh them with ``pytest --snapshot-update``)."""
    from syrupy.extensions.json import JSONSnapshotExtension
    from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

    from .compiler.backends.pyspark import compile_pyspark

    class PythonFile(SingleFileSnapshotExtension):
        _write_mode = WriteMode.TEXT
        file_extension = "py"

    def check(spec: str | Path) -> None:
        path = Path(spec)
        result = _checked(path)
        assert result.plan is not None
        plan = result.plan_json()
        for d in plan["diagnostics"]:
            d["file"] = path.name  # snapshots must not depend on where the repo lives
        assert plan == snapshot.use_extension(JSONSnapshotExtension)
        assert compile_pyspark(result.plan, path.name) == snapshot.use_extension(PythonFile)

    return check


def _failed(result: CheckResult, what: str, warnings_ok: bool) -> None:
    """Fail the test with the diagnostics that fail it (errors; warnings unless ok)."""
    failing = ("error",) if warnings_ok else ("error", "warning")
    shown = [d for d in result.diagnostics if d.severity in failing]
    if shown or result.plan is None:
        from .reports.diagnostics import render_plain

        text = "\n\n".join(render_plain(d, result.source) for d in shown)
        kinds = "errors" if warnings_ok else "errors or warnings"
        pytest.fail(f"{what} has {kinds}:\n{text}", pytrace=False)


@pytest.fixture
def sjoin_check() -> Callable[..., CheckResult]:
    """``sjoin_check(df, warnings_ok=True, name=None)``: the streaming DataFrame ``df``
    checked (``sjoin.check_dataframe``); the test fails with the rendered diagnostics on an
    error, or on a warning too with ``warnings_ok=False``.  Returns the ``CheckResult``."""

    def check(df: Any, warnings_ok: bool = True, name: str | None = None) -> CheckResult:
        __tracebackhide__ = True
        result = check_dataframe(df, name=name, warnings_ok=warnings_ok)
        _failed(result, f"the DataFrame `{_root(result, name)}`", warnings_ok)
        return result

    return check


@pytest.fixture
def sjoin_plan() -> Callable[..., dict[str, Any]]:
    """``sjoin_plan(df, name=None)``: the plan JSON of the streaming DataFrame ``df``
    (language.md §5) without source places (line, column, file: a snapshot must not change
    when the test file does), for ``assert sjoin_plan(df) == snapshot``.  The test fails
    with the rendered diagnostics when ``df`` has errors."""

    def plan(df: Any, name: str | None = None) -> dict[str, Any]:
        __tracebackhide__ = True
        result = check_dataframe(df, name=name)
        _failed(result, f"the DataFrame `{_root(result, name)}`", True)
        found = result.plan_json()
        found["diagnostics"] = [
            {k: v for k, v in d.items() if k not in _PLACES} for d in found.get("diagnostics", [])
        ]
        return found

    return plan


def _root(result: CheckResult, name: str | None) -> str:
    roots = result.plan.query_roots if result.plan is not None else ()
    return name or (roots[-1] if roots else "df")


# a diagnostic's place in the plan JSON (the only places it holds)
_PLACES = frozenset({"line", "col", "end_line", "end_col", "file"})


BatchKey = Literal["batch", "trace_batch"]


@dataclass
class Run:
    """The outcome of ``sjoin_run``: per batch, the output rows as the JSON lines of
    ``sjoin run --output`` read back with ``json.loads``: timestamps as ISO strings, DECIMAL
    as a JSON number (a float), NaN and infinities as strings."""

    spec: Path
    trace: Path | Sequence[Mapping[str, Any]]
    result: Any  # sjoin.runtime.RunResult
    plan: Any = (
        None  # sjoin.compiler.planning.plan.Plan: the column types a failure shows values by
    )

    def rows(self, relation: str | None = None) -> list[dict[str, Any]]:
        """Every output row of ``relation`` (default: of every relation), in output order."""
        return [_json_ready(row) for row in self.result.rows(relation)]

    def batches(
        self, relation: str | None = None, *, by: BatchKey = "batch"
    ) -> dict[int, list[dict[str, Any]]]:
        """Batch -> output rows of ``relation`` (batches without rows are left out).

        ``by="batch"`` keys on Spark's batch ids, which count the no-data batches too;
        ``by="trace_batch"`` on the trace's own ``batch`` values: the rows of a trace batch's
        data batch and of the no-data batches that ran after it (docs/testing.md)."""
        return {
            key: [_json_ready(row) for row in rows]
            for key, rows in self._emitted(relation, by).items()
        }

    def _emitted(self, relation: str | None, by: BatchKey) -> dict[int, list[dict[str, Any]]]:
        """``batches`` with the rows as the runtime holds them (a DECIMAL a Decimal)."""
        if by not in ("batch", "trace_batch"):
            raise ValueError(f"by must be 'batch' or 'trace_batch', not {by!r}")
        out: dict[int, list[dict[str, Any]]] = {}
        for batch in self.result.batches:
            rows = [row for rel, row in batch.rows if relation in (None, rel)]
            if rows:
                key = batch.batch if by == "batch" else batch.trace_batch
                out.setdefault(key, []).extend(rows)
        return out

    def assert_batches(
        self,
        expected: Mapping[int, Sequence[Mapping[str, Any]]],
        relation: str | None = None,
        *,
        only: bool = False,
        by: BatchKey = "batch",
    ) -> None:
        """Each batch emits exactly ``expected[batch]`` (order inside a batch ignored).

        By default every batch that emits rows must be listed (an empty list for one that
        emits none); with ``only=True`` just the listed batches are compared.  The keys are
        Spark's batch ids (``by="batch"``, as ``--output`` prints them), or the trace's own
        batch values (``by="trace_batch"``: a trace batch's rows with those of the no-data
        batches that ran after it).  Numbers are compared by value (``49.99`` equals a
        DECIMAL ``49.99``, ``1`` equals ``1.0``)."""

        __tracebackhide__ = True  # a failure shows the user's call, not this method

        def canon(rows: Sequence[Mapping[str, Any]]) -> list[str]:
            return sorted(_canonical(_json_ready(dict(r))) for r in rows)

        emitted = self._emitted(relation, by)
        got = {b: canon(rows) for b, rows in emitted.items()}
        want = {b: canon(rows) for b, rows in expected.items()}
        if only:
            got = {b: got.get(b, []) for b in want}
        else:
            want = {b: rows for b, rows in want.items() if rows}
        if got != want:  # not an `assert`: pytest would print every batch of both sides
            raise AssertionError(self._difference(expected, emitted, relation, only, by))

    def _difference(
        self,
        expected: Mapping[int, Sequence[Mapping[str, Any]]],
        emitted: dict[int, list[dict[str, Any]]],
        relation: str | None,
        only: bool,
        by: BatchKey,
    ) -> str:
        """The batches whose rows differ, and in each only the rows that differ (those
        expected and not emitted, those emitted and not expected), each value as its column's
        type says (a BIGINT ``101``, not ``101.0``) and as `sjoin run` writes it."""
        from collections import Counter

        from .runtime.engine.values import dumps

        types = self._column_types(relation)
        label = by.replace("_", " ")  # "batch", "trace batch"
        keys = sorted(set(expected) | (set() if only else set(emitted)))
        lines = []
        for key in keys:
            want_rows = [_typed(dict(r), types) for r in expected.get(key, [])]
            got_rows = emitted.get(key, [])
            missing = Counter(_canonical(_json_ready(r)) for r in want_rows)
            extra = Counter(_canonical(_json_ready(r)) for r in got_rows)
            missing, extra = missing - extra, extra - missing
            if not missing and not extra:
                continue
            head = f"  {label} {key}:"
            if key not in expected:
                head += f" not listed, emitted {_count(len(got_rows), 'row')}"
            lines.append(head)
            for what, rows, left in (
                ("expected, not emitted", want_rows, missing),
                ("emitted, not expected", got_rows, extra),
            ):
                shown = []
                for row in rows:
                    canonical = _canonical(_json_ready(row))
                    if left[canonical]:
                        left[canonical] -= 1
                        shown.append(f"      {dumps(row)}")
                if shown:
                    lines.append(f"    {what} ({_count(len(shown), 'row')}):")
                    lines.extend(shown)
        names = [relation] if relation is not None else list(self.result.relations)
        where = f" of `{names[0]}`" if len(names) == 1 else ""
        listed = "" if only else f" (every {label} that emits rows is to be listed, or only=True)"
        differing = _count(sum(line.startswith(f"  {label} ") for line in lines), label)
        return f"the rows{where} differ in {differing}{listed}:\n" + "\n".join(lines)

    def _column_types(self, relation: str | None) -> dict[str, Any]:
        """Column -> SqlType of the relation compared (of the run's one output relation when
        none is named); empty when unknown."""
        names = [relation] if relation is not None else list(self.result.relations)
        node = self.plan.node(names[0]) if self.plan is not None and len(names) == 1 else None
        if node is None:
            return {}
        columns = node.columns if hasattr(node, "columns") else node.output
        return {c.name: c.type for c in columns}

    def progress(self) -> list[dict[str, Any]]:
        return [b.progress for b in self.result.batches]


def _count(n: int, noun: str) -> str:
    from .reports.diagnostics import count

    return count(n, noun)


_INTEGERS = ("tinyint", "smallint", "int", "bigint")


def _typed(row: dict[str, Any], types: Mapping[str, Any]) -> dict[str, Any]:
    """An expected row with each number as its column's type holds it (``types``: column ->
    SqlType): an integral number of an integer column as an int (``101``, not ``101.0``), a
    DOUBLE's as a float, a DECIMAL(p, s)'s as its digits at scale s (``49.90``); anything
    else as written."""
    import contextlib
    import math
    from decimal import Decimal

    out = dict(row)
    for name, value in row.items():
        kind = types.get(name)
        if kind is None or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if not math.isfinite(value):
            continue
        if kind.name in _INTEGERS and float(value).is_integer():
            out[name] = int(value)
        elif kind.name in ("double", "float"):
            out[name] = float(value)
        elif kind.name == "decimal" and len(kind.params) == 2:
            with contextlib.suppress(ArithmeticError):  # more digits than a context holds
                out[name] = Decimal(str(value)).quantize(Decimal(1).scaleb(-kind.params[1]))
    return out


def _json_ready(row: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` as its output JSON line reads back."""
    from .runtime.engine.values import dumps

    return dict(json.loads(dumps(dict(row))))


def _canonical(row: Mapping[str, Any]) -> str:
    """Key-sorted JSON in which every number is written as a float: equal values, equal
    text."""

    def norm(value: Any) -> Any:
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, dict):
            return {k: norm(v) for k, v in value.items()}
        if isinstance(value, list):
            return [norm(v) for v in value]
        return value

    return json.dumps(norm(dict(row)), sort_keys=True)


@pytest.fixture
def sjoin_run(request: pytest.FixtureRequest) -> Callable[..., Run]:
    """``sjoin_run(spec, trace, relation=None)`` -> ``Run`` on the reference runtime; under
    the ``sjoin_spark`` marker the same trace is also verified on real Spark."""

    def run(
        spec: str | Path,
        trace: str | Path | Sequence[Mapping[str, Any]],
        relation: str | None = None,
    ) -> Run:
        from .runtime import run as run_plan

        path = Path(spec)
        result = _checked(path, relation)
        assert result.plan is not None
        trace_in = Path(trace) if isinstance(trace, (str, Path)) else list(trace)
        outcome = Run(
            path, trace_in, run_plan(result.plan, trace_in, relation=relation), result.plan
        )
        if request.node.get_closest_marker("sjoin_spark") is not None:
            _verify_on_spark(result, trace_in, relation)
        return outcome

    return run


def _verify_on_spark(result: CheckResult, trace: Any, relation: str | None) -> None:
    assert result.plan is not None
    try:
        from .jvm.verify import verify_spec
    except ImportError as err:  # pragma: no cover - verify ships with sjoin
        pytest.skip(f"sjoin verify is unavailable: {err}")
    from .jvm.spark_driver import SparkUnavailable

    try:
        report = verify_spec(result, trace, relation=relation)
    except SparkUnavailable as err:
        pytest.skip(str(err))
    assert report.agree, report.text()
