"""Run the benchmark workload on ONE engine, in this process, and print one JSON line of
figures. bench.py starts a new process per run, so that start-up and peak memory are each
engine's own.

    python benchmarks/engines.py ENGINE WORKDIR ROWS_PER_SIDE BATCHES

ENGINE: runtime, runtime-rows (also builds the output row dicts), columnar (the columnar
engine on the Parquet files Spark reads), columnar-lines (also builds every output row's JSON
line, from its columns), columnar-jsonl (the same from the JSON-lines trace, as `sjoin run`
reads it by default), generated (the job
`sjoin compile` writes) or handwritten (benchmarks/handwritten_job.py), the last two on
local[2] Spark.

Figures: per-batch seconds and input rows (data batches in order), output rows, final state
rows (numRowsTotal after the last batch), peak resident memory (VmHWM of this process, plus
the JVM's for Spark), and for Spark the executed physical plan of the last batch.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import SHAPES, SINK_FORMATS, STREAMS, Workload  # not a package


def peak_rss_mib(pid: int | str = "self") -> float:
    """VmHWM (peak resident set) of a process, in MiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


def run_runtime(
    work: Workload,
    build_rows: bool,
    engine: str = "reference",
    parquet: bool = False,
    parquet_out: bool = False,
) -> dict[str, Any]:
    """The runtime (``engine``: reference or columnar) over the trace, one batch at a time
    (`iter_batches`), timing each batch as it completes.  Like Spark's no-op sink, the
    batch's output rows are counted and dropped; with ``build_rows`` each batch's rows are
    also built: the reference makes the JSON-ready dicts that `run()` returns, the columnar
    engine the UTF-8 JSON lines that `sjoin run` writes, from its columns.  With ``parquet`` the
    columnar engine reads the Parquet files Spark reads instead of the JSON-lines trace; with
    ``parquet_out`` it writes every output row to Parquet files, a file per batch."""
    from sjoin.api import check_file
    from sjoin.runtime import iter_batches, run_to_files
    from sjoin.runtime.io.trace import read_trace, schemas_of

    plan = check_file(work.spec).plan
    assert plan is not None, "the benchmark spec does not plan"
    # the run parses the whole trace before its first batch; time that parse on its own too,
    # to charge each batch its share instead of charging it all to the first
    trace = work.directory / "parquet" if parquet else work.trace
    if engine == "columnar":  # imported before the clock starts: the run imports it once too
        from sjoin.runtime.columnar.trace import read_trace_columns
    start = time.perf_counter()
    if engine == "columnar":
        read_trace_columns(trace, schemas_of(plan))
    else:
        read_trace(work.trace, schemas_of(plan))
    parse_s = time.perf_counter() - start

    batches: list[dict[str, Any]] = []
    output_rows = 0
    last = None
    previous = time.perf_counter()

    def timed(out: Any) -> None:
        nonlocal output_rows, previous, last
        output_rows += out.row_count
        now = time.perf_counter()
        if out.data:
            batches.append({"seconds": now - previous, "rows": 2 * work.rows_per_side})
        previous = now
        last = out

    if parquet_out:  # what `sjoin run --output-format parquet --output DIR` does
        with tempfile.TemporaryDirectory() as directory:
            run_to_files(
                plan,
                trace,
                output=Path(directory) / "out",
                output_format="parquet",
                engine="columnar",
                on_batch=lambda out, _: timed(out),
            )
    else:
        for out in iter_batches(plan, trace, engine=engine):  # type: ignore[arg-type]
            if build_rows and engine == "columnar":
                assert sum(text.count(b"\n") for text in out.output_text()) == out.row_count
            elif build_rows:
                assert len(out.rows) == out.row_count
            timed(out)
    assert last is not None
    batches[0]["seconds"] -= parse_s
    for batch in batches:
        batch["seconds"] += parse_s / len(batches)
    return {
        "batches": batches,
        "output_rows": output_rows,
        "state_rows": last.progress["operators"][0]["numRowsTotal"],
        "peak_mib": peak_rss_mib(),
        "parse_seconds": parse_s,
    }


