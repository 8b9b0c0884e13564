"""What `sjoin why` tells: the life of one trace row, batch by batch, and why two rows did or
did not join ([docs/why.md](../docs/why.md)).

The trace is run on the observed reference engine (``runtime/observe/lineage.py``: the engine's own
decisions, recorded), and ``Teller`` tells what it recorded in words: ``life`` and ``pair``
give JSON-ready dicts, each event with its sentence.  The planner's decisions (filters,
state rules, thresholds) are read from the plan and the recorded operators, never worked out
again here.  Finding the row a command line names, and printing the dicts, are the
command's (``cli/why_row.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import singledispatch
from typing import Any

from sqlglot import exp

from ..compiler.describe.explain import predicate_text
from ..compiler.planning.plan import (
    AggregateNode,
    AggregateWhere,
    DedupNode,
    JoinNode,
    Plan,
    PlanNode,
    Side,
    StaticJoinNode,
    StreamNode,
    TableNode,
    UnionNode,
    ViewNode,
)
from ..compiler.vocabulary.expr import conjuncts
from ..compiler.vocabulary.sql import written_sql
from ..compiler.vocabulary.types import format_ms
from ..runtime.engine.values import dumps, format_timestamp, format_watermark, json_converter
from ..runtime.observe.lineage import Event, Lineage, Output

Row = tuple[Any, ...]


class Teller:
    """Tells what ``log`` recorded, in words and as JSON-ready dicts."""

    def __init__(self, plan: Plan, log: Lineage) -> None:
        self.plan = plan
        self.log = log
        self.by_pair: dict[tuple[str, int, str, int, int], Output] = {}
        for out in log.outputs:
            self.by_pair[(out.query, out.batch, out.relation, id(out.left), id(out.right))] = out
        self.multiple = len({q for q, _ in log.trace_batch}) > 1

    # ---------------------------------------------------------------- values

    def values(self, relation: str, row: Row) -> dict[str, Any]:
        cells = {}
        for (name, kind), value in zip(self.plan.columns_of(relation), row, strict=False):
            convert = json_converter(kind)
            cells[name] = value if value is None or convert is None else convert(value)
        return cells

    def describe(self, row: Row) -> dict[str, Any]:
        """Where a row comes from: its trace line, or the operator output it is."""
        log = self.log
        line = log.origin.get(id(row))
        base = log.alias.get(id(row))
        if line is None and base is not None:
            return self.describe(base)
        if line is not None:
            batch, stream, _ = log.rows_at[line]
            return {"line": line, "stream": stream, "trace_batch": batch}
        out = log.output_of.get(id(row))
        if out is None:  # pragma: no cover - every row an operator sees is one of these
            return {"line": None}
        return {
            "line": None,
            "output_of": out.relation,
            "batch": out.batch,
            "lines": sorted(set(log.lines_of(row))),
        }

    def who(self, row: Row) -> str:
        d = self.describe(row)
        if d.get("line") is not None:
            return f"line {d['line']} ({d['stream']})"
        lines = ", ".join(str(n) for n in d.get("lines", []))
        return (
            f"the output row of `{d.get('output_of')}` from batch {d.get('batch')} (lines {lines})"
        )

    def batch_words(self, query: str, batch: int) -> str:
        tb = self.log.trace_batch.get((query, batch))
        data = self.log.data.get((query, batch), True)
        where = f"trace batch {tb}" + ("" if data else ", a no-data batch")
        prefix = f"query {query}, " if self.multiple else ""
        return f"{prefix}batch {batch} ({where})"

    def output_json(self, out: Output) -> dict[str, Any]:
        found: dict[str, Any] = {
            "relation": out.relation,
            "batch": out.batch,
            "trace_batch": self.log.trace_batch.get((out.query, out.batch)),
            "row": self.values(out.relation, out.row),
            "lines": sorted(set(self.log.lines_of(out.row))),
        }
        if self.multiple:
            found["query"] = out.query
        return found

    # ---------------------------------------------------------------- one row's life

    def life(self, line: int) -> dict[str, Any]:
        log = self.log
        trace_batch, stream, row = log.rows_at[line]
        sections = []
        for current in log.descendants(row):
            events = log.events_of(current)
            keys: list[tuple[str, str, int]] = []
            for e in events:
                if (e.query, e.relation, e.input) not in keys:
                    keys.append((e.query, e.relation, e.input))
            for query, relation, side in keys:
                mine = [
                    e for e in events if (e.query, e.relation, e.input) == (query, relation, side)
                ]
                sections.append(self._section(current, query, relation, side, mine))
        # every output that is one of them: made by an operator, or passed on (a union's,
        # a dedup's), in the order they came out
        outputs = [self.output_json(o) for o in log.outputs_of(log.descendants(row))]
        found: dict[str, Any] = {
            "line": line,
            "stream": stream,
            "trace_batch": trace_batch,
            "values": self.values(stream, row),
        }
        if isinstance(self.plan.node(stream), TableNode):
            found["table"] = True  # a static table's row (the stream-static joins read it)
        return {
            "row": found,
            "operators": sections,
            "outputs": outputs,
        }

    def _section(
        self, row: Row, query: str, relation: str, side: int, events: list[Event]
    ) -> dict[str, Any]:
        node = self.plan.for_query(query).node(relation)  # as that query runs it
        assert node is not None, relation
        input_name, told = _told(node, self, row, query, side, events)
        section: dict[str, Any] = {
            "relation": relation,
            "input": input_name,
            "row": self.describe(row),
            "events": told,
        }
        copy_of = self.plan.copies.get(relation)  # a later read of it in one query
        if copy_of is not None:
            section["copy_of"] = copy_of
        if self.multiple:
            section["query"] = query
        return section

    def _arrived(self, e: Event, words: str) -> dict[str, Any]:
        """An arrival, with the watermark the batch ran with."""
        info = self.log.batches.get((e.query, e.batch, e.relation))
        wm = None if info is None else info.watermark_ms
        return self._event(
            e,
            "arrived",
            f"{words}; "
            + (f"the watermark was {format_watermark(wm)}" if wm is not None else "no watermark"),
            watermark=None if wm is None else format_watermark(wm),
        )

    def _late(self, e: Event, note: str) -> dict[str, Any]:
        t, w = e.detail["time_us"], e.detail["watermark_ms"]
        return self._event(
            e,
            "late",
            f"dropped as late by the late-events watermark {format_watermark(w)}{note}: "
            f"its event time {format_timestamp(t)} is at or below it",
            event_time=format_timestamp(t),
            watermark=format_watermark(w),
        )

    # ---------------------------------------------------------------- a dedup

    def _passed(self, row: Row, e: Event) -> dict[str, Any] | None:
        """The output a union or a dedup passed ``row`` on as, in ``e``'s batch."""
        out = next(
            (
                o
                for o in self.log.outputs
                if o.passed
                and o.row is row
                and (o.query, o.batch, o.relation) == (e.query, e.batch, e.relation)
            ),
            None,
        )
        return None if out is None else self.output_json(out)

    def _dedup_events(self, row: Row, node: DedupNode, events: list[Event]) -> list[dict[str, Any]]:
        keys = ", ".join(node.keys)
        within = " within the watermark" if node.within_watermark else ""
        told: list[dict[str, Any]] = []
        for e in events:
            if e.kind == "arrived":
                told.append(
                    self._arrived(e, f"reached the dedup `{node.name}` ON ({keys}){within}")
                )
            elif e.kind == "late":
                told.append(self._late(e, ", before the dedup reads its key"))
            elif e.kind in ("kept", "duplicate", "suppressed", "evicted"):
                key = self._key(node, e.detail["key"])
                words = _group_words(key)
                if e.kind == "kept":
                    text = (
                        f"passed: no row with key {words} was in state, so it is the first "
                        f"and its key is stored ({self._dedup_rule(node)})"
                    )
                    told.append(self._event(e, "kept", text, key=key, output=self._passed(row, e)))
                elif e.kind == "duplicate":
                    other = e.detail["other"]
                    arrived = self._arrival(other, node.name, e.query)
                    text = (
                        f"dropped as a duplicate: key {words} is in state, put there by "
                        f"{self.who(other)}"
                        + (f", which arrived in batch {arrived}" if arrived is not None else "")
                    )
                    told.append(
                        self._event(
                            e,
                            "duplicate",
                            text,
                            key=key,
                            other={**self.describe(other), "batch": arrived},
                        )
                    )
                elif e.kind == "suppressed":
                    other = e.detail["other"]
                    text = f"its key {words} dropped {self.who(other)} as a duplicate"
                    told.append(
                        self._event(e, "suppressed", text, key=key, other=self.describe(other))
                    )
                else:
                    evict = e.detail["evict_ms"]
                    when = e.detail["time_us"]
                    what = (
                        "its expiry"
                        if node.state.eviction == "expiry"
                        else f"its {node.state.column}"
                    )
                    text = (
                        f"its key {words} was evicted from state: {what} "
                        f"{'?' if when is None else format_timestamp(when)} is at or below the "
                        f"eviction watermark {format_watermark(evict)}; a later row with this "
                        "key passes again"
                    )
                    told.append(
                        self._event(
                            e,
                            "evicted",
                            text,
                            key=key,
                            rule=node.state.eviction,
                            watermark=format_watermark(evict),
                            threshold=None if when is None else format_timestamp(when),
                        )
                    )
        kept = [e for e in events if e.kind == "kept"]
        if kept and not any(e.kind == "evicted" and e.batch >= kept[-1].batch for e in events):
            key = self._key(node, kept[-1].detail["key"])
            told.append(
                {
                    "batch": None,
                    "trace_batch": None,
                    "what": "in_state",
                    "text": f"its key {_group_words(key)} is still in state at the end of the "
                    "trace"
                    + (
                        f" (never evicted: {node.state.reason})"
                        if node.state.eviction == "never"
                        else ""
                    ),
                }
            )
        return told

    def _dedup_rule(self, node: DedupNode) -> str:
        st = node.state
        if st.eviction == "never":
            return f"never evicted: {st.reason}"
        if st.eviction == "expiry":
            return (
                f"it expires {format_ms(st.offset_ms or 0)} after its `{st.column}`, and is "
                "evicted when the eviction watermark reaches that"
            )
        return f"evicted when its `{st.column}` is at or below the eviction watermark"

    def _key(self, node: DedupNode, values: tuple[Any, ...]) -> dict[str, Any]:
        """A dedup key as its columns' values, JSON-ready."""
        kinds = dict(self.plan.columns_of(node.name))
        cells: dict[str, Any] = {}
        for name, v in zip(node.keys, values, strict=True):
            convert = json_converter(kinds.get(name, ""))
            cells[name] = v if v is None or convert is None else convert(v)
        return cells

    def _arrival(self, row: Row, relation: str, query: str) -> int | None:
        return next(
            (
                x.batch
                for x in self.log.events_of(row)
                if x.kind == "arrived" and x.relation == relation and x.query == query
            ),
            None,
        )

    # ---------------------------------------------------------------- a stream-static join

    def _static_events(
        self, row: Row, node: StaticJoinNode, side: int, events: list[Event]
    ) -> list[dict[str, Any]]:
        log = self.log
        stream = node.stream
        table = node.table
        is_stream = stream.name == ("left", "right")[side]
        told: list[dict[str, Any]] = []
        for e in events:
            if e.kind == "arrived":
                rows = log.tables.get((e.query, e.batch, node.name), [])
                told.append(
                    self._arrived(
                        e,
                        f"reached the stream-static join `{node.name}` on its stream side "
                        f"(`{stream.alias}`), joined with table `{table.relation}` as it is in "
                        f"this micro-batch ({self._version(rows)}); nothing is stored",
                    )
                )
            elif e.kind == "matched" and is_stream:
                others = e.detail["others"]
                if not others:
                    text = (
                        f"matched no row of table `{table.relation}`: the ON condition is not "
                        "true for any of its rows then"
                    )
                else:
                    text = (
                        f"matched {_rows(len(others))} of table `{table.relation}`: "
                        + ", ".join(self._table_row(t) for t in others)
                    )
                if others and node.kind.drops_matched:
                    text += "; an anti join drops a stream row that matched"
                elif not others and not node.kind.preserved:
                    text += "; so it comes out in no row (the join preserves no stream row)"
                told.append(
                    self._event(
                        e,
                        "matched",
                        text,
                        others=[self.describe(t) for t in others],
                    )
                )
            elif e.kind == "matched":
                (other,) = e.detail["others"]
                told.append(
                    self._event(
                        e,
                        "matched",
                        f"a row of table `{table.relation}` matched stream row {self.who(other)}",
                        other=self.describe(other),
                    )
                )
        if is_stream:
            for out in log.outputs:
                if out.relation != node.name or out.passed:
                    continue
                mine = out.left if side == 0 else out.right
                theirs = out.right if side == 0 else out.left
                if mine is row:
                    if theirs is None:
                        what = (
                            "came out null-padded: no table row matched"
                            if node.kind.preserved and node.kind.output_sides != ("left",)
                            else "came out alone: an anti join emits a stream row that "
                            "matched no table row"
                            if node.kind.drops_matched
                            else "came out alone: a semi join emits a stream row that matched "
                            "a table row"
                        )
                    else:
                        what = f"came out joined with {self._table_row(theirs)}"
                    told.append(
                        self._event(
                            Event("out", out.query, out.batch, node.name, side),
                            "null_padded" if "null-padded" in what else "emitted",
                            what,
                            output=self.output_json(out),
                        )
                    )
        told.sort(key=lambda d: d["batch"])
        return told

    def _version(self, rows: list[Row]) -> str:
        """Which version of a table a micro-batch joined: the trace batch its rows came in."""
        if not rows:
            return "it has no rows then"
        batches = sorted(
            {self.log.rows_at[n][0] for r in rows if (n := self.log.origin.get(id(r))) is not None}
        )
        if not batches:
            return _rows(len(rows))
        return f"{_rows(len(rows))}, the version of trace batch " + ", ".join(
            str(b) for b in batches
        )

    def _table_row(self, row: Row) -> str:
        line = self.log.origin.get(id(row))
        if line is None:
            return "a table row"
        batch, _, _ = self.log.rows_at[line]
        return f"line {line} (the version of trace batch {batch})"

    # ---------------------------------------------------------------- a view, a union

    def _view_events(
        self, row: Row, query: str, node: ViewNode, events: list[Event]
    ) -> list[dict[str, Any]]:
        told: list[dict[str, Any]] = []
        for e in events:
            if e.kind == "arrived":
                told.append(self._arrived(e, f"reached the view `{node.name}`"))
            elif e.kind == "filtered":
                below = e.detail["stage"] == "below"
                parts = (
                    [written_sql(f) for f in node.filters_below_watermark]
                    + [f"{n} IS NOT NULL" for n in node.not_null_below_watermark]
                    if below
                    else [written_sql(f) for f in node.filters_above_watermark]
                )
                conjunct = parts[e.detail["index"]]
                inferred = below and e.detail["index"] >= len(node.filters_below_watermark)
                text = (
                    f"dropped by the view's WHERE: `{conjunct}` is not true"
                    + (" (a filter Spark infers from the WHERE)" if inferred else "")
                    + "; it runs "
                    + (
                        "below the watermark node, so the watermark never saw the row"
                        if below
                        else "above the watermark node (it reads the watermarked column or is "
                        "not deterministic), so the watermark saw the row"
                    )
                )
                told.append(
                    self._event(
                        e,
                        "filtered",
                        text,
                        filter=conjunct,
                        stage="below_watermark" if below else "above_watermark",
                    )
                )
        made = [
            o
            for o in self.log.outputs
            if o.relation == node.name and o.left is row and not o.passed and o.query == query
        ]
        for out in made:
            told.append(
                self._event(
                    Event("out", out.query, out.batch, node.name, 0),
                    "projected",
                    "passed the view's WHERE and came out as "
                    + dumps(self.values(node.name, out.row)),
                    output=self.output_json(out),
                )
            )
        told.sort(key=lambda d: d["batch"])
        return told

    def _union_events(
        self, row: Row, node: UnionNode, side: int, events: list[Event]
    ) -> list[dict[str, Any]]:
        return [
            self._event(
                e,
                "arrived",
                f"came into the union `{node.name}` through input {side} "
                f"(`{node.relations[side]}`), and out of it as it is",
                input=side,
                output=self._passed(row, e),
            )
            for e in events
            if e.kind == "arrived"
        ]

    def _event(self, e: Event, what: str, text: str, **more: Any) -> dict[str, Any]:
        found: dict[str, Any] = {
            "batch": e.batch,
            "trace_batch": self.log.trace_batch.get((e.query, e.batch)),
            "what": what,
        }
        found.update(more)
        found["text"] = f"{self.batch_words(e.query, e.batch)}: {text}"
        return found

    def _join_events(
        self, row: Row, query: str, node: JoinNode, side: int, events: list[Event]
    ) -> list[dict[str, Any]]:
        log = self.log
        s: Side = node.left if side == 0 else node.right
        other_side = node.right if side == 0 else node.left
        told: list[dict[str, Any]] = []
        stored_batch: dict[int, bool] = {}
        for e in events:
            if e.kind == "stored":
                stored_batch[e.batch] = True
        arrival: Event | None = None
        for e in events:
            info = log.batches.get((e.query, e.batch, node.name))
            if e.kind == "arrived":
                arrival = e
                wm = None if info is None or info.watermark_ms is None else info.watermark_ms
                told.append(
                    self._event(
                        e,
                        "arrived",
                        f"arrived on the {s.name} side (`{s.alias}`) of `{node.name}`; "
                        + (
                            f"the watermark was {format_watermark(wm)}"
                            if wm is not None
                            else "no watermark"
                        ),
                        watermark=None if wm is None else format_watermark(wm),
                    )
                )
            elif e.kind == "filtered":
                told.append(self._filtered(e, s, node))
            elif e.kind == "where":
                told.append(self._where(e, node))
            elif e.kind == "late":
                t = e.detail["time_us"]
                w = e.detail["watermark_ms"]
                told.append(
                    self._event(
                        e,
                        "late",
                        f"dropped as late by the late-events watermark {format_watermark(w)}: "
                        f"its event time {format_timestamp(t)} is at or below it",
                        event_time=format_timestamp(t),
                        watermark=format_watermark(w),
                    )
                )
            elif e.kind == "pre":
                sql = written_sql(s.pre_join_filter) if s.pre_join_filter is not None else ""
                passed = e.detail["passed"]
                text = f"its pre-join filter `{sql}` is " + ("true" if passed else "not true")
                if not passed:
                    text += (
                        ": it joins nothing and comes out null-padded at once"
                        if s.preserved
                        else ": it joins nothing and is not stored"
                    )
                    told.append(self._event(e, "pre_join_filter", text, filter=sql, passed=passed))
            elif e.kind == "stored":
                told.append(self._stored(e, s))
            elif e.kind == "matched":
                other = e.detail["other"]
                pair = (other, row) if side == 1 else (row, other)
                out = self.by_pair.get((e.query, e.batch, node.name, id(pair[0]), id(pair[1])))
                other_arrival = next(
                    (
                        x.batch
                        for x in log.events_of(other)
                        if x.kind == "arrived" and x.relation == node.name and x.query == e.query
                    ),
                    None,
                )
                text = f"matched {other_side.name} row {self.who(other)}"
                if other_arrival is not None:
                    text += f" (arrived in batch {other_arrival})"
                if node.kind.drops_matched:
                    text += "; a left anti join drops a matched row"
                elif out is None and node.executed_as == "left_semi":
                    text += "; a left semi join emits each left row once"
                told.append(
                    self._event(
                        e,
                        "matched",
                        text,
                        other={**self.describe(other), "batch": other_arrival},
                        output=None if out is None else self.output_json(out),
                    )
                )
            elif e.kind == "evicted":
                told.append(self._evicted(e, s, node))
            elif e.kind == "removed":
                told.append(
                    self._event(
                        e,
                        "removed",
                        "removed from state at once: a left semi join emits a matched left "
                        "row once and keeps it no longer",
                    )
                )
        # emitted alone: null-padded (outer), or a semi/anti row
        for out in log.outputs:
            if out.relation != node.name or out.query != query:
                continue
            mine = out.left if side == 0 else out.right
            theirs = out.right if side == 0 else out.left
            if mine is row and theirs is None:
                told.append(self._alone(out, row, node, s, events))
        told.sort(key=lambda d: d["batch"])
        # not stored although it reached the join: the append rule or a semi join
        if arrival is not None and not any(
            e.kind in ("stored", "filtered", "late") or (e.kind == "pre" and not e.detail["passed"])
            for e in events
        ):
            told.append(self._skipped(arrival, s, node, events))
        elif (
            arrival is not None
            and any(e.kind == "stored" for e in events)
            and not any(e.kind in ("evicted", "removed") for e in events)
        ):
            told.append(
                {
                    "batch": None,
                    "trace_batch": None,
                    "what": "in_state",
                    "text": "still in state at the end of the trace"
                    + (
                        f" (never evicted: {s.state.reason})" if s.state.eviction == "never" else ""
                    ),
                }
            )
        return told

    def _filtered(self, e: Event, s: Side, node: JoinNode | None = None) -> dict[str, Any]:
        stage = e.detail["stage"]
        if stage == "window":
            times = ", ".join(f"`{w.time_column}`" for w in s.windows)
            return self._event(
                e,
                "filtered",
                f"dropped before the join: its window's time {times} is NULL, so it has no "
                "window (Spark's TimeWindowing keeps only rows with a time; it never joins)",
                filter=[f"{w.time_column} IS NOT NULL" for w in s.windows],
                stage="window",
            )
        below = stage == "below"
        if below:
            conj = [written_sql(f) for f in s.filters_below_watermark]
            exprs = list(s.filters_below_watermark)
            conj += [f"{n} IS NOT NULL" for n in s.not_null_below_watermark]
        else:
            conj = [written_sql(f) for f in s.filters_above_watermark]
            exprs = list(s.filters_above_watermark)
            conj += [f"{n} IS NOT NULL" for n in s.not_null_above_watermark]
        index = e.detail.get("index", 0)
        part = conj[index] if index < len(conj) else "its side's filter"
        where = ""
        if index < len(exprs) and node is not None:
            written = {written_sql(p) for _, p in node.where_pushed}
            if node.where is not None:
                written |= {written_sql(c) for c in conjuncts(node.where)}
            if part in written:
                where = ", a conjunct of the join's WHERE pushed into this side,"
        elif index >= len(exprs):
            where = ", a filter Spark infers from the condition,"
        text = (
            f"dropped before the join: the filter `{part}`{where} is not true; it runs "
            + (
                "below the watermark node, so the watermark never saw the row"
                if below
                else "above the watermark node (it reads the watermarked column or is not "
                "deterministic), so the watermark saw the row"
            )
            + " (it never reaches the join, so it never joins)"
        )
        return self._event(
            e,
            "filtered",
            text,
            filter=[part],
            stage="below_watermark" if below else "above_watermark",
        )

    def _where(self, e: Event, node: JoinNode) -> dict[str, Any]:
        """A pair the WHERE's Filter above the join dropped (its output row never came)."""
        parts = [] if node.where_filter is None else conjuncts(node.where_filter)
        index = e.detail["index"]
        part = written_sql(parts[index]) if index < len(parts) else ""
        other = e.detail["other"]
        with_ = "null-padded" if other is None else f"with {self.who(other)}"
        return self._event(
            e,
            "where",
            f"its output row ({with_}) was dropped by the join's WHERE: `{part}` is not true "
            "(a Filter Spark keeps above the join)",
            filter=part,
            other=None if other is None else self.describe(other),
        )

    def _rule_words(self, s: Side) -> str:
        if s.state.eviction == "never":
            return f"never evicted: {s.state.reason}"
        return f"evicted by the {s.state.eviction} watermark when `{predicate_text(s)}`"

    def _stored(self, e: Event, s: Side) -> dict[str, Any]:
        text = f"stored in the {s.name} state ({self._rule_words(s)})"
        return self._event(e, "stored", text, rule=s.state.eviction, predicate=predicate_text(s))

    def _evicted(self, e: Event, s: Side, node: JoinNode) -> dict[str, Any]:
        info = self.log.batches.get((e.query, e.batch, node.name))
        evict = None if info is None else info.evict_ms
        threshold = format_timestamp(e.detail["threshold_us"])
        text = (
            f"evicted from the {s.name} state by the {s.state.eviction} watermark: "
            f"`{predicate_text(s)}` with the eviction watermark "
            f"{format_watermark(evict) if evict is not None else '?'}, so every row at or "
            f"below {threshold} goes"
        )
        if e.detail["matched"]:
            text += " (it had matched)"
        return self._event(
            e,
            "evicted",
            text,
            rule=s.state.eviction,
            predicate=predicate_text(s),
            watermark=None if evict is None else format_watermark(evict),
            threshold=threshold,
            matched=e.detail["matched"],
        )

    def _alone(
        self, out: Output, row: Row, node: JoinNode, s: Side, events: list[Event]
    ) -> dict[str, Any]:
        e = Event("out", out.query, out.batch, node.name, 0)
        if node.executed_as == "left_semi":
            text = "came out (a left semi join emits a left row that has a match)"
            what = "emitted"
        else:
            evicted = any(x.kind == "evicted" and x.batch == out.batch for x in events)
            failed = any(x.kind == "pre" and not x.detail["passed"] for x in events)
            if node.kind.drops_matched:
                what = "emitted"
                text = "came out: evicted without a match, as a left anti join emits it"
            else:
                what = "null_padded"
                text = "came out null-padded"
            if failed:
                text += ", at once: its pre-join filter is not true"
            elif evicted:
                text += (
                    ", now: it was evicted without a match, the eviction watermark having "
                    f"passed it (`{predicate_text(s)}`): no later row can match it"
                )
        return self._event(e, what, text, output=self.output_json(out))

    def _skipped(
        self, arrival: Event, s: Side, node: JoinNode, events: list[Event]
    ) -> dict[str, Any]:
        info = self.log.batches.get((arrival.query, arrival.batch, node.name))
        matched = any(x.kind == "matched" for x in events)
        if node.executed_as == "left_semi" and s.name == "left" and matched:
            text = "not stored: a left semi join emits a matched left row at once"
        else:
            threshold = None if info is None else info.thresholds_us[0 if s.name == "left" else 1]
            at = "" if threshold is None else f" (state threshold {format_timestamp(threshold)})"
            text = (
                "not stored: this batch's eviction removes it at once" + at + ", so Spark's "
                "append rule leaves it out of state (SPARK-49829)"
            )
        return self._event(arrival, "not_stored", text)

    def _aggregate_events(
        self, row: Row, query: str, node: AggregateNode, events: list[Event]
    ) -> list[dict[str, Any]]:
        told = []
        for e in events:
            info = self.log.batches.get((e.query, e.batch, node.name))
            if e.kind == "arrived":
                wm = None if info is None else info.watermark_ms
                told.append(
                    self._event(
                        e,
                        "arrived",
                        f"reached the aggregate `{node.name}`; "
                        + (
                            f"the watermark was {format_watermark(wm)}"
                            if wm is not None
                            else "no watermark"
                        ),
                    )
                )
            elif e.kind == "filtered" and node.where is not None:
                told.append(_where_event(self._event, e, node.where))
            elif e.kind == "late":
                group = self._group(node, e.detail["group"])
                words = _group_words(group)
                told.append(
                    self._event(
                        e,
                        "late",
                        f"dropped as late for group {words}: its time "
                        f"{format_timestamp(e.detail['time_us'])} is at or below the "
                        f"late-events watermark {format_watermark(e.detail['watermark_ms'])}",
                        group=group,
                    )
                )
            elif e.kind == "grouped":
                key = e.detail["group"]
                group = self._group(node, key)
                outs = [
                    o
                    for o in self.log.outputs
                    if o.relation == node.name
                    and o.query == e.query
                    and o.group == key
                    and o.batch >= e.batch
                ]
                text = f"folded into group {_group_words(group)}"
                text += (
                    "; the group came out in batch " + ", ".join(str(o.batch) for o in outs)
                    if outs
                    else "; the group has not come out"
                )
                told.append(
                    self._event(
                        e,
                        "grouped",
                        text,
                        group=group,
                        outputs=[self.output_json(o) for o in outs],
                    )
                )
        return told

    def _group(self, node: AggregateNode, key: tuple[Any, ...]) -> dict[str, Any]:
        """A group as its keys' values, JSON-ready, each named by the output column that
        is that key (else by the key's SQL)."""
        cells: dict[str, Any] = {}
        for expr, kind, v in zip(node.group_by, node.key_types, key, strict=True):
            name = next((c.name for c in node.output if c.expr == expr), None)
            if name is None or name in cells:
                name = written_sql(expr)
            convert = json_converter(kind.name)
            cells[name] = v if v is None or convert is None else convert(v)
        return cells

    # ---------------------------------------------------------------- two rows

    def pair(self, line: int, other_line: int) -> dict[str, Any]:
        log = self.log
        a = log.rows_at[line][2]
        b = log.rows_at[other_line][2]
        meets = []
        for da in log.descendants(a):
            for ea in log.events_of(da):
                if ea.kind != "arrived" or not isinstance(self.plan.node(ea.relation), JoinNode):
                    continue
                for db in log.descendants(b):
                    for eb in log.events_of(db):
                        if (
                            eb.kind == "arrived"
                            and eb.relation == ea.relation
                            and eb.query == ea.query
                            and eb.input != ea.input
                        ):
                            meets.append((ea, da, eb, db))
        verdict: dict[str, Any] = {"rows": [line, other_line]}
        if not meets:
            for r, n in ((a, line), (b, other_line)):
                before = self._dropped_before(r)
                if before is not None:
                    relation, words = before
                    verdict.update(
                        joined=False,
                        relation=relation,
                        reason="dropped_before",
                        text=f"line {n} never reaches a join: in `{relation}`, {words}",
                    )
                    return verdict
            verdict.update(
                joined=False,
                reason="never_meet",
                text=f"line {line} and line {other_line} never meet: no join reads a row of "
                "one on one side and a row of the other on the other",
            )
            return verdict
        for ea, da, _, db in meets:
            for e in log.events_of(da):
                if e.kind == "matched" and e.detail["other"] is db and e.relation == ea.relation:
                    pair = (da, db) if ea.input == 0 else (db, da)
                    out = self.by_pair.get((e.query, e.batch, e.relation, id(pair[0]), id(pair[1])))
                    verdict.update(
                        joined=True,
                        relation=e.relation,
                        batch=e.batch,
                        output=None if out is None else self.output_json(out),
                        text=f"they joined in `{e.relation}`, {self.batch_words(e.query, e.batch)}"
                        + (
                            ""
                            if out is not None
                            else " (no output row: "
                            + (
                                "a left anti join drops matched rows)"
                                if self._node(e.relation).kind.drops_matched
                                else "a left semi join emits the left row once)"
                            )
                        ),
                    )
                    return verdict
        ea, da, eb, db = meets[0]
        reason, text = self._why_not(ea, da, eb, db, line, other_line)
        verdict.update(joined=False, relation=ea.relation, reason=reason, text=text)
        return verdict

    def _dropped_before(self, row: Row) -> tuple[str, str] | None:
        """Where a row (or a row made of it) was dropped before any join: a dedup dropped
        it as a duplicate or as late, or a view's WHERE dropped it (the relation, and the
        words of its life)."""
        for current in self.log.descendants(row):
            for e in self.log.events_of(current):
                node = self.plan.node(e.relation)
                assert node is not None, e.relation
                told = _dropped(node, self, current, e)
                if told is None:
                    continue
                return node.name, told[0]["text"].split(": ", 1)[1]
        return None

    def _node(self, name: str) -> JoinNode:
        node = self.plan.node(name)
        assert isinstance(node, JoinNode)
        return node

    def _why_not(
        self, ea: Event, da: Row, eb: Event, db: Row, line: int, other_line: int
    ) -> tuple[str, str]:
        node = self._node(ea.relation)
        op = self.log.operators[(ea.query, node.name)]
        left, right = (da, db) if ea.input == 0 else (db, da)
        left_line, right_line = (line, other_line) if ea.input == 0 else (other_line, line)
        # the operator's view of each row: with its windows, when it got that far
        lw = self.log.windowed.get(id(left), [left])
        rw = self.log.windowed.get(id(right), [right])
        words = f"in `{node.name}`: "
        # 1. a key differs
        differs = []
        try:  # the operator's own state keys (with Spark's type coercions)
            key_l, key_r = op.left_key(lw[0]), op.right_key(rw[0])
        except IndexError:  # a row that never got its windows
            key_l = key_r = None
        parts_l = key_l if isinstance(key_l, tuple) and len(node.keys) > 1 else (key_l,)
        parts_r = key_r if isinstance(key_r, tuple) and len(node.keys) > 1 else (key_r,)
        # a null-safe key is told once, by its operands, where a NULL matches a NULL
        null_safe = {key.index: key for key in node.null_safe_keys}
        told = {key.index + 1 for key in node.null_safe_keys}
        for i, ((ka, kb), pa, pb) in enumerate(
            zip(node.matched_keys, parts_l, parts_r, strict=False)
        ):
            if i in told:
                continue
            if i in null_safe:
                if pa != pb:
                    va = _value(ka, lw[0], node.left, self.plan.ansi)
                    vb = _value(kb, rw[0], node.right, self.plan.ansi)
                    differs.append(
                        f"`{written_sql(ka)} <=> {written_sql(kb)}` is false: "
                        f"`{written_sql(ka)}` is {_shown(va)} for line {left_line} but "
                        f"`{written_sql(kb)}` is {_shown(vb)} for line {right_line}"
                    )
                continue
            if pa is None or pb is None or pa != pb:
                va = _value(ka, lw[0], node.left, self.plan.ansi)
                vb = _value(kb, rw[0], node.right, self.plan.ansi)
                differs.append(
                    f"`{written_sql(ka)}` is {_shown(va)} for line {left_line} but "
                    f"`{written_sql(kb)}` is {_shown(vb)} for line {right_line}"
                    + (" (NULL never equals)" if va is None or vb is None else "")
                )
        if differs:
            return "key_differs", words + "a key differs: " + "; ".join(differs)
        # 2. the time range (the post-join condition) is false
        post = op.post  # the post-join predicate the operator runs
        if post is not None and not any(post(x, y) is True for x in lw for y in rw):
            cond = written_sql(node.post_join_filter) if node.post_join_filter is not None else ""
            shown = _columns_shown(node, lw[0], rw[0])
            return "time_range_false", words + f"the time range is false: `{cond}` with {shown}"
        # 3. the other row was evicted (or never stored) before this one arrived
        arrive_a, arrive_b = ea.batch, eb.batch
        for first, first_line, later_line, later_batch in (
            (da, line, other_line, arrive_b),
            (db, other_line, line, arrive_a),
        ):
            events = [x for x in self.log.events_of(first) if x.relation == node.name]
            evicted = next(
                (x for x in events if x.kind in ("evicted", "removed") and x.batch < later_batch),
                None,
            )
            if evicted is not None:
                return "evicted_before", words + (
                    f"line {first_line} was evicted in batch {evicted.batch}"
                    + (
                        " (every row at or below "
                        f"{format_timestamp(evicted.detail['threshold_us'])} went)"
                        if "threshold_us" in evicted.detail
                        else ""
                    )
                    + f", before line {later_line} arrived in batch {later_batch}"
                )
            arrived = next((x for x in events if x.kind == "arrived"), None)
            stored = any(x.kind == "stored" for x in events)
            reached = not any(
                x.kind in ("late", "filtered") or (x.kind == "pre" and not x.detail["passed"])
                for x in events
            )
            if arrived is not None and arrived.batch < later_batch and reached and not stored:
                return "evicted_before", words + (
                    f"line {first_line} was never stored (its batch {arrived.batch} evicted it "
                    f"at once: the append rule), so line {later_line}, arriving in batch "
                    f"{later_batch}, could not find it"
                )
        # 4. it arrived late
        for row_, n in ((da, line), (db, other_line)):
            late = next(
                (
                    x
                    for x in self.log.events_of(row_)
                    if x.kind == "late" and x.relation == node.name
                ),
                None,
            )
            if late is not None:
                return "late", words + (
                    f"line {n} arrived late: its event time "
                    f"{format_timestamp(late.detail['time_us'])} is at or below the late-events "
                    f"watermark {format_watermark(late.detail['watermark_ms'])} of batch "
                    f"{late.batch}"
                )
        # 5. a filter failed
        for row_, n, side in ((da, line, ea.input), (db, other_line, eb.input)):
            s = node.left if side == 0 else node.right
            for x in self.log.events_of(row_):
                if x.relation != node.name:
                    continue
                if x.kind == "filtered":
                    return "filter_failed", words + f"line {n}: " + self._filtered(x, s, node)[
                        "text"
                    ].split(": ", 1)[1]
                if x.kind == "pre" and not x.detail["passed"]:
                    sql = written_sql(s.pre_join_filter) if s.pre_join_filter is not None else ""
                    return (
                        "filter_failed",
                        words + f"a filter failed: `{sql}` is not true for line {n}",
                    )
        if node.executed_as == "left_semi":
            return "semi_once", words + (
                "a left semi join emits each left row once: it had already matched another row"
            )
        return "unknown", words + "no reason found (please report it)"


