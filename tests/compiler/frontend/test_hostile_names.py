"""Hostile names and strings through the SQL front end: back-quoted identifiers holding
back-quotes, quotes, line breaks, `;`, `--` and Python code, and string literals holding the
same through Spark's escapes, in every place a pipeline's SQL names something (a stream's
column, an alias, an output column, a literal).

Read by the SQL front end, planned, and compiled to the PySpark job and to the pipeline
project, each payload must reach the generated code only through the escaping functions:
the job's Python has the AST of the benign pipeline's job (constants blanked) and holds the
payload exactly in its literals; each SQL file of the project has the benign file's token
shape as Spark's lexer splits it; `fmt --to sjoin` writes the payload back (or, when the
.sjoin language cannot hold it, refuses with Unwritable, never writes something else)."""

from __future__ import annotations

import ast as python_ast
from pathlib import Path

import pytest

from sjoin.api import check_pipeline, check_text
from sjoin.compiler.backends.pipeline import compile_pipeline
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.frontend.unparse import Unwritable, spec_text

from ..backends.test_injection import blanked, sql_texts, sql_tokens, strings

PAYLOADS = {
    "backtick": "a`b",
    "two-backticks": "``",
    "single-quote": "it's",
    "double-quote": 'say "hi"',
    "triple-double": 'a"""b',
    "newline": "a\nb",
    "crlf": "a\r\nb",
    "semicolon": "a;b",
    "sql-comment": "a -- b",
    "block-comment": "a /* b",
    "python-call": 'x", __import__("os").system("echo INJECTED"), "',
    "backslash": "a\\b",
    "sql-keyword": "select",
    "unicode": "café 中 😀",
}

# places: a column of both streams (the join key), an alias of one side, an output name,
# the value of a string literal
PIPELINE = """
CREATE STREAMING TABLE a (`{col}` BIGINT, t TIMESTAMP, s STRING);
CREATE STREAMING TABLE b (`{col}` BIGINT, t TIMESTAMP);

CREATE STREAMING TABLE j AS
SELECT `{alias}`.`{col}` AS `{out}`, `{alias}`.s, y.t AS tb, '{string}' AS lit
FROM STREAM(a) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS `{alias}`
JOIN STREAM(b) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS y
  ON `{alias}`.`{col}` = y.`{col}` AND `{alias}`.s <> '{string}'
 AND y.t BETWEEN `{alias}`.t AND `{alias}`.t + INTERVAL 5 SECONDS
"""
BENIGN = {"col": "zqcol", "alias": "zqalias", "out": "zqout", "string": "zqstring"}


def quoted(name: str) -> str:
    return name.replace("`", "``")


def spark_string(text: str) -> str:
    """``text`` inside a Spark SQL string literal, through Spark's escapes."""
    out = text.replace("\\", "\\\\").replace("'", "\\'")
    return out.replace("\n", "\\n").replace("\r", "\\r")


def pipeline(tmp_path: Path, place: str, payload: str) -> Path:
    values = {k: quoted(v) for k, v in BENIGN.items()}
    values["string"] = BENIGN["string"]
    values[place] = spark_string(payload) if place == "string" else quoted(payload)
    path = tmp_path / f"{place}.sql"
    path.write_text(PIPELINE.format(**values), encoding="utf-8")
    return path


def refused_cr(place: str, text: str, path: Path) -> bool:
    """A CR in a quoted name is refused where it stands (E008: a message quoting the name
    would carry it to the terminal); in a string literal it is written as Spark's escape."""
    if place == "string" or "\r" not in text:
        return False
    result = check_pipeline(path)
    assert [d.code for d in result.diagnostics if d.severity == "error"][:1] == ["E008"]
    return True


def planned(path: Path):  # type: ignore[no-untyped-def]
    result = check_pipeline(path)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert not errors, [d.message for d in errors]
    assert result.plan is not None
    return result


@pytest.mark.parametrize("place", sorted(BENIGN))
@pytest.mark.parametrize("payload", sorted(PAYLOADS), ids=str)
def test_payload_reaches_the_job_only_as_a_literal(
    tmp_path: Path, place: str, payload: str
) -> None:
    text = PAYLOADS[payload]
    benign = planned(_benign(tmp_path))
    if refused_cr(place, text, pipeline(tmp_path, place, text)):
        return
    hostile = planned(pipeline(tmp_path, place, text))
    base = python_ast.parse(compile_pyspark(benign.plan, "p.sql", formatted=False))
    tree = python_ast.parse(compile_pyspark(hostile.plan, "p.sql", formatted=False))
    values = strings(tree)  # read before blanked() blanks them
    values += [
        v
        for sql in sql_texts(python_ast.parse(compile_pyspark(hostile.plan)))
        for v in sql_tokens(sql)[1]
    ]
    assert any(text in v for v in values), "the payload is kept, exactly"
    assert blanked(tree) == blanked(base), "the payload changed the job's code"


@pytest.mark.parametrize("place", ["col", "alias", "out", "string"])
@pytest.mark.parametrize("payload", sorted(PAYLOADS), ids=str)
def test_payload_keeps_the_pipelines_sql_shape(tmp_path: Path, place: str, payload: str) -> None:
    text = PAYLOADS[payload]
    benign = planned(_benign(tmp_path)).plan
    if refused_cr(place, text, pipeline(tmp_path, place, text)):
        return
    hostile = planned(pipeline(tmp_path, place, text)).plan
    storage = "file:///tmp/storage"
    base = compile_pipeline(benign, "p", storage, "p.sql", formatted=False)
    files = compile_pipeline(hostile, "p", storage, "p.sql", formatted=False)
    for name, sql in files.items():
        if not name.endswith(".sql"):
            continue
        shape, values = sql_tokens(sql)
        assert shape == sql_tokens(base[name])[0], name
        if name.startswith("transformations/") and place != "string":
            assert text in values, (name, values)


@pytest.mark.parametrize("payload", sorted(PAYLOADS), ids=str)
def test_fmt_to_sjoin_writes_the_payload_back_or_refuses(tmp_path: Path, payload: str) -> None:
    text = PAYLOADS[payload]
    for place in BENIGN:
        if refused_cr(place, text, pipeline(tmp_path, place, text)):
            continue
        result = planned(pipeline(tmp_path, place, text))
        assert result.spec is not None
        try:
            written = spec_text(result.spec)
        except Unwritable as err:
            assert "\n" in text or "\r" in text, err  # only what .sjoin has no way to hold
            continue
        again = check_text(written, "again.sjoin")
        assert again.ok, [d.message for d in again.diagnostics]
        assert again.plan_json()["joins"] == result.plan_json()["joins"]


def _benign(tmp_path: Path) -> Path:
    path = tmp_path / "benign.sql"
    path.write_text(PIPELINE.format(**BENIGN), encoding="utf-8")
    return path