def run_spark(work: Workload, job: str) -> dict[str, Any]:
    """Real local[2] Spark: the generated job's ``build`` (or the hand-written job) over file
    sources taking one Parquet file per stream per trigger, into the no-op sink."""

    here = Path(__file__).resolve().parent
    dirs = {s: str(work.parquet_dir(s)) for s in STREAMS}
    if job == "generated":
        from sjoin.api import check_file
        from sjoin.compiler.backends.pyspark import compile_pyspark

        plan = check_file(work.spec).plan
        assert plan is not None
        path = work.directory / "generated_job.py"
        path.write_text(compile_pyspark(plan, str(work.spec)))
        module = _load(path)
        conf = dict(module.SPARK_CONF)
    else:
        module = _load(here / "handwritten_job.py")
        conf = dict(module.CONF)
    spark = _local_spark(f"sjoin-bench-{job}", conf)
    if job == "generated":
        inputs = {
            s: spark.readStream.schema(module.SCHEMAS[s]).option("maxFilesPerTrigger", 1).parquet(d)
            for s, d in dirs.items()
        }
        result = module.build(spark, inputs)["j"]
    else:
        result = module.build(spark, dirs["l"], dirs["r"])
    with tempfile.TemporaryDirectory(prefix="sjoin-bench-chk-") as checkpoint:
        query = result.writeStream.format("noop").option("checkpointLocation", checkpoint).start()
        query.processAllAvailable()
        progress = [json.loads(p.json) for p in query.recentProgress]
        plan_text = str(query._jsq.streamingQuery().lastExecution().executedPlan().toString())
        query.stop()
    executed = sorted(
        (p for p in progress if "addBatch" in p.get("durationMs", {})), key=lambda p: p["batchId"]
    )
    batches = [
        {"seconds": p["durationMs"]["triggerExecution"] / 1000, "rows": p["numInputRows"]}
        for p in executed
        if p["numInputRows"] > 0
    ]
    jvm_pid = spark._jvm.java.lang.ProcessHandle.current().pid()  # type: ignore[union-attr]
    figures = {
        "batches": batches,
        "output_rows": sum(p["sink"].get("numOutputRows", 0) for p in executed),
        "state_rows": executed[-1]["stateOperators"][0]["numRowsTotal"],
        "peak_mib": peak_rss_mib() + peak_rss_mib(jvm_pid),
        "plan": plan_text,
    }
    spark.stop()
    return figures


def _local_spark(name: str, conf: dict[str, str]) -> Any:
    """A local[2] session with the job's confs and the bench's (no UI, loopback, 8 GiB)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]").appName(name)
    for key, value in {
        **conf,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        # local mode runs everything in the driver: with the default 1 GiB heap the N = 500k
        # query failed and its JVM died (the HDFS-backed state store keeps state in memory)
        "spark.driver.memory": "8g",
    }.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_spark_sink(directory: Path, shape: str, output_format: str, out: Path) -> dict[str, Any]:
    """Issue 26: the job `sjoin compile` generates for a production-shaped workload, whole:
    its ``build`` over file sources taking one Parquet file per stream per trigger (the
    trace's batches), and its own ``start_sinks``, which writes the output relation in
    ``output_format`` (the spec's `sink`: Parquet or JSON) under ``out`` (the spec's
    relative `out/` and `chk/` paths).  Output rows are counted from the files afterwards
    by the caller; this reports the batches, final state rows and peak memory."""
    from sjoin.api import check_file
    from sjoin.compiler.backends.pyspark import compile_pyspark

    directory, out = directory.resolve(), out.resolve()
    spec = directory / f"{shape}.{output_format}.sjoin"
    plan = check_file(spec).plan
    assert plan is not None, f"{spec} does not plan"
    path = out / "generated_job.py"
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(compile_pyspark(plan, str(spec)))
    module = _load(path)
    # the sink's path and checkpoint are relative (out/<relation>, chk/<relation>): the JVM
    # resolves them against the directory it starts in
    os.chdir(out)
    spark = _local_spark(f"sjoin-bench-{shape}-{output_format}", dict(module.SPARK_CONF))
    inputs = {
        s: spark.readStream.schema(module.SCHEMAS[s])
        .option("maxFilesPerTrigger", 1)
        .parquet(str(directory / "parquet" / s))
        for s in STREAMS
    }
    rels = module.build(spark, inputs)
    (query,) = module.start_sinks(rels)
    query.processAllAvailable()
    progress = [json.loads(p.json) for p in query.recentProgress]
    query.stop()
    executed = sorted(
        (p for p in progress if "addBatch" in p.get("durationMs", {})), key=lambda p: p["batchId"]
    )
    assert executed[0]["batchId"] == 0, "recentProgress lost the first batches"
    jvm_pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    figures = {
        "batches": [
            {"seconds": p["durationMs"]["triggerExecution"] / 1000, "rows": p["numInputRows"]}
            for p in executed
            if p["numInputRows"] > 0
        ],
        "executed_batches": len(executed),
        "state_rows": sorted(o["numRowsTotal"] for o in executed[-1]["stateOperators"]),
        "peak_mib": peak_rss_mib() + peak_rss_mib(jvm_pid),
        "sink": SINK_FORMATS[output_format],
    }
    spark.stop()
    return figures


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    if sys.argv[1] == "spark-sink":  # spark-sink WORKDIR SHAPE FORMAT OUTDIR
        directory, shape, output_format, out = sys.argv[2:6]
        assert shape in SHAPES and output_format in SINK_FORMATS
        print(json.dumps(run_spark_sink(Path(directory), shape, output_format, Path(out))))
        return
    engine, directory, rows, batches = sys.argv[1:5]
    work = Workload(Path(directory), int(rows), int(batches))
    if engine in ("runtime", "runtime-rows"):
        figures = run_runtime(work, build_rows=engine == "runtime-rows")
    elif engine in ("columnar", "columnar-lines", "columnar-jsonl", "columnar-parquet"):
        figures = run_runtime(
            work,
            build_rows=engine != "columnar",
            engine="columnar",
            parquet=engine != "columnar-jsonl",
            parquet_out=engine == "columnar-parquet",
        )
    else:
        figures = run_spark(work, engine)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
