"""`sjoin plan --rates` checked against what runs: traces generated at given rates, run on the
reference runtime and on real Spark (the generated job, HDFS-backed state store), the state
rows and bytes after warm-up compared with the prediction; the table goes into
docs/capacity.md (between its ``capacity-table`` markers).

    python benchmarks/capacity.py                # every case, rewrite docs/capacity.md
    python benchmarks/capacity.py --case inner   # one case, print only
    python benchmarks/capacity.py --measure      # refit the store overheads (Spark only)
    python benchmarks/capacity.py --measure-aggregates  # refit an aggregate's (Spark only)

``--measure`` runs cases of other shapes (row widths, key counts, partitions) and fits the two
constants of ``sjoin.compiler.describe.capacity`` by least squares: the bytes per state entry beyond
its UnsafeRow pair, and the bytes per state store instance.  ``--measure-aggregates`` fits an
aggregate's: the bytes per group beyond its UnsafeRow pair.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlglot import exp

from sjoin.api import check_text
from sjoin.compiler.describe.capacity import (
    STORE_OVERHEAD_BYTES,
    Capacity,
    OperatorCapacity,
    predict,
)
from sjoin.compiler.planning.plan import Plan
from sjoin.compiler.vocabulary.settings import semantic_conf

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "capacity.md"
BEGIN, END = "<!-- capacity-table:begin -->", "<!-- capacity-table:end -->"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"

HEAD = """\
spark 4.3
set shuffle_partitions = {partitions}
set trigger = '{trigger} seconds'
stream a (k {key}, t TIMESTAMP, s STRING) watermark t delay {da} seconds
stream b (k {key}, t TIMESTAMP, v STRING) watermark t delay {db} seconds
"""
RANGE = """\
join j = a {how} JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL {width} SECONDS
  SELECT a.k AS k, a.t AS at, a.s AS s, b.t AS bt, b.v AS v
"""
WINDOW = """\
join j = a {how} JOIN b ON a.k = b.k
    AND window(a.t, INTERVAL {width} SECONDS) = window(b.t, INTERVAL {width} SECONDS)
  SELECT a.k AS k, window(a.t, INTERVAL {width} SECONDS) AS w, a.s AS s, b.v AS v
"""
EQUI = """\
join j = a {how} JOIN b ON a.k = b.k
  SELECT a.k AS k, a.s AS s, b.v AS v
"""
# join -> aggregate: the streams carry a number each for the aggregation buffers
AGG_HEAD = """\
spark 4.3
set shuffle_partitions = {partitions}
set trigger = '{trigger} seconds'
stream a (k {key}, t TIMESTAMP, s STRING, n BIGINT) watermark t delay {da} seconds
stream b (k {key}, t TIMESTAMP, v STRING, x DOUBLE) watermark t delay {db} seconds
"""
AGG_RANGE = """\
join j = a {how} JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL {width} SECONDS
  SELECT a.k AS k, a.t AS at, a.n AS n, b.x AS x, b.v AS v
"""
AGG_WINDOW = """\
join j = a {how} JOIN b ON a.k = b.k
    AND window(a.t, INTERVAL {width} SECONDS) = window(b.t, INTERVAL {width} SECONDS)
  SELECT a.k AS k, window(a.t, INTERVAL {width} SECONDS) AS w, a.n AS n, b.x AS x, b.v AS v
"""
BUFFERS = "count(*) AS c, sum(J.n) AS sn, avg(J.x) AS ax, max(J.v) AS mv"
BY_WINDOW = """\
aggregate g = j AS J GROUP BY J.k, {window}
  SELECT J.k AS k, {window} AS w, {buffers}
  OUTPUT MODE {mode}
"""
BY_KEY = """\
aggregate g = j AS J GROUP BY J.k
  SELECT J.k AS k, {buffers}
  OUTPUT MODE {mode}
