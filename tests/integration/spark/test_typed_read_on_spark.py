"""What a generated job's Delta read does with the table's own schema, checked on the run's
Spark: ``.select`` of the spec's columns, then ``.to(DELTA_SCHEMAS[...])`` of their types
(compiler/backends/pyspark.py ``_typed_read``).  A Parquet file read without a declared
schema stands in for the Delta table: both carry their schema, and ``.to`` is a logical
projection, the same over any read."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from sjoin.compiler.backends import pyspark as backend
from sjoin.compiler.vocabulary.model import Column
from sjoin.compiler.vocabulary.types import BIGINT, STRING

pytestmark = pytest.mark.spark

SPEC_COLUMNS = (Column("customer_id", BIGINT), Column("segment", STRING), Column("country", STRING))


def _typed(spark: Any, path: Path) -> Any:
    """The table read as the generated job reads it: the job's own read chain
    (``_typed_read``) and DELTA_SCHEMAS entry (``_struct_type``), evaluated."""
    from pyspark.sql import types as T

    node = SimpleNamespace(name="customers", columns=SPEC_COLUMNS)
    chain = "".join(backend._typed_read(node, True))  # type: ignore[arg-type]
    schemas = {"customers": eval(backend._struct_type(SPEC_COLUMNS), {"T": T})}
    read = spark.read.parquet(str(path))
    return eval("read" + chain, {"read": read, "DELTA_SCHEMAS": schemas})


def _table(spark: Any, path: Path, ddl: str, row: tuple[Any, ...]) -> Path:
    spark.createDataFrame([row], ddl).write.mode("overwrite").parquet(str(path))
    return path


def test_the_columns_are_the_spec_s_in_its_order_and_types(spark: Any, tmp_path: Path) -> None:
    """An INT column is widened to the spec's BIGINT; the table's order and its other
    columns do not matter."""
    path = _table(
        spark,
        tmp_path / "t",
        "country STRING, customer_id INT, segment STRING, extra DOUBLE",
        ("de", 7, "gold", 1.5),
    )
    df = _typed(spark, path)
    assert df.dtypes == [("customer_id", "bigint"), ("segment", "string"), ("country", "string")]
    assert [tuple(r) for r in df.collect()] == [(7, "gold", "de")]


def test_a_type_spark_cannot_cast_safely_fails_the_read(spark: Any, tmp_path: Path) -> None:
    from pyspark.errors import AnalysisException

    path = _table(
        spark,
        tmp_path / "t",
        "country STRING, customer_id STRING, segment STRING",
        ("de", "7", "g"),
    )
    with pytest.raises(AnalysisException, match="INVALID_COLUMN_OR_FIELD_DATA_TYPE"):
        _typed(spark, path).collect()


def test_a_missing_column_fails_the_read_which_to_alone_fills_with_nulls(
    spark: Any, tmp_path: Path
) -> None:
    """Why the job selects the columns before ``.to``: Spark's ``.to`` reads a column the
    table lacks as nulls (Spark 4.3), where the plan expects the table's values."""
    from pyspark.errors import AnalysisException
    from pyspark.sql import types as T

    path = _table(spark, tmp_path / "t", "country STRING, customer_id BIGINT", ("de", 7))
    with pytest.raises(AnalysisException, match="UNRESOLVED_COLUMN"):
        _typed(spark, path).collect()
    schema = eval(backend._struct_type(SPEC_COLUMNS), {"T": T})
    alone = spark.read.parquet(str(path)).to(schema).collect()
    assert [tuple(r) for r in alone] == [(7, None, "de")]
