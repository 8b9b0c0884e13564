"""Stream-static joins on real Spark (issue 37, item 4): the facts sjoin's `table` statement
and its stream-static join rely on, each checked on the installed Spark (4.3).

- Spark refuses, when the query starts, each (join type, table side) pair that
  UnsupportedOperationChecker refuses, with the message `compiler/planning/tables.py` quotes (E038),
  and runs every other pair.
- A stream-static join is stateless: the query reports no state operator, and a row far
  behind the stream's watermark still joins (nothing drops late rows, nothing is evicted).
- A Parquet table read with `spark.read` is listed once, when the DataFrame is made: a file
  added to its folder between micro-batches is not seen by the micro-batches after it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.planning import tables
from sjoin.compiler.vocabulary.model import JOIN_KINDS
from sjoin.jvm.spark_driver import StreamDriver

pytestmark = pytest.mark.spark

# sjoin's join type -> the how of DataFrame.join
_HOW = {
    "inner": "inner",
    "left_outer": "left_outer",
    "right_outer": "right_outer",
    "full_outer": "full_outer",
    "left_semi": "left_semi",
    "left_anti": "left_anti",
}


def _table(spark: Any, rows: list[tuple[int, str]]) -> Any:
    return spark.createDataFrame(rows, "k BIGINT, name STRING")


@pytest.mark.parametrize("how", list(_HOW))
@pytest.mark.parametrize("static_side", ["left", "right"])
def test_spark_allows_or_refuses_each_join_type_as_sjoin_says(
    spark: Any, how: str, static_side: str
) -> None:
    from pyspark.errors import AnalysisException

    with StreamDriver(spark, {"s": "k BIGINT, t TIMESTAMP"}) as driver:
        stream = driver.inputs["s"]
        table = _table(spark, [(1, "a")])
        left, right = (table, stream) if static_side == "left" else (stream, table)
        joined = left.join(right, "k", _HOW[how])
        reason = tables.refusal(how, static_side)  # type: ignore[arg-type]
        if reason is None:
            driver.start(joined)
            driver.feed({"s": [{"k": 1, "t": "2024-01-01T00:00:00"}]})
            assert driver.results()[-1].state_operators == []
        else:
            with pytest.raises(AnalysisException) as err:
                driver.start(joined)
            assert reason in str(err.value)
    # and sjoin says the same of the spec
    table_text = "table c (k BIGINT, name STRING) from parquet (path = 'c')\n"
    stream_text = "stream s (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds\n"
    pair = "c JOIN s" if static_side == "left" else "s JOIN c"
    sides = pair.split(" JOIN ")
    spec = (
        f"{table_text}{stream_text}join j = {sides[0]} {JOIN_KINDS[how].keyword} JOIN "  # type: ignore[index]
        f"{sides[1]} ON s.k = c.k\n"
    )
    errors = [d for d in check_text(spec, "s.sjoin").diagnostics if d.severity == "error"]
    if reason is None:
        assert errors == []
    else:
        assert [d.code for d in errors] == ["E038"]
        assert reason in errors[0].message


def test_a_stream_static_join_keeps_no_state_and_drops_no_late_row(spark: Any) -> None:
    with StreamDriver(spark, {"s": "k BIGINT, t TIMESTAMP"}) as driver:
        stream = driver.inputs["s"].withWatermark("t", "10 seconds")
        joined = stream.join(_table(spark, [(1, "a"), (2, "b")]), "k", "left_outer")
        driver.start(joined.select("k", "t", "name"))
        driver.feed({"s": [{"k": 1, "t": "2024-01-01T00:01:40"}]})
        # the watermark is now 00:01:30; a row at 00:00:00 is far behind it, and joins
        driver.feed({"s": [{"k": 2, "t": "2024-01-01T00:00:00"}, {"k": 3, "t": "2024-01-01"}]})
        batches = driver.results()
    assert all(b.state_operators == [] for b in batches)
    assert batches[-1].watermark == "2024-01-01T00:01:30.000Z"
    last = sorted((r["k"], r["name"]) for r in batches[-1].rows)
    assert last == [(2, "b"), (3, None)]


def test_a_file_table_is_listed_once_when_it_is_read(spark: Any, tmp_path: Path) -> None:
    folder = tmp_path / "customers"
    _table(spark, [(1, "a")]).write.parquet(str(folder))
    table = spark.read.schema("k BIGINT, name STRING").parquet(str(folder))
    with StreamDriver(spark, {"s": "k BIGINT, t TIMESTAMP"}) as driver:
        driver.start(driver.inputs["s"].join(table, "k", "inner").select("k", "name"))
        driver.feed({"s": [{"k": 1, "t": "2024-01-01"}, {"k": 2, "t": "2024-01-01"}]})
        # a second file in the table's folder, between two micro-batches
        _table(spark, [(2, "b")]).write.mode("append").parquet(str(folder))
        driver.feed({"s": [{"k": 1, "t": "2024-01-01"}, {"k": 2, "t": "2024-01-01"}]})
        batches = driver.results()
    assert [sorted((r["k"], r["name"]) for r in b.rows) for b in batches] == [
        [(1, "a")],
        [(1, "a")],
    ]
