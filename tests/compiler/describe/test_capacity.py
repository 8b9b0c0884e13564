"""`sjoin plan --rates`: the capacity model (compiler/describe/capacity.py) read from the Plan, its
row layout, its option parsers, and its predictions held to the runtime over generated
traces (the runtime matches Spark's numRowsTotal batch for batch; the Spark test checks
the bytes)."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

from sjoin.api import check_text
from sjoin.compiler.describe.capacity import (
    ENTRY_OVERHEAD_BYTES,
    CapacityError,
    capacity_json,
    capacity_text,
    parse_count,
    parse_rates,
    parse_trigger,
    predict,
    unsafe_row_bytes,
    window_tail_ms,
)
from sjoin.compiler.describe.capacity_groups import Arrivals
from sjoin.compiler.vocabulary.types import BIGINT, BOOLEAN, SqlType

from ...conftest import EXAMPLES, ROOT

AD = next(p for p in EXAMPLES if p.stem == "ad_attribution")
IOT = next(p for p in EXAMPLES if p.stem == "iot_window_join")


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "capacity_bench", ROOT / "benchmarks" / "capacity.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def plan_of(path: Path):  # type: ignore[no-untyped-def]
    result = check_text(path.read_text(), str(path))
    assert result.plan is not None
    return result.plan


# ---------------------------------------------------------------- the row layout


@pytest.mark.parametrize(
    ("kinds", "expected"),
    [
        (["bigint"], 8 + 8),
        (["int", "double", "timestamp", "boolean", "date"], 8 + 5 * 8),
        (["string"], 8 + 8 + 16),  # 16 bytes of UTF-8, word-aligned
        (["decimal(10,2)"], 8 + 8),  # precision <= 18: in its slot
        (["decimal(38,2)"], 8 + 8 + 16),  # above: 16 bytes of variable-length data
        (["window"], 8 + 8 + 24),  # a nested row: bit set and two timestamps
        (["bigint"] * 64, 8 + 64 * 8),
        (["bigint"] * 65, 16 + 65 * 8),  # the null bit set grows a word per 64 fields
    ],
)
def test_unsafe_row_bytes(kinds: list[str], expected: int) -> None:
    assert unsafe_row_bytes([_type(k) for k in kinds], 16) == expected


def _type(text: str) -> SqlType:
    """A type as the tables above write it: ``decimal(38,2)``, ``bigint``."""
    name, _, params = text.rstrip(")").partition("(")
    return SqlType(name, tuple(int(p) for p in params.split(",")) if params else ())


def test_strings_are_word_aligned() -> None:
    assert [unsafe_row_bytes([SqlType("string")], n) for n in (1, 8, 9, 16, 17)] == [
        24, 24, 32, 32, 40,
    ]  # fmt: skip


# ---------------------------------------------------------------- the options


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a=5000/s,b=200/s", {"a": 5000.0, "b": 200.0}),
        ("a=60/min", {"a": 1.0}),
        ("a=3600/h,b=1.5/s", {"a": 1.0, "b": 1.5}),
        ("a=86400/d", {"a": 1.0}),
        ("a=0/s", {"a": 0.0}),
    ],
)
def test_parse_rates(text: str, expected: dict[str, float]) -> None:
    assert parse_rates(text) == expected


BAD_RATES = [
    "", "a", "a=", "a=5", "a=5/", "a=5/week", "a=-5/s", "a=+5/s", "a=1e3/s", "a=NaN/s",
    "a=inf/s", "a=٣/s", "a=²/s", "a=\uff13/s", "a=1_000/s", "a= 5/s", "a=5 /s", "=5/s",
    "a=5/s,", "a=5/s,a=6/s", "a b=5/s", "a=" + "9" * 5000 + "/s",
]  # fmt: skip


@pytest.mark.parametrize("text", BAD_RATES)
def test_bad_rates(text: str) -> None:
    with pytest.raises(CapacityError) as raised:
        parse_rates(text)
    assert str(raised.value).startswith("--rates ")
    assert len(str(raised.value)) < 300


@pytest.mark.parametrize(
    ("text", "ms"),
    [("10s", 10_000), ("500ms", 500), ("2min", 120_000), ("1h", 3_600_000), ("0s", 0),
     ("10 seconds", 10_000), ("1.5s", 1500)],
)  # fmt: skip
def test_parse_trigger(text: str, ms: int) -> None:
    assert parse_trigger(text) == ms


@pytest.mark.parametrize(
    "text", ["", "10", "s", "10x", "-1s", "٣s", "1e3s", " 10s", "10s ", "9" * 5000 + "s"]
)
def test_bad_trigger(text: str) -> None:
    with pytest.raises(CapacityError, match=r"^--trigger takes"):
        parse_trigger(text)


@pytest.mark.parametrize("text", ["", "0", "-1", "+1", "1_000", "٣", "²", "1.5", "9" * 5000])
def test_bad_count(text: str) -> None:
    with pytest.raises(CapacityError, match=r"^--keys takes a count above 0"):
        parse_count("--keys", text)


def test_rates_are_checked_against_the_plan() -> None:
    plan = plan_of(AD)
    with pytest.raises(CapacityError, match="`views`, which is not a stream"):
        predict(plan, {"impressions": 1, "clicks": 1, "views": 1})
    with pytest.raises(CapacityError, match="no rate for stream `clicks`"):
        predict(plan, {"impressions": 1})


# ---------------------------------------------------------------- the model


def test_value_eviction_reads_the_state_rule() -> None:
    """ad_attribution: the global watermark is 3 hours behind (the larger delay), a data
    batch evicts with the previous batch's, and the left side keeps 1 hour 1 ms more."""
    plan = plan_of(AD)
    cap = predict(plan, {"impressions": 5000, "clicks": 200}, keys=100_000, trigger_ms=10_000)
    (op,) = cap.operators
    left, right = op.sides
    assert left.retention_ms == 3 * 3_600_000 + 10_000 + 3_600_001
    assert right.retention_ms == 3 * 3_600_000 + 10_000 + 1
    assert left.rows == pytest.approx(5000 * left.retention_ms / 1000)
    assert op.rows == pytest.approx(left.rows + right.rows)  # type: ignore[operator]
    assert op.bounded and op.warm_up_ms == left.retention_ms
    # keyWithIndexToValue: key (ad_id, index), value (ad_id, impression_time, campaign,
    # matched); keyToNumValues: key (ad_id), count
    assert left.row_bytes == (8 + 16) + (8 + 8 + 8 + 8 + 16 + 8)
    assert left.key_bytes == 16 + 16
    assert left.keys == pytest.approx(100_000 * -math.expm1(-left.rows / 100_000))
    assert left.bytes == pytest.approx(
        left.rows * (left.row_bytes + ENTRY_OVERHEAD_BYTES)
        + left.keys * (left.key_bytes + ENTRY_OVERHEAD_BYTES)
    )
    # the preserved side's null rows: when the watermark passes the row's eviction point
    assert op.null_latency_ms == {"left": (left.retention_ms, left.retention_ms + 10_000)}
    # a left row meets 200/s * 1 hour / 100,000 keys clicks on average
    lam = 200 * 3600 / 100_000
    assert op.output_per_second == pytest.approx(5000 * lam + 5000 * math.exp(-lam))


