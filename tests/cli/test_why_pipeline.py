"""`sjoin why` through the pipeline around the join (issue 37 item 6): a dedup (a row dropped
as a duplicate of which earlier row, with its batch and the state key; dropped as late by the
dedup's watermark filter; passed, and the rows it then suppressed; its key evicted), a view's
and a join's WHERE (the conjunct that rejected the row, below or above the watermark node), a
union (the input a row came through), a stream-static join (the table rows it matched, of
which table version, or none), and chains of them into joins and aggregates.

Each spec is also held to the truth on both engines: every output row of a reference and of a
columnar run is in some row's life, and a life lists no output the run did not make; the late
rows `why` tells are exactly those `sjoin run --late-rows` writes on either engine."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sjoin.api import check_text
from sjoin.cli.main import main
from sjoin.reports.why import Teller
from sjoin.runtime import run
from sjoin.runtime.engine.values import dumps
from sjoin.runtime.observe.lineage import trace_run

from ..integration.parity.scenarios import records, row, ts

ENGINES = ("reference", "columnar")


def _files(tmp: Path, spec: str, trace: list[dict[str, Any]]) -> tuple[Path, Path]:
    spec_path = tmp / "s.sjoin"
    spec_path.write_text(spec)
    trace_path = tmp / "t.jsonl"
    trace_path.write_text("".join(json.dumps(r) + "\n" for r in trace))
    return spec_path, trace_path


def _life(tmp: Path, spec: str, trace: list[dict[str, Any]], line: int) -> dict[str, Any]:
    spec_path, trace_path = _files(tmp, spec, trace)
    done = CliRunner().invoke(
        main, ["why", str(spec_path), "--trace", str(trace_path), str(line), "--format", "json"]
    )
    assert done.exit_code == 0, done.output
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def _text(tmp: Path, spec: str, trace: list[dict[str, Any]], line: int) -> str:
    spec_path, trace_path = _files(tmp, spec, trace)
    done = CliRunner().invoke(main, ["why", str(spec_path), "--trace", str(trace_path), str(line)])
    assert done.exit_code == 0, done.output
    return str(done.stdout)


def _events(life: dict[str, Any], relation: str) -> list[dict[str, Any]]:
    return [e for s in life["operators"] if s["relation"] == relation for e in s["events"]]


def _held_to_both_engines(tmp: Path, spec: str, trace: list[dict[str, Any]]) -> None:
    """Every output row of a run on either engine is in some line's life, and no life lists
    an output the run did not make; every late row `why` tells is one `--late-rows` lists."""
    _, trace_path = _files(tmp, spec, trace)
    plan = check_text(spec, "s.sjoin").plan
    assert plan is not None
    log, _ = trace_run(plan, trace_path)
    teller = Teller(plan, log)
    listed: set[tuple[Any, ...]] = set()
    late_told: set[tuple[Any, ...]] = set()
    for line in sorted(log.rows_at):
        life = teller.life(line)
        for out in life["outputs"]:
            listed.add((out["relation"], out["batch"], dumps(out["row"]), tuple(out["lines"])))
        for section in life["operators"]:
            for e in section["events"]:
                if e["what"] == "late" and section["row"].get("line") is not None:
                    late_told.add((section["relation"], e["batch"], section["row"]["line"]))
    every = Counter((r, b, row_) for r, b, row_, _ in listed)
    for engine in ENGINES:
        truth = run(plan, trace_path, engine=engine, late_rows=True)  # type: ignore[arg-type]
        made = Counter(
            (relation, b.batch, dumps(out)) for b in truth.batches for relation, out in b.rows
        )
        assert every == made, (engine, every - made, made - every)
        late = {
            (r["relation"], r["batch"], r["line"])
            for b in truth.batches
            for r in b.late
            if r["line"] is not None
        }
        assert late_told == late, (engine, late_told ^ late)


# ---------------------------------------------------------------------------- a dedup

DEDUP_JOIN_AGG = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
dedup l1 = l ON (k, t)
dedup r1 = r ON (k) WITHIN WATERMARK
join j = l1 AS L INNER JOIN r1 AS R
    ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
    SELECT L.k AS lk, L.t AS lt, L.v AS lv, R.v AS rv
aggregate n = j AS x GROUP BY window(x.lt, INTERVAL 1 MINUTE)
    SELECT window(x.lt, INTERVAL 1 MINUTE) AS w, count(*) AS c OUTPUT MODE append
"""
# lines: 1 a, 2 a2 (duplicate of 1), 3 b | 4 c, 5 c2 (duplicate of 4), 6 d |
# 7 e, 8 a3 (duplicate of 1, a batch later) | 9 f, 10 c3 (duplicate of 4) |
# 11 g | 12 h, 13 old (late for r1's watermark filter)
DEDUP_TRACE = records(
    [
        {
            "l": [row(1, 100, "a"), row(1, 100, "a2"), row(2, 101, "b")],
            "r": [row(1, 98, "c"), row(1, 99, "c2"), row(3, 100, "d")],
        },
        {"l": [row(4, 130, "e"), row(1, 100, "a3")], "r": [row(4, 131, "f"), row(1, 120, "c3")]},
        {"l": [row(5, 200, "g")], "r": [row(5, 200, "h"), row(6, 100, "old")]},
    ]
)


