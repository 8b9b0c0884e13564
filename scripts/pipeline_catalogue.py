"""The catalogue of Spark Declarative Pipelines (tests/integration/pipelines/catalogue/): run each
case with SDP's own CLI on local Spark through one Spark Connect server, and record what Spark
does with it in the case's `expected.json`.

    .venv/bin/python scripts/pipeline_catalogue.py record [CASE ...]   # (re)write expected.json
    .venv/bin/python scripts/pipeline_catalogue.py check [CASE ...]    # compare, exit 1 on a change
    .venv/bin/python scripts/pipeline_catalogue.py project CASE DIR    # a runnable copy of CASE

A case is a pipeline project as a team writes it: `spark-pipeline.yml`, `transformations/`
(SQL files; `inputs.py` reads each stream's files) and `data/STREAM/NN.json`, its input
files. To run a case, a copy of it is made under a work directory, where each input file gets
the modification time `BASE + NN` seconds (a file source reads files in the order of their
modification times, and a checkout gives them none), and `storage` (the copy's
`pipeline-storage`) and `database` (`cat_CASE`) are added to its `spark-pipeline.yml`.

Everything that talks to Spark Connect runs in a child process (a Connect session made in a
process sets SPARK_CONNECT_MODE_ENABLED in its environment for good, and classic Spark
sessions made in it afterwards fail). The child creates the case's database, runs the
pipeline with `pyspark.pipelines.cli.run` (what `spark-pipelines run` calls), and reads every
table of the database back; the server runs with `spark.sql.pipelines.maxFlowRetryAttempts=0`
(a failing flow is not retried: SDP would retry it twice, with back-off, and fail the same
way) and the session time zone UTC.

The outcome of a case (`expected.json`):
- `verdict`: `accepted` (the run COMPLETED) or `rejected`;
- for a rejected case, `error`: the flow that failed and the first line of its error as SDP's
  log prints it, its error class (`condition`, and `cause`: the class a failed streaming
  query ended with), and `run`: the exception the run ended with (`_error`);
- for an accepted one, `tables`: every table of the pipeline, its columns (name, Spark type)
  and its final rows (Spark's JSON of each row, null fields filled in, sorted), and `flows`:
  for each flow, its micro-batches as its checkpoint holds them: the batch's watermark, and
  which input files its rows came from (through the streaming tables it reads: the table's
  file sink log names the batch of the table's flow that wrote each file, whose file source
  log names the input files it read). A batch that read nothing new is a no-data batch.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parents[1]
CATALOGUE = ROOT / "tests" / "integration" / "pipelines" / "catalogue"
HOST = "127.0.0.1"
BASE_MTIME = 1_767_225_600  # 2026-01-01T00:00:00Z: input file NN gets BASE + NN seconds
RUN_TIMEOUT = 600  # seconds for one case's child process
MARK = "@@catalogue@@ "  # the child's result line on its stdout
JOBS = 4  # cases run at a time on the one server


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


@contextmanager
def connect_server(work: Path, timeout: float = 300.0) -> Iterator[str]:
    """One local Spark Connect server (`local[2]`, its warehouse under ``work``) for as long
    as the context lasts: its address, sc://HOST:PORT. The server is stopped afterwards."""
    home = spark_home()
    port = _free_port()
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, SPARK_HOME=str(home), PYSPARK_PYTHON=sys.executable)
    confs = {
        "spark.connect.grpc.binding.port": str(port),
        "spark.connect.grpc.binding.address": HOST,
        "spark.sql.warehouse.dir": str(work / "warehouse"),
        "spark.ui.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.pipelines.maxFlowRetryAttempts": "0",
    }
    args = [str(home / "bin" / "spark-submit"), "--class"]
    args += ["org.apache.spark.sql.connect.service.SparkConnectServer", "--master", "local[2]"]
    for key, value in confs.items():
        args += ["--conf", f"{key}={value}"]
    with (work / "server.log").open("w") as log:
        server = subprocess.Popen(
            [*args, "spark-internal"], cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            deadline = time.monotonic() + timeout
            while True:
                with socket.socket() as s:
                    if s.connect_ex((HOST, port)) == 0:
                        break
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((work / "server.log").read_text()[-3000:])
                time.sleep(1)
            yield f"sc://{HOST}:{port}"
        finally:
            server.terminate()
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:  # pragma: no cover
                server.kill()


def cases() -> list[str]:
    return sorted(p.parent.name for p in CATALOGUE.glob("*/spark-pipeline.yml"))


def database(case: str) -> str:
    return f"cat_{case}"


def project(case: Path, into: Path) -> Path:
    """A runnable copy of ``case`` in ``into`` (made; must not exist): its files, the input
    files' modification times in their order, and `storage` and `database` in its
    spark-pipeline.yml. The copy's spark-pipeline.yml."""
    shutil.copytree(case, into, ignore=shutil.ignore_patterns("expected.json", "__pycache__"))
    for folder in sorted((into / "data").iterdir()):
        for n, file in enumerate(sorted(folder.glob("*.json"))):
            os.utime(file, (BASE_MTIME + n, BASE_MTIME + n))
    spec = into / "spark-pipeline.yml"
    storage = (into / "pipeline-storage").as_uri()
    text = spec.read_text(encoding="utf-8")
    spec.write_text(
        text + f'storage: "{storage}"\ndatabase: "{database(case.name)}"\n', encoding="utf-8"
    )
    return spec


# Runs in a child process: argv = remote, database, spec. Prints MARK + the result as JSON.
_CHILD = r"""
import json, sys
from pathlib import Path
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

remote, db, spec = sys.argv[1:4]
MARK = sys.argv[4]
spark = SparkSession.builder.remote(remote).getOrCreate()
spark.sql("CREATE DATABASE IF NOT EXISTS `" + db + "`")
spark.stop()

from pyspark.pipelines import cli

result = {}
try:
    cli.run(Path(spec), full_refresh=[], full_refresh_all=False, refresh=[], dry=False)
except PySparkException as err:
    result["error"] = {
        "condition": err.getCondition(),
        "sqlstate": err.getSqlState(),
        "message": err.getMessage(),
        "type": type(err).__name__,
    }
sys.stdout.flush()
if "error" not in result:
    spark = SparkSession.builder.remote(remote).getOrCreate()
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    tables = {}
    for table in spark.catalog.listTables(db):
        df = spark.read.table("`" + db + "`.`" + table.name + "`")
        described = spark.sql("DESCRIBE TABLE EXTENDED `" + db + "`.`" + table.name + "`")
        location = [r[1] for r in described.collect() if r[0] == "Location"]
        tables[table.name] = {
            "columns": [[f.name, f.dataType.simpleString()] for f in df.schema.fields],
            "rows": [r[0] for r in df.toJSON().collect()],
            "location": location[0],
        }
    result["tables"] = tables
    spark.stop()
print(MARK + json.dumps(result), flush=True)
"""


def run_case(case: Path, remote: str, work: Path) -> dict[str, Any]:
    """Run ``case`` on the server ``remote`` in a copy under ``work``; its outcome."""
    spec = project(case, work / case.name)
    env = dict(os.environ, SPARK_REMOTE=remote, PYSPARK_PYTHON=sys.executable)
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, remote, database(case.name), str(spec), MARK],
        cwd=spec.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    log = done.stdout + done.stderr
    (work / f"{case.name}.log").write_text(log, encoding="utf-8")
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARK)]
    if done.returncode != 0 or len(lines) != 1:
        raise RuntimeError(f"case {case.name}: the run ended without a result:\n{log[-5000:]}")
    result = json.loads(lines[0][len(MARK) :])
    outcome: dict[str, Any] = {"spark": spark_version()}
    if "error" in result:
        outcome["verdict"] = "rejected"
        outcome["error"] = _error(result["error"], done.stdout, database(case.name), work)
        return outcome
    if "Run is COMPLETED" not in done.stdout:
        raise RuntimeError(f"case {case.name}: no error, but no COMPLETED run:\n{log[-5000:]}")
    outcome["verdict"] = "accepted"
    outcome["tables"] = {
        name: {"columns": t["columns"], "rows": _rows(t["rows"], t["columns"])}
        for name, t in sorted(result["tables"].items())
    }
    locations = {name: _local(t["location"]) for name, t in result["tables"].items()}
    outcome["flows"] = _flows(spec.parent, locations)
    return outcome


