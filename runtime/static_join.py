"""A stream-static join (``plan.StaticJoinNode``), as Spark runs it in each micro-batch: a
batch join of that micro-batch's stream rows with the table's rows as the table is then.

It is stateless: nothing is stored, nothing is evicted, no row is dropped as late and no
watermark is read (Spark plans it as a broadcast or sort-merge join, never as
StreamingSymmetricHashJoinExec, so its query reports no state operator for it).  Both engines
run this one operator: its inputs are read as rows (a columnar engine's frame included) and
its output is rows.  The ON condition is evaluated for every (stream row, table row) pair with
the runtime's evaluator, so a pair matches exactly when the condition is TRUE (NULL never
matches), for whichever join type the planner allowed (``compiler/planning/tables.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ..compiler.planning.plan import Plan, StaticJoinNode
from .engine.batches import Batch, Rows
from .engine.eval import Layout, compile_expr
from .engine.watermark import WatermarkNode
from .errors import UsageError
from .io.trace import Trace, batch_facts, batch_tables

Row = tuple[Any, ...]


class StaticJoinObserver(Protocol):
    """What a stream-static join tells an observer (`sjoin why`): the micro-batch's stream
    rows and the table's rows it joined them with, the table rows each stream row matched
    (the ON condition TRUE), and each output row with the stream row and table row (None:
    null-padded, or a semi or anti join's lone row) it was made of."""

    def arrived(self, stream: Sequence[Row], table: Sequence[Row]) -> None: ...

    def matched(self, row: Row, matches: Sequence[Row]) -> None: ...

    def output(self, row: Row, table_row: Row | None, out: Row) -> None: ...


class StaticJoinOperator:
    """One stream-static join: ``step`` takes the stream's rows of the micro-batch and the
    table's rows (in ``StaticJoinNode.inputs`` order, left then right) and gives the joined
    rows, in stream-row order and, for each stream row, in table-row order."""

    def __init__(self, node: StaticJoinNode, ansi: bool) -> None:
        self.node = node
        left = [(c.name, c.type.name) for c in node.left.columns]
        right = [(c.name, c.type.name) for c in node.right.columns]
        layout = Layout.of(("left", left), ("right", right))
        self.condition = compile_expr(node.condition, layout, ansi=ansi)
        self.output = [compile_expr(o.expr, layout, ansi=ansi) for o in node.output]
        self.widths = (len(left), len(right))
        # what the stream side's watermark node sees: the rows that pass the filters the plan
        # puts below it
        stream = node.stream
        columns = left if stream.name == "left" else right
        one = Layout.of((stream.name, columns))
        index = {name: i for i, (name, _) in enumerate(columns)}
        self.below = [compile_expr(p, one, ansi=ansi) for p in node.filters_below_watermark]
        self.not_null = [index[n] for n in node.not_null_below_watermark]
        self.observer: StaticJoinObserver | None = None  # `sjoin why`'s (None: a normal run)

    def step(self, left: Batch, right: Batch, watermark: WatermarkNode | None) -> Batch:
        """The joined rows of one micro-batch; ``watermark``: the stream side's watermark node
        (None: none), which sees the stream rows below it."""
        rows = (left.to_rows(), right.to_rows())
        stream_at = 1 if self.node.static_side == "left" else 0
        stream, table = rows[stream_at], rows[1 - stream_at]
        if watermark is not None:
            watermark.observe(
                [
                    r
                    for r in stream
                    if all(r[i] is not None for i in self.not_null)
                    and all(f(r, None) is True for f in self.below)
                ]
            )
        kind = self.node.kind
        observer = self.observer
        if observer is not None:
            observer.arrived(stream, table)
        # a semi or anti join outputs the stream's rows only (the planner allows them with
        # the stream on the left); an outer join preserves the stream's side (likewise)
        alone = kind.output_sides == ("left",)
        out: list[Row] = []
        for s in stream:
            matches = [t for t in table if self._match(s, t, stream_at)]
            made: list[Row | None]
            if alone:
                made = [None] if bool(matches) != kind.drops_matched else []
            elif matches:
                made = list(matches)
            else:
                made = [None] if kind.preserved else []
            rows_out = [self._project(s, t, stream_at) for t in made]
            out.extend(rows_out)
            if observer is not None:
                observer.matched(s, matches)
                for t, o in zip(made, rows_out, strict=True):
                    observer.output(s, t, o)
        return Rows(out)

    def _match(self, s: Row, t: Row, stream_at: int) -> bool:
        a, b = (s, t) if stream_at == 0 else (t, s)
        return self.condition(a, b) is True

    def _project(self, s: Row, t: Row | None, stream_at: int) -> Row:
        """An output row of a stream row and a table row (None: the table's side null-padded)."""
        if t is None:
            t = (None,) * self.widths[1 - stream_at]
        a, b = (s, t) if stream_at == 0 else (t, s)
        return tuple(f(a, b) for f in self.output)


class TableVersions:
    """Each static table's rows as of a trace batch, as the job's ``spark.read`` sees them.

    A Delta table is read as of each micro-batch: a trace's lines of it in batch N (``{"batch":
    N, "table": name, "row": {...}}``) are its whole contents from that batch on, until a later
    batch gives it lines again.  A file table (parquet, json, csv, orc) is listed once, when
    the query starts (checked on Spark 4.3: a file added to its folder later is never read), so
    it has one version for the whole run: its lines must all be in one trace batch, and they
    hold from the first batch on.  Before a table's first lines (or without any) it holds the
    rows ``given`` (``--table NAME=PATH``), else none.  Worked out from the trace alone, so a
    run restored from a checkpoint at any batch sees the tables as the first run did."""

    def __init__(self, plan: Plan, trace: Trace, given: Mapping[str, Batch] | None = None) -> None:
        self.names = [t.name for t in plan.tables]
        self.trace = trace
        self.given = dict(given or {})
        self.versioned = {t.name for t in plan.tables if t.source.format == "delta"}
        for table in plan.tables:
            if table.name in self.versioned:
                continue
            # which batches give it rows, from the check pass's spans for a streamed trace
            # (not read again here); then the one batch that holds them
            found = [
                i
                for i in range(len(trace.batches))
                if batch_tables(trace.batches, i, (table.name,))
            ]
            batches = [batch_facts(trace.batches, i)[0] for i in found]
            if len(batches) > 1:
                raise UsageError(
                    f"table `{table.name}` is read from {table.source.format} files, which "
                    "Spark lists once, when the query starts: it has one version for the "
                    f"whole run, but the trace gives it rows in batches {batches[0]} and "
                    f"{batches[1]}; give all its rows in one batch, or read it from delta "
                    "(read as of each micro-batch)"
                )
            if batches and table.name in self.given:
                raise UsageError(
                    f"table `{table.name}` is read from {table.source.format} files, which "
                    "Spark lists once, when the query starts: it has one version for the "
                    f"whole run, given both by --table and in the trace's batch {batches[0]}; "
                    "give its rows once"
                )
            if batches:
                self.given[table.name] = trace.batches[found[0]].rows[table.name]
        self._index = -1
        self._current: dict[str, Batch] = dict(self.given)

    def at(self, index: int) -> dict[str, Batch]:
        """The tables' rows in trace batch ``index`` (0-based, in trace order)."""
        if not self.versioned:
            return self._current
        if index < self._index:
            self._index, self._current = -1, dict(self.given)
        for i in range(self._index + 1, index + 1):
            held = self.trace.batches[i].rows
            for name in self.versioned:
                rows = held.get(name)
                if rows is not None:
                    self._current[name] = rows
        self._index = max(self._index, index)
        return dict(self._current)