def test_a_duplicate_names_the_earlier_row_its_batch_and_the_key(tmp_path: Path) -> None:
    life = _life(tmp_path, DEDUP_JOIN_AGG, DEDUP_TRACE, 8)
    (dup,) = [e for e in _events(life, "l1") if e["what"] == "duplicate"]
    assert dup["batch"] == 2 and dup["trace_batch"] == 1
    assert dup["key"] == {"k": 1, "t": ts(100)}
    assert dup["other"] == {"line": 1, "stream": "l", "trace_batch": 0, "batch": 0}
    assert "put there by line 1 (l), which arrived in batch 0" in dup["text"]
    assert [s["relation"] for s in life["operators"]] == ["l1"]  # it goes no further
    assert life["outputs"] == []
    # within the watermark: the key is the dedup columns only
    life = _life(tmp_path, DEDUP_JOIN_AGG, DEDUP_TRACE, 5)
    (dup,) = [e for e in _events(life, "r1") if e["what"] == "duplicate"]
    assert dup["key"] == {"k": 1} and dup["other"]["line"] == 4


def test_a_passed_row_names_the_rows_it_suppressed_and_its_eviction(tmp_path: Path) -> None:
    life = _life(tmp_path, DEDUP_JOIN_AGG, DEDUP_TRACE, 1)
    events = _events(life, "l1")
    assert [e["what"] for e in events] == ["arrived", "kept", "suppressed", "suppressed", "evicted"]
    assert [e["other"]["line"] for e in events if e["what"] == "suppressed"] == [2, 8]
    evicted = events[-1]
    assert evicted["rule"] == "key" and evicted["threshold"] == ts(100)
    assert "a later row with this key passes again" in evicted["text"]
    # dedup -> join -> aggregate: followed through all three, in order
    assert [s["relation"] for s in life["operators"]] == ["l1", "j", "n"]
    assert [o["relation"] for o in life["outputs"]] == ["l1", "j", "n"]
    (grouped,) = [e for e in _events(life, "n") if e["what"] == "grouped"]
    assert grouped["outputs"] and 1 in grouped["outputs"][0]["lines"]
    # the expiry of a key within the watermark
    text = _text(tmp_path, DEDUP_JOIN_AGG, DEDUP_TRACE, 4)
    assert "it expires 10 seconds after its `t`" in text
    assert "its expiry 2026-01-01T00:01:48Z is at or below the eviction watermark" in text


