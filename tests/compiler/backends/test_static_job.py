"""The PySpark job of a stream-static join (issue 37, item 4): the table read with
`spark.read.format(...).schema(...).load()` (or the DataFrame `inputs` gives it), every name
and option through the one escaping function, and the join as DataFrame.join with the join
type as written (a LEFT ANTI stays a LEFT ANTI: only a stream-stream one needs the marker)."""

from __future__ import annotations

import ast
from typing import Any

from sjoin.api import check_text
from sjoin.compiler.backends.pyspark import compile_pyspark

SPEC = """\
spark 4.3
table customers (customer_id BIGINT, `seg'ment` STRING)
  from parquet (path = 'dim/cust''omers', mergeSchema = 'false')
stream orders (order_id BIGINT, customer_id BIGINT, amount DOUBLE, order_time TIMESTAMP)
  watermark order_time delay 10 minutes from json (path = 'in/orders')
join enriched = orders AS o LEFT OUTER JOIN customers AS c
  ON o.customer_id = c.customer_id AND o.amount > 10
  SELECT o.order_id, o.order_time, c.`seg'ment` AS segment
join unknown = orders AS o LEFT ANTI JOIN customers AS c ON o.customer_id = c.customer_id
sink enriched to parquet (path = 'out/enriched') checkpoint 'chk/enriched'
"""


def _build_text(job: str) -> str:
    """The job's build() function, as written."""
    start = job.index("def build(")
    return job[start : job.index("    return rels\n", start)] + "    return rels\n"


def _job() -> str:
    result = check_text(SPEC, "s.sjoin")
    assert result.ok, result.diagnostics
    return compile_pyspark(result.plan, "s.sjoin")


def test_the_job_of_a_stream_static_join(text_snapshot: Any) -> None:
    job = _job()
    ast.parse(job)  # valid Python
    assert _build_text(job) == text_snapshot


def test_the_table_is_read_in_batch_with_its_schema_and_options() -> None:
    job = _job()
    assert 'spark.read.format("parquet")' in job
    assert '.schema("`customer_id` BIGINT, `seg\'ment` STRING")' in job
    assert '.option("path", "dim/cust\'omers")' in job
    assert '.option("mergeSchema", "false")' in job
    assert '"left_anti",' in job and "__sjoin_matched" not in job