def test_the_spec_trigger_and_partitions_are_the_defaults() -> None:
    plan = plan_of(IOT)  # shuffle_partitions = 4, no trigger: back to back
    cap = predict(plan, {"temperature": 10, "humidity": 10})
    assert cap.assumptions.trigger_ms == 0 and cap.assumptions.partitions == 4
    assert "back to back" in cap.assumptions.trigger_source
    (op,) = cap.operators
    # window key: kept until the watermark passes the window's end, half a window on average
    assert op.sides[0].retention_ms == 5000 + 10_000 / 2
    text = "\n".join(capacity_text(cap))
    assert "rocksdb state store" in text
    spec = check_text(
        IOT.read_text().replace("set state_store = rocksdb", "set trigger = '2 seconds'")
    )
    assert spec.plan is not None
    cap = predict(spec.plan, {"temperature": 10, "humidity": 10})
    assert (
        cap.assumptions.trigger_ms == 2000
        and cap.assumptions.trigger_source == "the spec's trigger"
    )


@pytest.mark.parametrize(
    ("lag", "length", "slide", "trigger", "tail"),
    [
        (15_000, 10_000, 10_000, 5_000, 7_500),  # batch ends on window ends: up to a window
        (15_000, 15_000, 15_000, 5_000, 10_000),
        (15_500, 10_000, 10_000, 5_000, 7_000),  # lag off the lattice
        (15_000, 10_000, 10_000, 0, 5_000),  # continuous: half a window
    ],
)
def test_window_tail(lag: int, length: int, slide: int, trigger: int, tail: float) -> None:
    g = math.gcd(trigger, slide) if trigger else 0
    if trigger:
        assert tail == (slide - g) / 2 + (g - lag % g) + (length - slide) / 2
    assert window_tail_ms(lag, length, slide, trigger) == tail