def test_a_row_the_dedup_drops_as_late(tmp_path: Path) -> None:
    life = _life(tmp_path, DEDUP_JOIN_AGG, DEDUP_TRACE, 13)
    (late,) = [e for e in _events(life, "r1") if e["what"] == "late"]
    assert late["event_time"] == ts(100)
    assert "before the dedup reads its key" in late["text"]
    assert not any(e["what"] in ("kept", "duplicate") for e in _events(life, "r1"))


def test_a_pair_with_a_row_dropped_before_the_join(tmp_path: Path) -> None:
    spec_path, trace_path = _files(tmp_path, DEDUP_JOIN_AGG, DEDUP_TRACE)
    args = ["why", str(spec_path), "--trace", str(trace_path), "--format", "json"]
    done = CliRunner().invoke(main, [*args, "2", "--with", "4"])
    found = json.loads(done.output)
    assert found["reason"] == "dropped_before" and found["relation"] == "l1"
    assert found["text"].startswith("line 2 never reaches a join: in `l1`, dropped as a duplicate")
    assert "put there by line 1 (l)" in found["text"]
    spec_path, trace_path = _files(tmp_path, VIEW_JOIN, VIEW_TRACE)
    args = ["why", str(spec_path), "--trace", str(trace_path), "--format", "json"]
    found = json.loads(CliRunner().invoke(main, [*args, "4", "--with", "2"]).output)
    assert found["reason"] == "dropped_before" and found["relation"] == "lv"
    assert "`L.v <> 'b'` is not true" in found["text"]


def test_dedup_chain_is_held_to_both_engines(tmp_path: Path) -> None:
    _held_to_both_engines(tmp_path, DEDUP_JOIN_AGG, DEDUP_TRACE)


# ---------------------------------------------------------------------------- WHERE

VIEW_JOIN = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
view lv = SELECT L.k, L.t, upper(L.v) AS v FROM l AS L
    WHERE L.v <> 'b' AND L.t < TIMESTAMP '2026-01-01 00:05:00' AND L.k > 0
join j = lv AS L LEFT OUTER JOIN r AS R
    ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
    WHERE R.v IS NULL OR R.v <> L.v
    SELECT L.k AS lk, L.v AS lv, R.v AS rv
"""
# lines: 1 a (matches 4, whose pair the WHERE above the join drops), 2 b (view: v), 3 c (view:
# t, above the watermark node), 4 A | 5 d, 6 x, 7 e (view: k)
VIEW_TRACE = records(
    [
        {"l": [row(1, 100, "a"), row(2, 100, "b"), row(3, 400, "c")], "r": [row(1, 101, "A")]},
        {"l": [row(4, 200, "d")], "r": [row(4, 201, "x")]},
        {"l": [row(-1, 200, "e")]},
    ]
)


@pytest.mark.parametrize(
    "line,conjunct,stage",
    [
        (2, "L.v <> 'b'", "below_watermark"),
        (3, "L.t < CAST('2026-01-01 00:05:00' AS TIMESTAMP)", "above_watermark"),
        (7, "L.k > 0", "below_watermark"),
    ],
)
def test_a_view_names_the_conjunct_and_where_it_ran(
    tmp_path: Path, line: int, conjunct: str, stage: str
) -> None:
    life = _life(tmp_path, VIEW_JOIN, VIEW_TRACE, line)
    (filtered,) = [e for e in _events(life, "lv") if e["what"] == "filtered"]
    assert filtered["filter"] == conjunct and filtered["stage"] == stage
    below = stage == "below_watermark"
    assert ("the watermark never saw the row" in filtered["text"]) == below
    assert [s["relation"] for s in life["operators"]] == ["lv"] and life["outputs"] == []


def test_a_view_row_goes_on_into_the_join_and_its_where(tmp_path: Path) -> None:
    life = _life(tmp_path, VIEW_JOIN, VIEW_TRACE, 1)
    (projected,) = [e for e in _events(life, "lv") if e["what"] == "projected"]
    assert projected["output"]["row"] == {"k": 1, "t": ts(100), "v": "A"}
    # view -> join: the join's WHERE above it drops the pair's output row
    (where,) = [e for e in _events(life, "j") if e["what"] == "where"]
    assert where["filter"] == "R.v IS NULL OR R.v <> L.v"
    assert where["other"]["line"] == 4
    assert [o["relation"] for o in life["outputs"]] == ["lv"]
    life = _life(tmp_path, VIEW_JOIN, VIEW_TRACE, 5)
    assert [o["relation"] for o in life["outputs"]] == ["lv", "j"]


def test_view_chain_is_held_to_both_engines(tmp_path: Path) -> None:
    _held_to_both_engines(tmp_path, VIEW_JOIN, VIEW_TRACE)


JOIN_WHERE = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R
    ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
    WHERE L.v <> 'b' AND R.t > TIMESTAMP '2026-01-01 00:01:00'
    SELECT L.k AS lk, L.v AS lv, R.v AS rv
"""
# lines: 1 a, 2 b (the WHERE's L.v <> 'b', pushed below the watermark node) | 3 c, 4 early
# (R.t > ..., on the watermarked column: above the node)
JOIN_WHERE_TRACE = records(
    [{"l": [row(1, 100, "a"), row(2, 100, "b")], "r": [row(1, 101, "c"), row(2, 30, "early")]}]
)