def _value(expr: exp.Expression, row: Row, side: Side, ansi: bool) -> Any:
    """A key expression's value for a row of ``side`` (for the words; the decision is the
    operator's own key)."""
    from ..runtime.engine.eval import Layout, compile_expr
    from ..runtime.rows.join import side_layout

    try:
        return compile_expr(expr, Layout.of((side.name, side_layout(side))), ansi=ansi)(row, None)
    except IndexError:
        return None


def _shown(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, tuple) and len(value) == 2:
        return f"[{format_timestamp(value[0])}, {format_timestamp(value[1])})"
    return repr(value)


def _columns_shown(node: JoinNode, left: Row, right: Row) -> str:
    found = []
    seen = set()
    cond = node.post_join_filter
    if cond is None:
        return "(no values)"
    for col in cond.find_all(exp.Column):
        side = node.left if col.table == node.left.alias or col.table == "left" else node.right
        row = left if side is node.left else right
        names = [c.name for c in side.columns] + [w.name for w in side.windows]
        if col.name not in names or (side.alias, col.name) in seen:
            continue
        seen.add((side.alias, col.name))
        value = row[names.index(col.name)]
        kinds = [c.type.name for c in side.columns] + ["window" for _ in side.windows]
        kind = kinds[names.index(col.name)]
        convert = json_converter(kind)
        shown = "NULL" if value is None else (convert(value) if convert else value)
        found.append(f"{side.alias}.{col.name} = {shown}")
    return ", ".join(found) or "(no values)"