UNBOUNDED = """\
spark 4.3
stream a (k BIGINT, t TIMESTAMP, s STRING) watermark t delay 10 seconds
stream b (k BIGINT, t TIMESTAMP)
join j = a INNER JOIN b ON a.k = b.k
  SELECT a.k, a.s
"""


def test_an_unbounded_side_grows_with_a_slope() -> None:
    result = check_text(UNBOUNDED)
    assert result.plan is not None and "W001" in {d.code for d in result.diagnostics}
    cap = predict(result.plan, {"a": 100, "b": 10}, trigger_ms=1000)
    (op,) = cap.operators
    assert not op.bounded and op.rows is None and op.bytes is None
    left, right = op.sides
    assert not left.bounded and not right.bounded
    assert left.rows_per_hour == 360_000 and right.rows_per_hour == 36_000
    assert op.rows_per_hour == 396_000
    assert op.bytes_per_hour is not None and op.bytes_per_hour > 396_000 * 48
    text = "\n".join(capacity_text(cap))
    assert "GROWS WITHOUT LIMIT: +360,000 rows/hour" in text
    assert "grows without limit: +396,000 rows/hour" in text
    data = capacity_json(cap)["operators"][0]
    assert data["bounded"] is False and data["state_rows"] is None
    assert data["growth"]["rows_per_hour"] == 396_000
    assert data["sides"]["right"]["unbounded_reason"] == right.reason


def test_json_is_plain_and_sorted_data() -> None:
    plan = plan_of(AD)
    cap = predict(plan, {"impressions": 50, "clicks": 2}, keys=1000)
    data = capacity_json(cap)
    assert json.loads(json.dumps(data)) == data
    assert data["assumptions"]["rates_per_second"] == {"clicks": 2.0, "impressions": 50.0}
    op = data["operators"][0]
    assert set(op["sides"]) == {"left", "right"}
    assert op["state_rows"] == pytest.approx(
        op["sides"]["left"]["state_rows"] + op["sides"]["right"]["state_rows"], abs=0.2
    )


# ---------------------------------------------------------------- against the runtime


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench()


@pytest.mark.parametrize(
    "name",
    ["inner", "left-outer", "full-outer", "window-key", "window-key-left", "unbounded (W001)"],
)
def test_predicted_rows_and_output_match_the_runtime(
    bench: ModuleType, name: str, tmp_path: Path
) -> None:
    """Generated traces at the case's rates: the state rows after warm-up within 10% of the
    runtime's numRowsTotal (the same as Spark's: tests/integration/parity), the output rows per
    second within 10% (an unbounded side: the rows at the last batch, rate x elapsed time)."""
    (case,) = [c for c in bench.CASES if c.name == name]
    cap, observed, _ = bench.run_case(case)
    op = cap.operators[0]
    if op.bounded:
        assert observed.rows_runtime == pytest.approx(op.rows, rel=0.10)
        assert observed.output_runtime == pytest.approx(op.output_per_second, rel=0.10)
    else:
        trigger_s = cap.assumptions.trigger_ms / 1000
        elapsed = trigger_s * case.batches
        assert observed.rows_runtime == pytest.approx(op.rows_per_hour / 3600 * elapsed, rel=0.10)