"""


@dataclass(frozen=True)
class Case:
    name: str
    spec: str
    rates: dict[str, float]
    keys: int
    batches: int
    string_bytes: int = 16
    partitions: int = 2
    operator: str = "j"  # the stateful operator compared (the query is rooted at it)


def case(
    name: str,
    body: str,
    rates: tuple[float, float],
    *,
    how: str = "INNER",
    keys: int = 1_000_000,
    key: str = "BIGINT",
    delays: tuple[int, int] = (10, 10),
    width: int = 20,
    trigger: int = 5,
    batches: int = 14,
    string_bytes: int = 16,
    partitions: int = 2,
) -> Case:
    spec = HEAD.format(
        partitions=partitions, trigger=trigger, key=key, da=delays[0], db=delays[1]
    ) + body.format(how=how, width=width)
    return Case(name, spec, {"a": rates[0], "b": rates[1]}, keys, batches, string_bytes, partitions)


def aggregated(
    name: str,
    join: str,
    aggregate: str,
    rates: tuple[float, float],
    *,
    mode: str = "append",
    window: str = "window(J.at, INTERVAL 10 SECONDS)",
    how: str = "INNER",
    keys: int = 1_000_000,
    key: str = "BIGINT",
    delays: tuple[int, int] = (10, 10),
    width: int = 20,
    trigger: int = 5,
    batches: int = 40,
    partitions: int = 2,
    buffers: str = BUFFERS,
    string_bytes: int = 16,
) -> Case:
    """A join feeding an aggregate (``g``), whose state is compared."""
    spec = (
        AGG_HEAD.format(partitions=partitions, trigger=trigger, key=key, da=delays[0], db=delays[1])
        + join.format(how=how, width=width)
        + aggregate.format(window=window, buffers=buffers, mode=mode)
    )
    rate = {"a": rates[0], "b": rates[1]}
    return Case(name, spec, rate, keys, batches, string_bytes, partitions, operator="g")


CASES = [
    case("inner", RANGE, (200, 50), keys=5000),
    case("left-outer", RANGE, (100, 100), how="LEFT OUTER", keys=2000),
    case("full-outer", RANGE, (60, 150), how="FULL OUTER", delays=(5, 15), width=10, keys=500),
    case("window-key", WINDOW, (150, 150), key="STRING", width=10, keys=300),
    case("window-key-left", WINDOW, (80, 240), how="LEFT OUTER", key="STRING", width=15, keys=50),
    case("unbounded (W001)", EQUI, (40, 20), batches=10),
    aggregated("inner -> append", AGG_RANGE, BY_WINDOW, (200, 50), keys=5000),
    aggregated(
        "left-outer -> sliding append",
        AGG_RANGE,
        BY_WINDOW,
        (100, 100),
        how="LEFT OUTER",
        keys=2000,
        window="window(J.at, INTERVAL 20 SECONDS, INTERVAL 10 SECONDS)",
    ),
    aggregated(
        "inner -> update", AGG_RANGE, BY_WINDOW, (120, 60), mode="update", keys=400, width=10
    ),
    aggregated(
        "window-key -> append",
        AGG_WINDOW,
        BY_WINDOW,
        (150, 150),
        key="STRING",
        width=10,
        window="J.w",
        keys=300,
    ),
    aggregated(
        "inner -> update, no time",
        AGG_RANGE,
        BY_KEY,
        (100, 40),
        mode="update",
        keys=3000,
        batches=16,
    ),
]
# shapes for --measure: other row widths, key counts and partition counts than the cases
MEASURE = [
    case("m-wide", RANGE, (150, 50), string_bytes=64, batches=12),
    case("m-keys", RANGE, (200, 100), keys=20, batches=12),
    case("m-partitions", RANGE, (100, 100), partitions=8, batches=12),
    case("m-small", RANGE, (10, 10), partitions=8, batches=12),
]
# aggregate shapes for --measure-aggregates: other buffers, key widths, updated shares and
# partition counts than the table's
MEASURE_AGGREGATES = [
    aggregated(
        "ma-count", AGG_RANGE, BY_WINDOW, (150, 60), keys=2000, buffers="count(*) AS c",
        batches=40,
    ),
    aggregated(
        "ma-updated", AGG_WINDOW, BY_WINDOW, (200, 200), key="STRING", width=20, window="J.w",
        keys=100, batches=40,
    ),
    aggregated(
        "ma-partitions", AGG_RANGE, BY_WINDOW, (200, 80), keys=3000, partitions=6,
        window="window(J.at, INTERVAL 20 SECONDS)", batches=40,
    ),
    aggregated(
        "ma-wide", AGG_RANGE, BY_WINDOW, (100, 100), mode="update", keys=1000, string_bytes=48,
        window="window(J.at, INTERVAL 30 SECONDS)", buffers=BUFFERS + ", min(J.v) AS lv",
        batches=46,
    ),
    aggregated(
        "ma-many", AGG_RANGE, BY_WINDOW, (300, 150), keys=20000, batches=40,
        window="window(J.at, INTERVAL 5 SECONDS)",
    ),
]  # fmt: skip


# ------------------------------------------------------------------ the trace generator


def key_columns(plan: Plan) -> dict[str, set[str]]:
    """Per stream, its columns that a join key reads directly."""
    out: dict[str, set[str]] = {}
    streams = {s.name for s in plan.streams}
    for node in plan.joins:
        for left, right in node.keys:
            for side, expr in ((node.left, left), (node.right, right)):
                if side.relation in streams:
                    names = {c.name for c in expr.find_all(exp.Column)}
                    out.setdefault(side.relation, set()).update(names)
    return out


def generate(
    plan: Plan,
    rates: dict[str, float],
    keys: int,
    trigger_s: float,
    batches: int,
    *,
    string_bytes: int = 16,
    seed: int = 27,
) -> list[dict[str, Any]]:
    """Trace records: per batch i, each stream's rows evenly spaced in event time over
    [i*trigger, (i+1)*trigger) at its rate; key columns uniform over ``keys`` values (strings
    zero-padded to ``string_bytes``), other strings ``string_bytes`` long, timestamps the
    row's event time, numbers random."""
    rnd = random.Random(seed)
    key_cols = key_columns(plan)
    records: list[dict[str, Any]] = []
    for i in range(batches):
        for stream in plan.streams:
            rate = rates.get(stream.name, 0.0)
            start, end = int(rate * trigger_s * i), int(rate * trigger_s * (i + 1))
            n = end - start
            for j in range(n):
                t = T0 + timedelta(seconds=trigger_s * (i + j / n))
                row: dict[str, Any] = {}
                for col in stream.columns:
                    kind = col.type.name
                    if col.name in key_cols.get(stream.name, ()):
                        k = rnd.randrange(keys)
                        row[col.name] = str(k).zfill(string_bytes) if kind == "string" else k
                    elif kind == "timestamp":
                        row[col.name] = t.isoformat().replace("+00:00", "Z")
                    elif kind == "string":
                        row[col.name] = "x" * string_bytes
                    elif kind in ("double", "float"):
                        row[col.name] = rnd.random()
                    else:
                        row[col.name] = rnd.randrange(1000)
                records.append({"batch": i, "stream": stream.name, "row": row})
    return records


