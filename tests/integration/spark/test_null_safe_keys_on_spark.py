"""A null-safe equality between a join's sides on real Spark: ExtractEquiJoinKeys makes
``L.x <=> R.x`` (and IS NOT DISTINCT FROM) the two keys ``coalesce(x, default)`` and
``isnull(x)``, in the condition's order among the plain keys.  The plan's keys, printed as
Spark SQL, are the keys the StreamingSymmetricHashJoin prints (ids aside, the default literal
of each type as Spark prints it), its key_types are the state's key schema read back from
the checkpoint, and the generated job joins a NULL key with a NULL key (the parity scenarios
``null_safe_*`` compare whole runs batch by batch)."""

from __future__ import annotations

import re
import tempfile
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.vocabulary.sql import spark_sql

pytestmark = pytest.mark.spark

COLUMNS = (
    "k BIGINT, i INT, s STRING, d DOUBLE, dt DATE, ts TIMESTAMP, dec DECIMAL(10, 2), "
    "b BOOLEAN, bin BINARY, t TIMESTAMP"
)
ON = (
    "L.k = R.k AND L.i <=> R.k AND L.s <=> R.s AND L.d IS NOT DISTINCT FROM R.d AND "
    "L.dt <=> R.dt AND L.ts <=> R.ts AND L.dec <=> R.dec AND L.b <=> R.b AND L.bin <=> R.bin "
    "AND R.t BETWEEN L.t AND L.t + INTERVAL 5 SECONDS"
)
SPEC = f"""spark 4.3
stream l ({COLUMNS}) watermark t delay 10 seconds
stream r ({COLUMNS}) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R ON {ON}
  SELECT L.k AS k, L.s AS ls, R.s AS rs, R.bin AS rbin
"""

# Spark's explain prints a literal by its value (Literal.toString), the plan by its SQL
SPARK_LITERAL = {
    "''": "",
    "FALSE": "false",
    "X''": "0x",
    "CAST('1970-01-01' AS DATE)": "1970-01-01",
    "CAST('1970-01-01 00:00:00' AS TIMESTAMP)": "1970-01-01 00:00:00",
}


def _as_explained(sql: str) -> str:
    """A plan key's Spark SQL as the explain output writes it, ids removed."""
    text = re.sub(r"\b[LR]\.", "", sql)
    for written, shown in SPARK_LITERAL.items():
        text = text.replace(f", {written})", f", {shown})")
    return text


def _keys(line: str) -> tuple[list[str], list[str]]:
    """The left and right key lists of the StreamingSymmetricHashJoin line, ids removed."""
    body = line.split("StreamingSymmetricHashJoin ", 1)[1]
    left, rest = body[1:].split("], [", 1)
    right = rest.split("], ", 1)[0]

    def split(text: str) -> list[str]:
        parts, depth, start = [], 0, 0
        for i, ch in enumerate(text):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if ch == "," and depth == 0:
                parts.append(text[start:i].strip())
                start = i + 1
        parts.append(text[start:].strip())
        return [re.sub(r"#\d+L?(-T\d+ms)?", "", p) for p in parts]

    return split(left), split(right)


def test_null_safe_keys_are_sparks_keys_and_key_schema(spark: Any) -> None:
    from sjoin.jvm.spark_driver import StreamDriver
    from sjoin.jvm.verify import load_job

    result = check_text(SPEC, "null_safe.sjoin")
    assert result.ok and result.plan is not None, result.diagnostics
    join = result.plan.joins[0]
    null = {c: None for c in ("i", "s", "d", "dt", "ts", "dec", "b", "bin")}
    with tempfile.TemporaryDirectory() as tmp:
        job = load_job(result.plan, tmp)
        with StreamDriver(spark, {n: job.SCHEMAS[n] for n in ("l", "r")}) as driver:
            driver.start(job.build(spark, driver.inputs)["j"], "append")
            left = {**null, "k": 1, "i": 1, "t": "2026-01-01T00:00:00Z"}
            right = {"k": 1, "t": "2026-01-01T00:00:01Z", **null}
            # every null-safe operand NULL on both sides (L.i <=> R.k: 1 and 1): they join
            driver.feed({"l": [left], "r": [right]})
            # the defaults against NULL: no match (isnull differs)
            zero = {"k": 2, "i": 2, "s": "", "d": 0.0, "dt": "1970-01-01",
                    "ts": "1970-01-01T00:00:00Z", "dec": 0, "b": False, "bin": ""}  # fmt: skip
            driver.feed(
                {
                    "l": [{**zero, "t": "2026-01-01T00:00:02Z"}],
                    "r": [{**null, "k": 2, "t": "2026-01-01T00:00:03Z"}],
                }
            )
            run = driver.result()
            checkpoint = driver._checkpoint
            assert checkpoint is not None
            schema = (
                spark.read.format("statestore").option("joinSide", "left").load(checkpoint).schema
            )
    rows = [r for b in run.batches for r in b.rows]
    assert rows == [{"k": 1, "ls": None, "rs": None, "rbin": None}], rows
    (line,) = [x for x in run.plan.splitlines() if "StreamingSymmetricHashJoin" in x]
    spark_left, spark_right = _keys(line)
    ours_left = [_as_explained(spark_sql(a)) for a, _ in join.keys]
    ours_right = [_as_explained(spark_sql(b)) for _, b in join.keys]
    # L.i <=> R.k: Spark casts the INT side to BIGINT, which the plan leaves implicit (as it
    # does for a plain key), and a DOUBLE key is normalized (NormalizeFloatingNumbers)
    assert spark_left[1:3] == ["coalesce(cast(i as bigint), 0)", "isnull(cast(i as bigint))"]
    assert spark_right[1:3] == ["coalesce(k, 0)", "isnull(k)"], line
    normalized = [
        re.sub(
            r"knownfloatingpointnormalized\(normalizenanandzero\((.*)\)\)$",
            r"\1",
            k.replace("cast(i as bigint)", "i"),
        )
        for k in spark_left
    ]
    assert normalized == ours_left, (line, ours_left)
    assert len(spark_right) == len(ours_right)
    key = schema["key"].dataType
    assert [f.dataType.simpleString() for f in key.fields] == [
        str(k).lower().replace(", ", ",") for k in join.key_types
    ]
    assert tuple(map(str, join.key_types)) == (
        "BIGINT", "BIGINT", "BOOLEAN", "STRING", "BOOLEAN", "DOUBLE", "BOOLEAN", "DATE",
        "BOOLEAN", "TIMESTAMP", "BOOLEAN", "DECIMAL(10, 2)", "BOOLEAN", "BOOLEAN", "BOOLEAN",
        "BINARY", "BOOLEAN",
    )  # fmt: skip