def _rows(n: int) -> str:
    return f"{n} row{'s' if n != 1 else ''}"


def cell(value: Any) -> str:
    """A value as `run` shows it in a table: NULL, true/false, JSON for a struct."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return dumps(value)
    return str(value)


def _group_words(group: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {cell(v)}" for k, v in group.items()) or "() (no grouping key)"


def _where_event(
    event: Callable[..., dict[str, Any]], e: Event, where: AggregateWhere
) -> dict[str, Any]:
    """A row an aggregate's WHERE dropped (``AggregateWhere``, where the aggregate runs it):
    the conjunct that is not true, and where it runs against the input's watermark node."""
    below = e.detail["stage"] == "below"
    parts = (
        [written_sql(f) for f in where.filters_below_watermark]
        + [f"{n} IS NOT NULL" for n in where.not_null_below_watermark]
        if below
        else [written_sql(f) for f in where.filters_above_watermark]
    )
    conjunct = parts[e.detail["index"]]
    inferred = below and e.detail["index"] >= len(where.filters_below_watermark)
    text = (
        f"dropped by the aggregate's WHERE: `{conjunct}` is not true"
        + (" (a filter Spark infers from the WHERE)" if inferred else "")
        + "; it runs before the grouping, so the row was never grouped, stored or counted as "
        "late, and "
        + (
            "below the input's watermark node, so the watermark never saw it"
            if below
            else "above the input's watermark node (it reads the watermarked column or is not "
            "deterministic), so the watermark saw it"
        )
    )
    return event(
        e,
        "filtered",
        text,
        filter=conjunct,
        stage="below_watermark" if below else "above_watermark",
    )


