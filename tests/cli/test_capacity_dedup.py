"""`sjoin plan --rates` with deduplications and the stateless relations around them: a dedup's
keys in state at a rate and a key cardinality, by its eviction (event time among the keys,
WITHIN WATERMARK's expiry, never: unbounded and said so), and the rates carried through
unions (their inputs' sum), views (a WHERE taken to keep every row, said so) and stream-static
joins (stateless, one table row per stream row, said so) to the operators above them.

The model is checked against the reference runtime (whose dedup agrees with Spark 4.3.0 batch
by batch: the parity scenarios ``dedup_*``): a trace at the predicted rates, its
``numRowsTotal`` at steady state."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sjoin.api import check_text
from sjoin.cli.main import main
from sjoin.compiler.describe.capacity import Capacity, OperatorCapacity, capacity_text, predict
from sjoin.compiler.planning.plan import Plan
from sjoin.runtime import run

HEAD = "spark 4.3\n"
ORDERS = "stream o (id BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds\n"


def _plan(text: str) -> Plan:
    result = check_text(HEAD + text, "d.sjoin")
    assert result.plan is not None, [d.message for d in result.diagnostics]
    return result.plan  # type: ignore[no-any-return]


def _op(cap: Capacity, name: str) -> OperatorCapacity:
    return next(op for op in cap.operators if op.name == name)


def test_within_watermark_keeps_a_key_for_its_expiry_and_the_watermark_lag() -> None:
    plan = _plan(ORDERS + "dedup d = o ON (id) WITHIN WATERMARK\n")
    cap = predict(plan, {"o": 10.0}, keys=50, trigger_ms=1000)
    op = _op(cap, "d")
    assert op.kind == "dedup" and op.bounded and op.dedup is not None
    # kept from its first row until the watermark (10 s behind, a trigger late) passes the
    # row's time + 10 s: R = 21 s; each of 50 keys arrives at 0.2 rows/s: λR = 4.2
    assert op.dedup.retention_ms == 21000
    assert op.rows == pytest.approx(50 * 4.2 / 5.2)
    assert op.output_per_second == pytest.approx(10 / 5.2)  # the first row of each stay passes
    assert op.dedup.value_bytes == 16  # expiresAtMicros
    # without --keys every row is its own key: all pass, each kept R
    alone = _op(predict(plan, {"o": 10.0}, trigger_ms=1000), "d")
    assert alone.rows == pytest.approx(210) and alone.output_per_second == 10


def test_a_time_among_within_watermark_keys_makes_every_row_its_own_key() -> None:
    plan = _plan(ORDERS + "dedup d = o ON (id, t) WITHIN WATERMARK\n")
    op = _op(predict(plan, {"o": 10.0}, keys=50, trigger_ms=1000), "d")
    assert op.dedup is not None and op.dedup.key_values is None
    assert op.rows == pytest.approx(210) and op.output_per_second == 10


def test_the_event_time_among_the_keys_keeps_each_row_until_the_watermark_passes_it() -> None:
    plan = _plan(ORDERS + "dedup d = o ON (id, t)\n")
    op = _op(predict(plan, {"o": 10.0}, keys=50, trigger_ms=1000), "d")
    assert op.bounded and op.dedup is not None and op.dedup.eviction == "key"
    assert op.dedup.retention_ms == 11000 and op.rows == pytest.approx(110)
    assert op.output_per_second == 10
    assert any("every row taken as a key of its own" in n for n in op.notes)
    assert op.dedup.value_bytes == 0  # Spark stores an empty row


def test_never_evicted_is_unbounded_and_said_so() -> None:
    plan = _plan(ORDERS + "dedup d = o ON (id)\n")
    grows = _op(predict(plan, {"o": 10.0}), "d")  # every row a new key
    assert not grows.bounded and grows.rows is None
    assert grows.rows_per_hour == 36000 and grows.bytes_per_hour is not None
    text = "\n".join(capacity_text(predict(plan, {"o": 10.0})))
    assert "GROWS WITHOUT LIMIT: +36,000 keys/hour" in text and "NEVER EVICTED" in text
    filled = _op(predict(plan, {"o": 10.0}, keys=1000), "d")  # fills up to 1,000 keys
    assert not filled.bounded and filled.rows == 1000 and filled.output_per_second == 0
    assert filled.rows_at is not None and filled.rows_at(100_000) == pytest.approx(
        1000 * -math.expm1(-1.0)
    )
    assert any("up to the 1,000 values" in n for n in filled.notes)


def test_rates_through_a_union_a_view_and_a_stream_static_join() -> None:
    plan = _plan(
        ORDERS
        + "stream o2 (id BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds\n"
        + "table c (id BIGINT, name STRING) from parquet (path = 'c')\n"
        + "union u = o UNION ALL o2\n"
        + "view w = SELECT x.id, x.t, x.v FROM u AS x WHERE x.v <> 'test'\n"
        + "join e = w AS a INNER JOIN c AS b ON a.id = b.id SELECT a.id, a.t, b.name\n"
        + "dedup d = e ON (id, t)\n"
    )
    cap = predict(plan, {"o": 10.0, "o2": 5.0}, keys=50, trigger_ms=1000)
    op = _op(cap, "d")
    assert op.dedup is not None and op.dedup.input_rate == 15  # the union's sum, carried up
    assert [o.name for o in cap.operators] == ["d"]  # the stateless ones hold nothing
    assert any("view `w`: its WHERE taken to keep every row" in n for n in cap.notes)
    assert any("stream-static join `e`: stateless" in n for n in cap.notes)


def test_a_join_above_a_dedup_reads_its_predicted_output() -> None:
    plan = _plan(
        ORDERS
        + "stream p (id BIGINT, t TIMESTAMP) watermark t delay 10 seconds\n"
        + "dedup d = o ON (id) WITHIN WATERMARK\n"
        + "join j = d AS a INNER JOIN p AS b ON a.id = b.id"
        + " AND b.t BETWEEN a.t AND a.t + INTERVAL 5 SECONDS\n"
    )
    cap = predict(plan, {"o": 10.0, "p": 1.0}, keys=50, trigger_ms=1000)
    dedup, join = _op(cap, "d"), _op(cap, "j")
    assert join.sides[0].rate == pytest.approx(dedup.output_per_second)
    assert join.sides[0].rate == pytest.approx(10 / 5.2)


def test_the_cli_shows_it_in_text_and_json(tmp_path: Path) -> None:
    spec = tmp_path / "d.sjoin"
    spec.write_text(HEAD + ORDERS + "dedup d = o ON (id) WITHIN WATERMARK\n")
    args = ["plan", str(spec), "--rates", "o=10/s", "--keys", "50", "--trigger", "1s"]
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 0, text.stderr
    assert "dedup d (dropDuplicatesWithinWatermark)" in text.stdout
    assert "40.4 keys" in text.stdout and "output         1.92 rows/s" in text.stdout
    data = CliRunner().invoke(main, [*args, "--format", "json"])
    (op,) = json.loads(data.stdout)["capacity"]["operators"]
    assert op["kind"] == "dedup" and op["bounded"] is True
    assert op["dedup"]["eviction"] == "expiry" and op["dedup"]["retention_ms"] == 21000
    assert op["dedup"]["key_values"] == 50


def _trace(rate: int, keys: int, seconds: int, seed: int) -> list[dict[str, Any]]:
    """``rate`` rows a second of event time, one batch a second, ids drawn uniformly."""
    rng = random.Random(seed)
    out = []
    for s in range(seconds):
        for i in range(rate):
            ms = s * 1000 + i * 1000 // rate
            t = f"2024-01-01T00:{ms // 60000:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}Z"
            row = {"id": rng.randrange(keys), "t": t, "v": "x"}
            out.append({"batch": s, "stream": "o", "row": row})
    return out


@pytest.mark.parametrize(
    "spec", ["dedup d = o ON (id) WITHIN WATERMARK\n", "dedup d = o ON (id, t)\n"]
)
def test_the_prediction_meets_the_runtime_at_steady_state(spec: str) -> None:
    """A trace at 10 rows/s over 50 ids, a data batch a second of event time: the mean of
    ``numRowsTotal`` and of the rows passed per data batch over the second half within 10 %
    of the prediction.  A fed trace runs a no-data batch after each data batch (the watermark
    moved), which evicts with the watermark the data batch just set: the model's batches back
    to back (no trigger lag)."""
    plan = _plan(ORDERS + spec)
    cap = _op(predict(plan, {"o": 10.0}, keys=50, trigger_ms=0), "d")
    result = run(plan, _trace(10, 50, 240, seed=7), engine="reference")
    data = [b for b in result.batches if b.data]
    steady = [b.progress["operators"][0] for b in data[len(data) // 2 :]]
    total = sum(m["numRowsTotal"] for m in steady) / len(steady)
    passed = sum(m["numRowsUpdated"] for m in steady) / len(steady)
    assert cap.rows is not None and cap.output_per_second is not None
    assert total == pytest.approx(cap.rows, rel=0.10)
    assert passed == pytest.approx(cap.output_per_second, rel=0.10)