def spark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_EXPRESSION_ID = re.compile(r"#\d+L?\b")
_CONDITION = re.compile(r"\[([A-Z_][A-Z0-9_.]*)\]")
_CAUSE = re.compile(r"terminated with exception: \[([A-Z_][A-Z0-9_.]*)\]")


def _first_line(message: str, work: Path) -> str:
    """The first line of an error message (the message goes on with the analysed plan),
    with what changes from run to run masked: query ids, expression ids, the work dir."""
    line = message.strip().splitlines()[0].strip() if message.strip() else ""
    line = _EXPRESSION_ID.sub("#", line.replace(str(work), "<work>"))
    return _UUID.sub("<id>", line)


def _error(error: dict[str, Any], log: str, db: str, work: Path) -> dict[str, Any]:
    """What a rejected case records: the first flow that failed (to resolve, or to run) and
    the first line of its error as SDP's log prints it; the error class (`condition`) at the
    start of that message, or else the one of the exception the run ended with; `cause`, the
    class of the error a failed streaming query (STREAM_FAILED) ended with; and that
    exception (`run`: its type, class, SQLSTATE and first line). When a flow fails to
    resolve, SDP ends the run with `Failed to resolve flows in the pipeline.`, an exception
    without a class: the flow's own error is only in the log."""
    flow, message = None, None
    lines = log.splitlines()
    for n, line in enumerate(lines):
        if (" has FAILED" in line or "Failed to resolve flow: " in line) and "'" in line:
            flow = line.split("'", 2)[1].removeprefix(f"spark_catalog.{db}.")
            after = lines[n + 1] if n + 1 < len(lines) else ""
            message = after.removeprefix("Error: ") if after.startswith("Error: ") else None
            break
    run_message = _first_line(str(error["message"]), work)
    first = _first_line(message, work) if message else run_message
    named = _CONDITION.match(first)
    cause = _CAUSE.search(first)
    return {
        "flow": flow,
        "condition": named.group(1) if named else error["condition"],
        "cause": cause.group(1) if cause else None,
        "message": first,
        "run": {
            "type": error["type"],
            "condition": error["condition"],
            "sqlstate": error["sqlstate"],
            "message": run_message,
        },
    }