# ---------------------------------------------------------------- aggregates

BUFFERS = """\
spark 4.3
set shuffle_partitions = 4
set trigger = '10 seconds'
stream s (k STRING, t TIMESTAMP, g BIGINT, x DOUBLE, i INT, d DECIMAL(10, 2),
          e DECIMAL(30, 2), b BOOLEAN, d8 DECIMAL(8, 2))
  watermark t delay 10 seconds
aggregate a = s AS S
  GROUP BY S.k, window(S.t, INTERVAL 10 SECONDS)
  SELECT S.k AS k, window(S.t, INTERVAL 10 SECONDS) AS w, {calls}
  OUTPUT MODE append
"""


@pytest.mark.parametrize(
    ("call", "value"),
    [
        ("count(*)", ["bigint"]),
        ("count(S.x)", ["bigint"]),
        ("sum(S.g)", ["bigint"]),
        ("sum(S.i)", ["bigint"]),  # an integer sum is a BIGINT
        ("sum(S.x)", ["double"]),
        ("sum(S.d)", ["decimal(20,2)", "boolean"]),  # DECIMAL(p + 10, s) and isEmpty
        ("sum(S.d8)", ["bigint"]),  # DecimalAggregates: the unscaled BIGINT's sum
        ("avg(S.i)", ["double", "bigint"]),
        ("avg(S.d)", ["double", "bigint"]),  # DecimalAggregates: p + 4 <= 15
        ("avg(S.e)", ["decimal(38,2)", "bigint"]),  # 16 bytes of variable-length data
        ("min(S.k)", ["string"]),
        ("max(S.t)", ["timestamp"]),
        ("approx_count_distinct(S.g)", ["bigint"] * 52),  # HyperLogLog++'s 52 words
    ],
)
def test_aggregate_state_layout(call: str, value: list[str]) -> None:
    """The state's key (the grouping keys: a string and a window struct) and value (the
    aggregation buffers, as Spark 4.3's state schema has them: test_capacity_on_spark.py)."""
    result = check_text(BUFFERS.format(calls=f"{call} AS c"))
    assert result.ok and result.plan is not None, result.diagnostics
    cap = predict(result.plan, {"s": 100}, keys=50)
    (op,) = cap.operators
    assert op.aggregate is not None
    assert op.aggregate.key_bytes == 8 + (8 + 16) + (8 + 24)
    assert op.aggregate.value_bytes == unsafe_row_bytes([_type(k) for k in value], 16)


def test_a_stream_aggregate_keeps_its_open_windows() -> None:
    """By hand: a batch every 10 s, tumbling windows of 10 s, the watermark 10 s + a
    trigger behind: after each batch three windows are kept (the one whose end the
    watermark reaches exactly is not evicted), each with N (1 - e^(-rL/N)) keys."""
    result = check_text(BUFFERS.format(calls="count(*) AS c"))
    assert result.plan is not None
    cap = predict(result.plan, {"s": 100}, keys=50)
    (op,) = cap.operators
    per_window = 50 * -math.expm1(-100 * 10 / 50)
    assert op.rows == pytest.approx(3 * per_window)
    assert op.aggregate is not None
    assert op.aggregate.groups_per_window == pytest.approx(per_window)
    assert op.aggregate.lag_ms == 20_000
    assert op.aggregate.emission_ms == (20_000, 30_000)
    assert op.output_per_second == pytest.approx(per_window / 10)
    # each batch's rows are one window's: it updates that window's groups
    assert op.aggregate.updated_per_batch == pytest.approx(per_window)
    assert op.warm_up_ms == 10_000 + 20_000
    assert op.bytes is not None and op.partition_bytes is not None
    assert op.bounded and op.rows_at is None