Told = list[dict[str, Any]]  # the events of one row in one operator, JSON-ready


@singledispatch
def _told(
    node: PlanNode, teller: Teller, row: Row, query: str, side: int, events: list[Event]
) -> tuple[str, Told]:
    """The name of the input of ``node`` a row arrived at (``side``) and the events of its
    life there (``Teller._section``)."""
    raise TypeError(f"no lineage of a {type(node).__name__} ({node.name})")


@_told.register
def _(
    node: JoinNode, teller: Teller, row: Row, query: str, side: int, events: list[Event]
) -> tuple[str, Told]:
    return node.inputs[side][0], teller._join_events(row, query, node, side, events)


@_told.register
def _(
    node: AggregateNode, teller: Teller, row: Row, query: str, side: int, events: list[Event]
) -> tuple[str, Told]:
    return "input", teller._aggregate_events(row, query, node, events)


@_told.register
def _(
    node: DedupNode, teller: Teller, row: Row, query: str, side: int, events: list[Event]
) -> tuple[str, Told]:
    return "input", teller._dedup_events(row, node, events)


@_told.register
def _(
    node: ViewNode, teller: Teller, row: Row, query: str, side: int, events: list[Event]
) -> tuple[str, Told]:
    return "input", teller._view_events(row, query, node, events)