def _rows(rows: list[str], columns: list[list[str]]) -> list[dict[str, Any]]:
    """Spark's JSON rows, each with every column (Spark's JSON leaves null fields out),
    sorted by their canonical JSON."""
    full = []
    for text in rows:
        row = json.loads(text)
        full.append({name: row.get(name) for name, _ in columns})
    return sorted(full, key=lambda r: json.dumps(r, sort_keys=True))


def _read_log(folder: Path) -> dict[int, list[dict[str, Any]]]:
    """A metadata log (a checkpoint's sources/N, a file sink's _spark_metadata): its
    entries per batch id. A compacted log would merge batches: a case has fewer batches
    than the compaction interval (10), which this checks."""
    entries: dict[int, list[dict[str, Any]]] = {}
    if not folder.is_dir():
        return entries
    for file in folder.iterdir():
        if file.name.startswith(".") or file.name == "_metadata":
            continue
        if not file.name.isdigit():
            raise RuntimeError(f"unexpected metadata log file {file} (a compacted log?)")
        lines = file.read_text(encoding="utf-8").splitlines()
        entries[int(file.name)] = [json.loads(line) for line in lines[1:] if line.strip()]
    return entries


def _local(uri: str) -> Path:
    return Path(unquote(urlsplit(uri).path))


def _flows(project_dir: Path, tables: dict[str, Path]) -> dict[str, list[dict[str, Any]]]:
    """Each flow's micro-batches, from its checkpoint under the project's storage."""
    data = project_dir / "data"
    checkpoints = sorted((project_dir / "pipeline-storage" / "_checkpoints").glob("*/*/*/*/*"))
    # the input files each flow's batch read straight from data/ (the streams' flows)
    read: dict[str, dict[int, list[str]]] = {}
    for checkpoint in checkpoints:
        flow = checkpoint.parent.name
        per_batch: dict[int, list[str]] = {}
        for source in sorted((checkpoint / "sources").glob("*")):
            for batch, entries in _read_log(source).items():
                per_batch.setdefault(batch, []).extend(e["path"] for e in entries)
        read[flow] = per_batch
    # which batch of which table's flow wrote each file of a table
    written: dict[Path, tuple[str, int]] = {}
    for table, location in tables.items():
        for batch, entries in _read_log(location / "_spark_metadata").items():
            for entry in entries:
                written[_local(entry["path"])] = (table, batch)

    def inputs(path: str, seen: int = 0) -> list[str]:
        local = _local(path)
        if local.is_relative_to(data):
            return [local.relative_to(data).as_posix()]
        if local not in written or seen > 20:
            raise RuntimeError(f"cannot trace {path} back to the input files")
        table, batch = written[local]
        return [i for p in read.get(table, {}).get(batch, []) for i in inputs(p, seen + 1)]

    flows: dict[str, list[dict[str, Any]]] = {}
    for checkpoint in checkpoints:
        flow = checkpoint.parent.name
        batches = []
        offsets = _read_offsets(checkpoint / "offsets")
        for batch, watermark_ms in offsets:
            files = sorted(i for p in read[flow].get(batch, []) for i in inputs(p))
            batches.append({"batch": batch, "watermark": _iso(watermark_ms), "inputs": files})
        flows[flow] = batches
    return dict(sorted(flows.items()))