@pytest.mark.parametrize(
    "line,conjunct,stage",
    [
        (2, "L.v <> 'b'", "below_watermark"),
        (4, "R.t > CAST('2026-01-01 00:01:00' AS TIMESTAMP)", "above_watermark"),
    ],
)
def test_a_join_where_names_the_conjunct_pushed_into_a_side(
    tmp_path: Path, line: int, conjunct: str, stage: str
) -> None:
    life = _life(tmp_path, JOIN_WHERE, JOIN_WHERE_TRACE, line)
    (filtered,) = [e for e in _events(life, "j") if e["what"] == "filtered"]
    assert filtered["filter"] == [conjunct] and filtered["stage"] == stage
    assert "a conjunct of the join's WHERE pushed into this side" in filtered["text"]


def test_join_where_is_held_to_both_engines(tmp_path: Path) -> None:
    _held_to_both_engines(tmp_path, JOIN_WHERE, JOIN_WHERE_TRACE)


# ---------------------------------------------------------------------------- a union

UNION_JOIN = """spark 4.3
stream a (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream b (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream c (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
union ab = a UNION ALL b
join j = ab AS X INNER JOIN c AS C
    ON X.k = C.k AND C.t BETWEEN X.t AND X.t + INTERVAL 10 SECONDS
    SELECT X.k AS k, X.t AS t, X.v AS xv, C.v AS cv
"""
UNION_TRACE = records(
    [
        {"a": [row(1, 100, "a1")], "b": [row(2, 100, "b2")], "c": [row(1, 101, "c1")]},
        {"b": [row(2, 150, "b3")], "c": [row(2, 151, "c3")]},
        {"a": [row(9, 10, "late")]},
    ]
)


@pytest.mark.parametrize("line,index,stream", [(1, 0, "a"), (2, 1, "b"), (4, 1, "b")])
def test_a_union_names_the_input_a_row_came_through(
    tmp_path: Path, line: int, index: int, stream: str
) -> None:
    life = _life(tmp_path, UNION_JOIN, UNION_TRACE, line)
    union = next(s for s in life["operators"] if s["relation"] == "ab")
    assert union["input"] == f"input {index}, `{stream}`"
    (came,) = union["events"]
    assert came["input"] == index and came["output"]["relation"] == "ab"
    assert f"through input {index} (`{stream}`)" in came["text"]
    # union -> join
    assert "j" in [s["relation"] for s in life["operators"]]


