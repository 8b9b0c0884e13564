"""The generated build() runs unchanged on a Spark Connect session (a local one started from
the pyspark package), so the jobs use only DataFrame APIs that Spark Connect supports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sjoin.api import check_file
from sjoin.compiler.backends.pyspark import compile_pyspark

from ...conftest import ROOT

pytestmark = pytest.mark.spark

SCRIPT = """
import json, sys
from pyspark.sql import SparkSession
sys.path.insert(0, ".")
import job

spark = (SparkSession.builder.remote("local[2]")
         .config("spark.sql.shuffle.partitions", "2").getOrCreate())
assert type(spark).__module__.startswith("pyspark.sql.connect"), type(spark)
inputs = {name: spark.readStream.schema(job.SCHEMAS[name]).json(f"in/{name}")
          for name in job.SCHEMAS}
rels = job.build(spark, inputs)
query = (rels["attributed"].writeStream.format("parquet").option("path", "out")
         .option("checkpointLocation", "chk").trigger(availableNow=True).start())
query.awaitTermination()
rows = spark.read.parquet("out").collect()
print(json.dumps(sorted([r.ad_id, r.campaign, r.user_id] for r in rows)))
spark.stop()
"""


def test_build_runs_on_spark_connect(tmp_path: Path) -> None:
    pytest.importorskip("grpc", reason="Spark Connect needs pyspark[connect]")
    result = check_file(ROOT / "examples" / "ad_attribution.sjoin")
    assert result.plan is not None
    (tmp_path / "job.py").write_text(compile_pyspark(result.plan, "ad_attribution.sjoin"))
    data = {
        "impressions": [
            {"ad_id": 1, "impression_time": "2026-01-01T10:00:00Z", "campaign": "a"},
            {"ad_id": 2, "impression_time": "2026-01-01T10:00:00Z", "campaign": "internal"},
        ],
        "clicks": [{"ad_id": 1, "click_time": "2026-01-01T10:30:00Z", "user_id": "u1"}],
    }
    for name, rows in data.items():
        (tmp_path / "in" / name).mkdir(parents=True)
        (tmp_path / "in" / name / "0.json").write_text(
            "\n".join(json.dumps(r) for r in rows) + "\n"
        )
    (tmp_path / "run.py").write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    # the match, and the impression that fails the pre-join filter (null-padded at once)
    assert rows == [[1, "a", "u1"], [2, "internal", None]]