def _read_offsets(folder: Path) -> list[tuple[int, int]]:
    """(batch id, batchWatermarkMs) of each batch the offset log holds, committed or not."""
    out = []
    for file in folder.iterdir():
        if file.name.isdigit():
            meta = json.loads(file.read_text(encoding="utf-8").splitlines()[1])
            out.append((int(file.name), int(meta["batchWatermarkMs"])))
    return sorted(out)


def _iso(ms: int) -> str:
    moment = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if ms % 1000:
        text += f".{ms % 1000:03d}"
    return text + "Z"


_TIMESTAMP = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z")


def canonical_value(value: Any) -> Any:
    """A value of a row or a watermark, as comparable between Spark's JSON and sjoin's:
    timestamps (`...Z`, any number of fractional digits) as UTC datetimes, numbers as
    Decimals, structs (windows) as their sorted items."""
    if isinstance(value, dict):
        return tuple(sorted((k, canonical_value(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(canonical_value(v) for v in value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    if isinstance(value, str):
        found = _TIMESTAMP.fullmatch(value)
        if found:
            whole = dt.datetime.strptime(found.group(1), "%Y-%m-%dT%H:%M:%S")
            micros = int((found.group(2) or "0").ljust(6, "0")[:6])
            return whole.replace(microsecond=micros, tzinfo=dt.UTC)
    return value


def canonical_row(row: dict[str, Any], columns: Sequence[str]) -> tuple[Any, ...]:
    """A row's values in the order of ``columns`` (a missing column is null)."""
    return tuple(canonical_value(row.get(c)) for c in columns)


def dumps(outcome: dict[str, Any]) -> str:
    """The outcome as canonical JSON: keys sorted, two-space indents, each row on one line."""
    outcome = json.loads(json.dumps(outcome))  # a copy
    rows: dict[str, list[str]] = {}
    for name, table in outcome.get("tables", {}).items():
        marker = f"@@rows:{name}@@"
        rows[marker] = [json.dumps(r, sort_keys=True, ensure_ascii=False) for r in table["rows"]]
        table["rows"] = marker
    text = json.dumps(outcome, indent=2, sort_keys=True, ensure_ascii=False)
    for marker, lines in rows.items():
        inner = "".join(f"\n        {line}," for line in lines).rstrip(",")
        text = text.replace(json.dumps(marker), f"[{inner}\n      ]" if lines else "[]")
    return text + "\n"


def run_all(
    names: Sequence[str], work: Path, remote: str | None = None, jobs: int = JOBS
) -> dict[str, dict[str, Any]]:
    """Run the cases ``names`` on one Connect server (``remote``, or one started for them),
    ``jobs`` at a time (each in its own database); their outcomes."""
    if remote is None:
        with connect_server(work / "server") as started:
            return run_all(names, work, started, jobs)

    def one(name: str) -> dict[str, Any]:
        started = time.monotonic()
        outcome = run_case(CATALOGUE / name, remote, work / "runs")
        took = time.monotonic() - started
        print(f"{name}: {outcome['verdict']} ({took:.0f} s)", file=sys.stderr)
        return outcome

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return dict(zip(names, pool.map(one, names), strict=True))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for command in ("record", "check"):
        p = sub.add_parser(command)
        p.add_argument("cases", nargs="*", help="case names (default: all)")
        p.add_argument("--work", type=Path, help="keep the runs here (default: a temp dir)")
        p.add_argument("--remote", help="a running Spark Connect server, sc://HOST:PORT")
        p.add_argument("--jobs", type=int, default=JOBS, help="cases run at a time")
    p = sub.add_parser("project")
    p.add_argument("case")
    p.add_argument("dir", type=Path)
    args = parser.parse_args(argv)
    if args.command == "project":
        spec = project(CATALOGUE / args.case, args.dir.resolve())
        print(f"create the database {database(args.case)} on the server, then:")
        print(f"cd {spec.parent} && SPARK_REMOTE=sc://HOST:PORT spark-pipelines run")
        return 0
    names = args.cases or cases()
    unknown = [n for n in names if not (CATALOGUE / n / "spark-pipeline.yml").is_file()]
    if unknown:
        parser.error(f"no such case: {', '.join(unknown)}")
    work = args.work or Path(tempfile.mkdtemp(prefix="sjoin-catalogue-"))
    outcomes = run_all(names, work.resolve(), args.remote, args.jobs)
    changed = []
    for name, outcome in outcomes.items():
        text = dumps(outcome)
        expected = CATALOGUE / name / "expected.json"
        if args.command == "record":
            expected.write_text(text, encoding="utf-8")
        elif not expected.is_file() or expected.read_text(encoding="utf-8") != text:
            changed.append(name)
    if changed:
        print(f"changed: {', '.join(changed)}", file=sys.stderr)
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
