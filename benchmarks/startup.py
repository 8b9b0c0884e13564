"""Short runs, where start-up is most of the cost: a small test scenario on each engine.
bench.py runs each mode in a new process and also times the whole process.

    python benchmarks/startup.py {runtime,spark} WORKDIR

``runtime``: import sjoin, then plan the spec and run its trace (what one scenario test
costs inside a pytest run). ``spark``: import pyspark, start the local[2] session the
tests use, then run the generated job on the same batches through sjoin's test driver
(MemoryStream, one feed per batch, as `sjoin verify` does). Prints one JSON line.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any


def run_runtime(spec: Path, trace: Path) -> dict[str, Any]:
    start = time.perf_counter()
    from sjoin.api import check_file
    from sjoin.runtime import run

    imported = time.perf_counter()
    plan = check_file(spec).plan
    assert plan is not None
    result = run(plan, trace)
    done = time.perf_counter()
    return {
        "import_s": imported - start,
        "run_s": done - imported,
        "batches": len(result.batches),
        "output_rows": len(result.rows()),
    }


def run_spark(spec: Path, trace: Path) -> dict[str, Any]:
    start = time.perf_counter()
    import pyspark  # noqa: F401 - timed: the import is part of a Spark test's start

    from sjoin.api import check_file
    from sjoin.jvm.spark_driver import StreamDriver, get_spark
    from sjoin.jvm.verify import load_job, spark_row
    from sjoin.runtime.io.trace import read_trace, schemas_of

    imported = time.perf_counter()
    spark = get_spark("sjoin-bench-small")
    session = time.perf_counter()
    plan = check_file(spec).plan
    assert plan is not None
    parsed = read_trace(trace, schemas_of(plan))
    streams = {s.name: s for s in plan.streams}
    job = load_job(plan, str(spec.parent))
    with StreamDriver(spark, job.SCHEMAS) as driver:
        driver.start(job.build(spark, driver.inputs)["j"])
        for batch in parsed.batches:
            driver.feed(
                {n: [spark_row(r, streams[n]) for r in batch.rows_of(n)] for n in batch.rows}
            )
        results = driver.results()
    done = time.perf_counter()
    spark.stop()
    return {
        "import_s": imported - start,
        "session_s": session - imported,
        "run_s": done - session,
        "batches": len(results),
        "output_rows": sum(len(b.rows) for b in results),
    }


if __name__ == "__main__":
    mode, directory = sys.argv[1], Path(sys.argv[2])
    spec, trace = directory / "bench.sjoin", directory / "bench.trace.jsonl"
    print(json.dumps(run_runtime(spec, trace) if mode == "runtime" else run_spark(spec, trace)))
