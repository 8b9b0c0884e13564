"""Every user string the pipeline target writes reads back exactly (issue 35, item 24).

A spec holding a hostile string in each place a string can stand (the session time zone, a
column, an alias, an output name, a string literal, a source's and a sink's option, a sink's
checkpoint) is compiled to a pipeline project (`compile --target pipeline`) and to one
pipeline SQL file (`fmt --to sql`); sjoin reads each back (`check DIR`, `check FILE`) to the
spec's plan, and Spark's own readers get the same text: `yaml.safe_load` (what
`spark-pipelines` reads spark-pipeline.yml with) gives the confs exactly, and a SET
statement's value is what Spark's SET sets (``sqlparse.set_value``: the value written raw,
or one back-quoted name, checked on Spark 4.3.0).

The payloads are every string the .sjoin language can hold (a spec cannot hold a line break
in a string or a name, so none reaches a plan from a spec).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sjoin.api import check_pipeline, check_text
from sjoin.compiler.backends.pipeline import compile_pipeline, pipeline_sql, set_value_sql
from sjoin.compiler.checks.job_warnings import pipeline_refusals
from sjoin.compiler.frontend.sqlparse import iter_statement_spans, set_value
from sjoin.compiler.vocabulary.sjointext import name, string

from .test_equivalence import alike

PAYLOADS = {
    "triple-double": '"""',
    "one-double": '"',
    "quoted-single": "'UTC'",
    "quoted-double": '"UTC"',
    "backtick": "a`b",
    "backticked": "`UTC`",
    "two-backticks": "``",
    "semicolon": "a;b",
    "sql-comment": "a -- b",
    "block-comment": "a /* b",
    "backslash": "a\\b",
    "backslash-quote": "a\\'b",
    "spaces": "  padded  ",
    "yaml-tag": "!!python/object:os.system",
    "yaml-flow": "{a: [1, 2]}",
    "yaml-comment": "x # y",
    "yaml-null": "~",
    "yaml-bool": "yes",
    "python-call": 'x", __import__("os").system("echo INJECTED"), "',
    "unicode": "café 中 😀",
    "empty": "",
}

SPEC = """spark 4.3
set session_timezone = {tz}
stream a ({col} BIGINT, t TIMESTAMP, s STRING) watermark t delay 10 seconds
    from json (path = {path})
stream b ({col} BIGINT, t TIMESTAMP) watermark t delay 10 seconds from json (path = 'in/b')
join j = a AS {alias} INNER JOIN b AS y
    ON {alias}.{col} = y.{col} AND {alias}.s <> {lit}
    AND y.t BETWEEN {alias}.t AND {alias}.t + INTERVAL 5 SECONDS
    SELECT {alias}.{col} AS {out}, y.t AS tb, {lit} AS lit
sink j to json (path = {path}, compression = {lit}) checkpoint {path}
"""


def spec_for(payload: str) -> str:
    named = name(payload or "e")
    return SPEC.format(
        tz=string(payload),
        col=named,
        alias=name(payload + "_x" if payload else "x"),
        out=name(payload + "_o" if payload else "o"),
        lit=string(payload),
        path=string(payload),
    )


def write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")


@pytest.mark.parametrize("payload", sorted(PAYLOADS), ids=str)
def test_compiled_project_reads_back_every_string(payload: str, tmp_path: Path) -> None:
    text = PAYLOADS[payload]
    spec = check_text(spec_for(text), "s.sjoin")
    assert spec.plan is not None and spec.ok, [d.message for d in spec.diagnostics]
    assert spec.plan.settings.session_timezone == text
    assert pipeline_refusals(spec.plan) == []
    root = tmp_path / "project"
    files = compile_pipeline(spec.plan, "s", (root / "storage").as_uri(), "s.sjoin")
    write(root, files)
    # what spark-pipelines reads: the confs exactly
    conf = yaml.safe_load(files["spark-pipeline.yml"])["configuration"]
    assert conf == {"spark.sql.session.timeZone": text}
    back = check_pipeline(root)
    assert back.ok, [d.message for d in back.diagnostics]
    assert alike(back) == alike(spec)


@pytest.mark.parametrize("payload", sorted(PAYLOADS), ids=str)
def test_pipeline_sql_reads_back_every_string(payload: str, tmp_path: Path) -> None:
    text = PAYLOADS[payload]
    spec = check_text(spec_for(text), "s.sjoin")
    assert spec.plan is not None and spec.ok
    sql = pipeline_sql(spec.plan, "s.sjoin")
    (tmp_path / "p.sql").write_text(sql, encoding="utf-8")
    back = check_pipeline(tmp_path / "p.sql")
    assert back.ok, [d.message for d in back.diagnostics]
    assert alike(back) == alike(spec)
    # the SET statement is one statement as SDP splits the file, and sets the value
    statements = [
        "\n".join(line for line in sql[a:b].splitlines() if not line.startswith("--")).strip()
        for a, b in iter_statement_spans(sql)
    ]
    sets = [s for s in statements if s.startswith("SET ")]
    assert len(sets) == 1
    assert set_value(sets[0].split("=", 1)[1]) == text


def test_set_values_as_spark_reads_them() -> None:
    """Spark's SET keeps quotes and trims the text, and unquotes one back-quoted name (as
    Spark 4.3.0 did for each of these: `SET spark.sql.session.timeZone = V` then
    `spark.conf.get`)."""
    assert set_value(" 'UTC' ") == "'UTC'"
    assert set_value('"UTC"') == '"UTC"'
    assert set_value(" `UTC` ") == "UTC"
    assert set_value("`a``b`") == "a`b"
    assert set_value('`"""`') == '"""'
    assert set_value("` x `") == " x "
    assert set_value("`a` `b`") == "`a` `b`"  # not one name: as written
    for value in PAYLOADS.values():
        assert set_value(set_value_sql(value)) == value
    assert set_value_sql("UTC") == "UTC"
    assert set_value_sql("org.apache.spark.X") == "org.apache.spark.X"