GROWING = """\
spark 4.3
set trigger = '5 seconds'
stream s (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds
aggregate a = s AS S GROUP BY {keys} SELECT {select}, count(*) AS n OUTPUT MODE {mode}
"""


def test_complete_mode_grows_with_a_slope() -> None:
    window = "window(S.t, INTERVAL 1 MINUTE)"
    spec = GROWING.format(keys=f"S.k, {window}", select=f"S.k, {window} AS w", mode="complete")
    result = check_text(spec)
    assert result.ok and result.plan is not None, result.diagnostics
    cap = predict(result.plan, {"s": 10}, keys=100)
    (op,) = cap.operators
    assert not op.bounded and op.rows is None and op.bytes is None
    per_window = 100 * -math.expm1(-10 * 60 / 100)
    assert op.rows_per_hour == pytest.approx(per_window * 60)
    assert op.aggregate is not None and "complete mode" in (op.aggregate.reason or "")
    text = "\n".join(capacity_text(cap))
    assert "GROWS WITHOUT LIMIT" in text and "complete mode keeps every group" in text
    data = capacity_json(cap)["operators"][0]
    assert data["growth"]["rows_per_hour"] == pytest.approx(per_window * 60, abs=0.1)
    assert data["aggregate"]["never_shrinks"] == op.aggregate.reason


def test_a_grouping_without_a_time_fills_up_to_the_keys() -> None:
    """Update mode grouped by a key alone never evicts: with --keys it holds every key in
    the end; without, each row is its own group and it grows at the input rate."""
    result = check_text(GROWING.format(keys="S.k", select="S.k", mode="update"))
    assert result.ok and result.plan is not None, result.diagnostics
    (op,) = predict(result.plan, {"s": 10}, keys=1000).operators
    assert op.bounded and op.rows == pytest.approx(1000)
    assert op.rows_at is not None
    assert op.rows_at(60_000) == pytest.approx(1000 * -math.expm1(-10 * 60 / 1000))
    assert op.warm_up_ms == pytest.approx(1000 * math.log(20) / 10 * 1000, rel=0.01)
    assert op.aggregate is not None and op.aggregate.updated_per_batch == pytest.approx(
        1000 * -math.expm1(-10 * 5 / 1000)
    )
    (grows,) = predict(result.plan, {"s": 10}).operators
    assert not grows.bounded and grows.rows_per_hour == pytest.approx(36_000)


def test_an_aggregate_of_a_join_needs_keys() -> None:
    plan = plan_of(next(p for p in EXAMPLES if p.stem == "checkout_funnel"))
    rates = {"impressions": 100, "clicks": 10, "purchases": 2}
    agg = next(op for op in predict(plan, rates).operators if op.kind == "aggregate")
    assert agg.rows is None and any("give --keys" in n for n in agg.notes)
    text = "\n".join(capacity_text(predict(plan, rates)))
    assert "aggregate revenue (append)" in text and "not predicted" in text
    agg = next(op for op in predict(plan, rates, keys=5000).operators if op.kind == "aggregate")
    assert agg.rows is not None and agg.rows > 0 and agg.output_per_second is not None
    # its warm-up waits for both joins below it
    assert agg.warm_up_ms is not None and agg.warm_up_ms > 3_600_000


@pytest.mark.parametrize(
    "name",
    [
        "inner -> append",
        "left-outer -> sliding append",
        "inner -> update",
        "window-key -> append",
        "inner -> update, no time",
    ],
)
def test_predicted_groups_match_the_runtime(bench: ModuleType, name: str) -> None:
    """A join feeding an aggregate: the aggregate's groups after warm-up within 10% of the
    runtime's numRowsTotal (a grouping without a time: at the last batch), its output rows
    per second within 10%."""
    (case,) = [c for c in bench.CASES if c.name == name]
    cap, observed, log = bench.run_case(case)
    assert observed.rows_runtime == pytest.approx(bench.predicted_rows(case, cap), rel=0.10), log
    op = bench.operator_of(cap, case.operator)
    assert observed.output_runtime == pytest.approx(op.output_per_second, rel=0.10), log