def test_union_chain_is_held_to_both_engines(tmp_path: Path) -> None:
    _held_to_both_engines(tmp_path, UNION_JOIN, UNION_TRACE)


# ---------------------------------------------------------------------------- a table

STATIC_AGG = """spark 4.3
table customers (customer_id BIGINT, segment STRING) from delta (path = 'dim/c')
stream orders (order_id BIGINT, customer_id BIGINT, order_time TIMESTAMP)
    watermark order_time delay 10 seconds
join e = orders AS o LEFT OUTER JOIN customers AS c ON o.customer_id = c.customer_id
    SELECT o.order_id, o.order_time, c.segment
aggregate per_segment = e AS x GROUP BY x.segment, window(x.order_time, INTERVAL 1 MINUTE)
    SELECT x.segment, window(x.order_time, INTERVAL 1 MINUTE) AS w, count(*) AS n
    OUTPUT MODE append
"""


def _customer(batch: int, cid: int, segment: str) -> dict[str, Any]:
    return {"batch": batch, "table": "customers", "row": {"customer_id": cid, "segment": segment}}


def _order(batch: int, oid: int, cid: int, seconds: int) -> dict[str, Any]:
    row_ = {"order_id": oid, "customer_id": cid, "order_time": ts(seconds)}
    return {"batch": batch, "stream": "orders", "row": row_}


# lines: 1 customer 1 gold (version of batch 0), 2 order 10 (gold), 3 order 11 (no customer 3
# yet) | 4, 5: the table's version of batch 1 (customer 1 silver, customer 3 bronze), 6 order
# 12 (customer 1: silver now) | 7 order 13, far ahead, to close the windows
STATIC_TRACE = [
    _customer(0, 1, "gold"),
    _order(0, 10, 1, 100),
    _order(0, 11, 3, 101),
    _customer(1, 1, "silver"),
    _customer(1, 3, "bronze"),
    _order(1, 12, 1, 110),
    _order(2, 13, 3, 400),
]


def test_a_stream_static_join_names_the_table_rows_and_their_version(tmp_path: Path) -> None:
    life = _life(tmp_path, STATIC_AGG, STATIC_TRACE, 6)
    events = _events(life, "e")
    assert "1 row, the version of trace batch 0" not in events[0]["text"]
    assert "2 rows, the version of trace batch 1" in events[0]["text"]
    (matched,) = [e for e in events if e["what"] == "matched"]
    assert [o["line"] for o in matched["others"]] == [4]
    assert "line 4 (the version of trace batch 1)" in matched["text"]
    (emitted,) = [e for e in events if e["what"] == "emitted"]
    assert emitted["output"]["row"] == {"order_id": 12, "order_time": ts(110), "segment": "silver"}
    # stream-static join -> aggregate: the joined row is folded into its group
    assert [s["relation"] for s in life["operators"]] == ["e", "per_segment"]
    assert [o["relation"] for o in life["outputs"]] == ["e", "per_segment"]
    # none: null-padded, the table then had no customer 3
    life = _life(tmp_path, STATIC_AGG, STATIC_TRACE, 3)
    events = _events(life, "e")
    (matched,) = [e for e in events if e["what"] == "matched"]
    assert matched["others"] == [] and "matched no row of table `customers`" in matched["text"]
    assert [e["what"] for e in events][-1] == "null_padded"
    # a table row's life: the stream rows it matched
    life = _life(tmp_path, STATIC_AGG, STATIC_TRACE, 1)
    (matched,) = [e for e in _events(life, "e") if e["what"] == "matched"]
    assert matched["other"]["line"] == 2


def test_static_chain_is_held_to_both_engines(tmp_path: Path) -> None:
    _held_to_both_engines(tmp_path, STATIC_AGG, STATIC_TRACE)


# ---------------------------------------------------------------------------- --late-rows