# ------------------------------------------------------------------ runs


@dataclass
class Observed:
    rows_runtime: float
    output_runtime: float  # output rows per second of event time, steady batches
    rows_spark: float | None
    bytes_spark: float | None
    batches: int  # data batches averaged
    updated_spark: float | None = None  # numRowsUpdated (the rows a batch rewrote)


def operator_of(cap: Capacity, name: str) -> OperatorCapacity:
    return next(op for op in cap.operators if op.name == name)


def steady_batches(cap: Capacity, trigger_s: float, batches: int, name: str = "j") -> list[int]:
    """The trace batches after warm-up: the state holds its steady span of event time."""
    op = operator_of(cap, name)
    warm_s = (op.warm_up_ms or 0) / 1000 + 2 * trigger_s
    first = min(int(warm_s / trigger_s) + 1, batches - 3)
    return list(range(max(first, 1), batches))


def whole_periods(batches: set[int], period: int) -> set[int]:
    """The last batches of ``batches`` that make whole periods (its earliest ones dropped)."""
    ordered = sorted(batches)
    return set(ordered[len(ordered) % period :])


def grows(op: OperatorCapacity) -> bool:
    """A state that grows (or fills up) for ever: compared at the last batch."""
    return op.rows_at is not None


def run_case(c: Case, spark: Any = None) -> tuple[Capacity, Observed, list[str]]:
    from sjoin.runtime import run

    result = check_text(c.spec)
    if result.plan is None or not result.ok:
        raise SystemExit(f"{c.name}: the spec does not check: {result.diagnostics}")
    plan = result.plan
    cap = predict(plan, c.rates, keys=c.keys, string_bytes=c.string_bytes)
    trigger_s = cap.assumptions.trigger_ms / 1000
    records = generate(plan, c.rates, c.keys, trigger_s, c.batches, string_bytes=c.string_bytes)
    op = operator_of(cap, c.operator)
    steady = set(steady_batches(cap, trigger_s, c.batches, c.operator))
    wanted = {c.batches - 1} if grows(op) else steady
    if grows(op):  # the output is steady once the operators below it are
        upstream = [o for o in cap.operators if o.name != op.name]
        warm = max((o.warm_up_ms or 0) for o in upstream) if upstream else 0
        first = min(int(warm / 1000 / trigger_s) + 3, c.batches - 3)
        steady = set(range(max(first, 1), c.batches))
    detail = op.aggregate
    if detail is not None and detail.slide_ms:
        # a window's groups come and go together: count whole periods of windows and
        # batches (the prediction is an average over one)
        tau, slide = cap.assumptions.trigger_ms, int(detail.slide_ms)
        period = slide * tau // math.gcd(slide, tau) // tau
        steady = whole_periods(steady, period)
        if not grows(op):
            wanted = whole_periods(wanted, period)
    with tempfile.TemporaryDirectory(prefix="sjoin-capacity-") as tmp:
        path = Path(tmp) / "trace.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        runtime = run(plan, path, relation=c.operator)
        rt = [
            metrics(b.progress["operators"], c.operator)["numRowsTotal"]
            for b in runtime.batches
            if b.data and b.trace_batch in wanted
        ]
        outputs = [b.counts.get(c.operator, 0) for b in runtime.batches if b.trace_batch in steady]
        output = sum(outputs) / (len(steady) * trigger_s)
        sp: dict[str, list[int]] = {"numRowsTotal": [], "memoryUsedBytes": [], "numRowsUpdated": []}
        if spark is not None:
            sp = spark_run(spark, plan, path, tmp, wanted, c.operator)
    log = [f"{c.name}: runtime rows per steady batch {rt}"]
    log += [f"  spark {name} {values}" for name, values in sp.items()]

    def mean(xs: Sequence[float]) -> float | None:
        return sum(xs) / len(xs) if xs else None

    observed = Observed(
        mean(rt) or 0.0,
        output,
        mean(sp["numRowsTotal"]),
        mean(sp["memoryUsedBytes"]),
        len(rt),
        mean(sp["numRowsUpdated"]),
    )
    return cap, observed, log