# ---------------------------------------------------------------- the group arithmetic


def test_a_window_key_pair_is_exact() -> None:
    """Every row of a window meets the same rows of the other side: a key has a pair in the
    window when each side has a row in it, (1 - e^-a)(1 - e^-b)."""
    lam_x, lam_y, w = 0.002, 0.0005, 10_000.0
    arrivals = Arrivals("pair", lam_x, lam_y, window_ms=w)
    for t in (2_500.0, 7_000.0, 10_000.0, 50_000.0):
        seen = min(t, w)
        exact = -math.expm1(-lam_x * seen) * -math.expm1(-lam_y * seen)
        assert arrivals.exists(0.0, w, t) == pytest.approx(exact, rel=1e-9)


@pytest.mark.parametrize("lam_x", [1e-6, 0.05])
def test_a_range_pair_in_its_limits(lam_x: float) -> None:
    """Few rows x a key: a pair is one x's chance of meeting a y; many: the y side alone
    decides, over the union of the x rows' ranges (the window widened by the range)."""
    lam_y, lo, hi, w = 0.0002, 0.0, 20_000.0, 10_000.0
    arrivals = Arrivals("pair", lam_x, lam_y, range_ms=(lo, hi))
    got = arrivals.exists(0.0, w, 1e9)
    if lam_x < 1e-3:
        assert got == pytest.approx(lam_x * w * -math.expm1(-lam_y * (hi - lo)), rel=0.01)
    else:
        assert got == pytest.approx(-math.expm1(-lam_y * (w + hi - lo)), rel=0.01)


def test_a_preserved_row_makes_its_group_when_its_null_row_is_out() -> None:
    """A LEFT OUTER row without a match comes out once the join's watermark passes it: by
    then its key has a group whether it met a row or not."""
    arrivals = Arrivals(
        "pair", 0.001, 0.0, range_ms=(0.0, 10_000.0), emit="preserved", null_ms=25_000.0
    )
    assert arrivals.exists(0.0, 10_000.0, 20_000.0) == 0.0  # no match, no null row yet
    late = arrivals.exists(0.0, 10_000.0, 100_000.0)
    assert late == pytest.approx(-math.expm1(-0.001 * 10_000))
    assert Arrivals("stream", 0.001).exists(0.0, 10_000.0, 4_000.0) == pytest.approx(
        -math.expm1(-4.0)
    )


NULL_SAFE = """spark 4.3
stream a (k BIGINT, s STRING, t TIMESTAMP) watermark t delay 10 seconds
stream b (k BIGINT, s STRING, t TIMESTAMP) watermark t delay 10 seconds
join j = a JOIN b ON a.k {op} b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE
  SELECT a.k AS k, b.s AS s
"""


def test_a_null_safe_key_is_two_key_columns_and_one_key_count() -> None:
    """`a.k <=> b.k` is Spark's two keys (coalesce(k, 0), isnull(k)): the state's key row
    holds a BIGINT and a BOOLEAN, and `--keys k=N` counts N keys, not N squared (the isnull
    pair says nothing its coalesce pair does not)."""
    plain, null_safe = (check_text(NULL_SAFE.format(op=op)).plan for op in ("=", "<=>"))
    assert plain is not None and null_safe is not None
    assert null_safe.joins[0].key_types == (BIGINT, BOOLEAN)
    rates = {"a": 100, "b": 100}
    caps = [predict(p, rates, key_columns={"k": 500}, trigger_ms=1000) for p in (plain, null_safe)]
    (eq,), (ns,) = (c.operators for c in caps)
    for side_eq, side_ns in zip(eq.sides, ns.sides, strict=True):
        grown = unsafe_row_bytes([BIGINT, BOOLEAN], 0) - unsafe_row_bytes([BIGINT], 0)
        assert side_ns.key_bytes == side_eq.key_bytes + grown > side_eq.key_bytes
        assert side_ns.keys == side_eq.keys
    assert ns.output_per_second == eq.output_per_second