@pytest.mark.parametrize("engine", ENGINES)
def test_a_late_row_through_a_union_or_a_dedup_keeps_its_line(engine: str) -> None:
    """A union and a dedup pass their streams' rows on as they are: a row the join after
    them drops as late is traced to its stream's line (a view's row is one it made: none)."""
    plan = check_text(UNION_JOIN, "s.sjoin").plan
    assert plan is not None
    done = run(plan, UNION_TRACE, engine=engine, late_rows=True)  # type: ignore[arg-type]
    late = [r for b in done.batches for r in b.late]
    assert [(r["relation"], r["stream"], r["line"]) for r in late] == [("j", "ab", 6)]
    plan = check_text(DEDUP_JOIN_AGG, "s.sjoin").plan
    assert plan is not None
    trace = records([{"l": [row(1, 300, "x")], "r": [row(1, 300, "y")]}, {"l": [row(2, 100, "z")]}])
    done = run(plan, trace, engine=engine, late_rows=True)  # type: ignore[arg-type]
    late = [r for b in done.batches for r in b.late]
    assert [(r["relation"], r["stream"], r["line"]) for r in late] == [("l1", "l", 3)]


LATE_PIPELINE = """spark 4.3
table customers (customer_id BIGINT, segment STRING) from delta (path = 'dim/c')
stream a (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream b (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream c (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
dedup a1 = a ON (k, t)
view bv = SELECT B.k, B.t, B.v FROM b AS B WHERE B.v <> 'skip'
union ab = a1 UNION ALL bv
join j = ab AS X INNER JOIN c AS C
    ON X.k = C.k AND C.t BETWEEN X.t AND X.t + INTERVAL 10 SECONDS
    SELECT X.k AS k, X.t AS t, X.v AS xv, C.v AS cv
join e = j AS J LEFT OUTER JOIN customers AS cu ON J.k = cu.customer_id
    SELECT J.k, J.t, cu.segment
"""
LATE_TRACE = [
    _customer(0, 1, "gold"),
    *records(
        [
            {"a": [row(1, 100, "a1")], "b": [row(2, 100, "b2")], "c": [row(1, 101, "c1")]},
            {"a": [row(3, 300, "a3")], "b": [row(4, 300, "b4")], "c": [row(3, 301, "c3")]},
            # late: for the dedup (a), for the join (b through the view and union, and c)
            {"a": [row(5, 100, "old")], "b": [row(6, 100, "old")], "c": [row(7, 100, "old")]},
        ]
    ),
]


@pytest.mark.parametrize("engine", ENGINES)
def test_late_rows_come_from_the_dedup_and_the_join_only(tmp_path: Path, engine: str) -> None:
    spec_path, trace_path = _files(tmp_path, LATE_PIPELINE, LATE_TRACE)
    late = tmp_path / "late.jsonl"
    done = CliRunner().invoke(
        main,
        [
            "run",
            str(spec_path),
            "--trace",
            str(trace_path),
            "--late-rows",
            str(late),
            "--engine",
            engine,
            "--format",
            "json",
        ],
    )
    assert done.exit_code == 0, done.output
    lines = [json.loads(x) for x in late.read_text().splitlines()]
    # the dedup drops a's late row (line 8) itself; b's (line 9, through the view and the
    # union: a row the view made, so no line of its own) and c's (line 10) reach the join and
    # are dropped there; a view, a union and a stream-static join drop none
    assert sorted((r["relation"], r["input"], r["line"] or 0) for r in lines) == [
        ("a1", "input", 8),
        ("j", "left", 0),
        ("j", "right", 10),
    ]
    assert [r["stream"] for r in lines if r["relation"] == "j"] == ["ab", "c"]
    assert all(r["watermark"] == ts(290) for r in lines)


def test_late_pipeline_is_held_to_both_engines(tmp_path: Path) -> None:
    _held_to_both_engines(tmp_path, LATE_PIPELINE, LATE_TRACE)


# ---------------------------------------------------------------------------- random traces