def metrics(operators: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """The runtime's progress figures of the operator ``name``."""
    return next(o for o in operators if o.get("relation") == name)


def spark_run(
    spark: Any, plan: Plan, path: Path, tmp: str, wanted: set[int], root: str = "j"
) -> dict[str, list[int]]:
    """The generated job on Spark, fed a trace batch per micro-batch; numRowsTotal,
    memoryUsedBytes and numRowsUpdated of the operator ``root`` (the query's root) in the
    data batches of ``wanted``."""
    from sjoin.jvm.spark_driver import run_job_query
    from sjoin.jvm.verify import load_job, output_mode, spark_row
    from sjoin.runtime.io.trace import read_trace, schemas_of

    trace = read_trace(str(path), schemas_of(plan), "stop")
    streams = {s.name: s for s in plan.streams}
    feeds: list[dict[str, Any] | None] = [
        {name: [spark_row(r, streams[name]) for r in b.rows_of(name)] for name in b.rows}
        for b in trace.batches
    ]
    confs = dict(semantic_conf(plan.settings))
    confs.update(plan.spark_conf)
    confs["spark.sql.streaming.stateStore.providerClass"] = HDFS
    job = load_job(plan, tmp)
    result = run_job_query(spark, job, root, output_mode(plan, root), list(streams), feeds, confs)
    # Spark's progress lists a query's stateful operators in its operator-id order
    index = [n.name for n in plan.stateful_operators(root)].index(root)
    names = ("numRowsTotal", "memoryUsedBytes", "numRowsUpdated")
    found: dict[str, list[int]] = {name: [] for name in names}
    data = [b for b in result.batches if b.num_input_rows > 0]
    for number, b in enumerate(data):  # one data batch per trace batch, in order
        if number in wanted:
            for name in names:
                found[name].append(b.state_operators[index][name])
    return found


# ------------------------------------------------------------------ the table


def error(predicted: float | None, observed: float | None) -> str:
    if predicted is None or observed is None or observed == 0:
        return "n/a"
    return f"{(predicted - observed) / observed:+.1%}"


def predicted_rows(c: Case, cap: Capacity) -> float | None:
    """The rows predicted for the compared batches: the steady state, or, for a state that
    grows (or fills up) for ever, the rows at the last batch (its elapsed event time)."""
    op = operator_of(cap, c.operator)
    if op.rows_at is not None:
        return op.rows_at(cap.assumptions.trigger_ms * c.batches)
    return op.rows


def predicted_bytes(c: Case, cap: Capacity) -> float | None:
    """The bytes predicted for the compared batches: the steady state's, or, for an aggregate
    that fills up to its keys, its groups' bytes at the last batch (None: a state that grows
    without limit)."""
    op = operator_of(cap, c.operator)
    rows = predicted_rows(c, cap)
    if op.bytes is None or op.rows is None or rows is None:
        return None
    if op.rows_at is None:
        return op.bytes
    stores = c.partitions * STORE_OVERHEAD_BYTES
    return stores + (op.bytes - stores) * rows / op.rows


def row(c: Case, cap: Capacity, o: Observed) -> list[str]:
    op = operator_of(cap, c.operator)
    rates = ", ".join(f"{k} {v:g}/s" for k, v in c.rates.items())
    pred_rows = predicted_rows(c, cap)
    pred_bytes = predicted_bytes(c, cap)
    what = f"join `{op.name}`" if op.kind == "join" else f"aggregate `{op.name}`"
    return [
        c.name,
        what,
        rates,
        f"{c.keys:,}",
        f"{pred_rows:,.0f}" if pred_rows is not None else "n/a",
        f"{o.rows_runtime:,.0f}",
        error(pred_rows, o.rows_runtime),
        f"{o.rows_spark:,.0f}" if o.rows_spark is not None else "n/a",
        error(pred_rows, o.rows_spark),
        f"{pred_bytes:,.0f}" if pred_bytes is not None else "grows",
        f"{o.bytes_spark:,.0f}" if o.bytes_spark is not None else "n/a",
        error(pred_bytes, o.bytes_spark),
        f"{op.output_per_second:,.1f}" if op.output_per_second is not None else "n/a",
        f"{o.output_runtime:,.1f}",
        error(op.output_per_second, o.output_runtime),
    ]


COLUMNS = [
    "case", "operator", "rates", "keys", "predicted rows", "runtime rows", "error", "Spark rows",
    "error", "predicted bytes", "Spark memoryUsedBytes", "error", "predicted output/s",
    "runtime output/s", "error",
]  # fmt: skip


def table(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def write_doc(text: str) -> None:
    doc = DOC.read_text()
    head, _, rest = doc.partition(BEGIN)
    _, _, tail = rest.partition(END)
    DOC.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}")


# ------------------------------------------------------------------ --measure


def measure(spark: Any) -> tuple[float, float]:
    """Least squares of memoryUsedBytes - (the UnsafeRow bytes) = a * entries + b * stores
    over the MEASURE cases (steady batches), printed and returned."""
    samples: list[tuple[float, float, float]] = []
    for c in MEASURE:
        cap, o, log = run_case(c, spark)
        print("\n".join(log), flush=True)
        op = operator_of(cap, c.operator)
        assert o.bytes_spark is not None and op.rows is not None
        entries = sum((s.rows or 0) + (s.keys or 0) for s in op.sides)
        payload = sum((s.rows or 0) * s.row_bytes + (s.keys or 0) * s.key_bytes for s in op.sides)
        stores = 4 * c.partitions
        samples.append((entries, stores, o.bytes_spark - payload))
        print(f"  entries {entries:.0f} stores {stores} overhead {o.bytes_spark - payload:.0f}")
    # normal equations for two unknowns
    sxx = sum(e * e for e, _, _ in samples)
    sxy = sum(e * s for e, s, _ in samples)
    syy = sum(s * s for _, s, _ in samples)
    sxz = sum(e * z for e, _, z in samples)
    syz = sum(s * z for _, s, z in samples)
    det = sxx * syy - sxy * sxy
    a = (sxz * syy - syz * sxy) / det
    b = (sxx * syz - sxy * sxz) / det
    print(f"ENTRY_OVERHEAD_BYTES = {a:.1f}\nSTORE_OVERHEAD_BYTES = {b:.1f}")
    return a, b


def measure_aggregates(spark: Any) -> float:
    """Least squares of memoryUsedBytes - the stores' fixed cost - the groups' UnsafeRow
    bytes = g * groups over the MEASURE_AGGREGATES cases (steady batches, whole periods;
    Spark's numRowsTotal), printed and returned.  The groups a batch rewrites cost more in
    principle (the new version of the map holds a new pair beside the previous version's),
    but a two-constant fit with numRowsUpdated does not tell that apart from the noise of
    Spark's sampled estimate (it gives a negative cost), so it is not modelled."""

    samples: list[tuple[float, float]] = []
    for c in MEASURE_AGGREGATES:
        cap, o, log = run_case(c, spark)
        print("\n".join(log), flush=True)
        detail = operator_of(cap, c.operator).aggregate
        assert detail is not None and o.bytes_spark is not None and o.rows_spark is not None
        entry = detail.key_bytes + detail.value_bytes
        rest = o.bytes_spark - c.partitions * STORE_OVERHEAD_BYTES - o.rows_spark * entry
        samples.append((o.rows_spark, rest))
        print(
            f"  groups {o.rows_spark:.0f} overhead {rest:.0f} ({rest / o.rows_spark:.1f} a group)"
        )
    g = sum(n * z for n, z in samples) / sum(n * n for n, _ in samples)
    print(f"GROUP_OVERHEAD_BYTES = {g:.1f}")
    return g


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", help="run only these cases (by name)")
    parser.add_argument("--no-spark", action="store_true", help="the runtime only")
    parser.add_argument("--measure", action="store_true", help="refit the store overheads")
    parser.add_argument(
        "--measure-aggregates", action="store_true", help="refit an aggregate's overheads"
    )
    args = parser.parse_args(argv)
    spark = None
    if not args.no_spark or args.measure or args.measure_aggregates:
        from sjoin.jvm.spark_driver import get_spark

        spark = get_spark(quiet=True)
    if args.measure:
        measure(spark)
        return 0
    if args.measure_aggregates:
        measure_aggregates(spark)
        return 0
    chosen = [c for c in CASES if not args.case or c.name in args.case]
    if args.case and not chosen:
        parser.error(f"--case takes one of {', '.join(c.name for c in CASES)}")
    rows = []
    for c in chosen:
        cap, o, log = run_case(c, spark)
        print("\n".join(log), flush=True)
        rows.append(row(c, cap, o))
    text = table(rows)
    print(text)
    if not args.case and spark is not None:
        write_doc(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