@_told.register
def _(
    node: UnionNode, teller: Teller, row: Row, query: str, side: int, events: list[Event]
) -> tuple[str, Told]:
    return f"input {side}, `{node.relations[side]}`", teller._union_events(row, node, side, events)


@_told.register
def _(
    node: StaticJoinNode, teller: Teller, row: Row, query: str, side: int, events: list[Event]
) -> tuple[str, Told]:
    return node.inputs[side][0], teller._static_events(row, node, side, events)


@singledispatch
def _dropped(node: PlanNode, teller: Teller, row: Row, e: Event) -> Told | None:
    """The words of event ``e`` of ``node`` when it dropped ``row`` before any join: a
    dedup's duplicate or late row, a view's or an aggregate's WHERE; None: ``e`` dropped
    no row there (``Teller._dropped_before``)."""
    raise TypeError(f"no lineage of a {type(node).__name__} ({node.name})")


@_dropped.register
def _(node: DedupNode, teller: Teller, row: Row, e: Event) -> Told | None:
    if e.kind not in ("duplicate", "late"):
        return None
    return [d for d in teller._dedup_events(row, node, [e]) if d["what"] == e.kind]


@_dropped.register
def _(node: ViewNode, teller: Teller, row: Row, e: Event) -> Told | None:
    return teller._view_events(row, e.query, node, [e]) if e.kind == "filtered" else None


@_dropped.register
def _(node: AggregateNode, teller: Teller, row: Row, e: Event) -> Told | None:
    return teller._aggregate_events(row, e.query, node, [e]) if e.kind == "filtered" else None


@_dropped.register
def _(
    node: JoinNode | UnionNode | StaticJoinNode | StreamNode | TableNode,
    teller: Teller,
    row: Row,
    e: Event,
) -> Told | None:
    return None  # these drop no row before a join (a join's own drops are its story)