_STREAMS = {
    "dedup": (DEDUP_JOIN_AGG, ("l", "r")),
    "view": (VIEW_JOIN, ("l", "r")),
    "join_where": (JOIN_WHERE, ("l", "r")),
    "union": (UNION_JOIN, ("a", "b", "c")),
    "late_pipeline": (LATE_PIPELINE, ("a", "b", "c")),
}


@st.composite
def _pipeline_traces(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    """One of the specs above and a random trace of it: 1-4 batches whose times move on,
    with duplicates (few keys, few times), late rows, NULLs and rows a filter drops."""
    name = draw(st.sampled_from(sorted(_STREAMS)))
    spec, streams = _STREAMS[name]
    batches = []
    base = 100
    for _ in range(draw(st.integers(1, 4))):
        base += draw(st.integers(0, 60))
        batch: dict[str, list[dict[str, Any]]] = {}
        for stream in streams:
            rows = draw(
                st.lists(
                    st.tuples(
                        st.sampled_from([1, 2, 3, None]),
                        st.integers(base - 40, base + 10) | st.none(),
                        st.sampled_from(["a", "b", "skip", "A"]),
                    ),
                    max_size=4,
                )
            )
            if rows:
                batch[stream] = [row(k, t, v) for k, t, v in rows]
        batches.append(batch)
    trace = records(batches)
    if "customers" in spec:
        trace = [_customer(0, 1, "gold"), _customer(0, 2, "silver"), *trace]
    return spec, trace


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_pipeline_traces())
def test_random_pipeline_traces_are_explained(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, list[dict[str, Any]]]
) -> None:
    """Over random traces of each pipeline: every output row of a run on either engine is in
    some line's life, none invented, and the late rows told are those --late-rows lists."""
    spec, trace = case
    _held_to_both_engines(tmp_path_factory.mktemp("why"), spec, trace)


SEMI_ANTI = """spark 4.3
table customers (customer_id BIGINT, segment STRING) from delta (path = 'dim/c')
stream orders (order_id BIGINT, customer_id BIGINT, order_time TIMESTAMP)
    watermark order_time delay 10 seconds
join e = customers AS c RIGHT OUTER JOIN orders AS o ON o.customer_id = c.customer_id
    SELECT o.order_id, c.segment
join s = orders AS o LEFT SEMI JOIN customers AS c ON o.customer_id = c.customer_id
join a = orders AS o LEFT ANTI JOIN customers AS c ON o.customer_id = c.customer_id
"""
SEMI_ANTI_TRACE = [_customer(0, 1, "gold"), _order(0, 10, 1, 10), _order(0, 11, 2, 10)]


@pytest.mark.parametrize(
    "line,relation,words",
    [
        (2, "e", "came out joined with line 1 (the version of trace batch 0)"),
        (2, "s", "came out alone: a semi join emits a stream row that matched a table row"),
        (2, "a", "an anti join drops a stream row that matched"),
        (3, "e", "came out null-padded: no table row matched"),
        (3, "s", "so it comes out in no row (the join preserves no stream row)"),
        (3, "a", "came out alone: an anti join emits a stream row that matched no table row"),
    ],
)
def test_each_stream_static_join_type_in_words(
    tmp_path: Path, line: int, relation: str, words: str
) -> None:
    """The table on the left (a right outer join: the stream is the right side), a semi and
    an anti join: each stream row's verdict, as the operator made it."""
    life = _life(tmp_path, SEMI_ANTI, SEMI_ANTI_TRACE, line)
    section = next(s for s in life["operators"] if s["relation"] == relation)
    assert section["input"] == ("right" if relation == "e" else "left")
    assert any(words in e["text"] for e in section["events"]), section["events"]


def test_stream_static_join_types_are_held_to_both_engines(tmp_path: Path) -> None:
    _held_to_both_engines(tmp_path, SEMI_ANTI, SEMI_ANTI_TRACE)
