"""Hostile text never becomes code in a generated job: every place x every payload.

Each place where user text reaches the module (stream names with and without `from`,
columns, watermark columns, aliases, relations, SELECT names, grouping names, string
literals, option keys and values of every source and sink format, sink paths, checkpoints,
settings, the spec's path) holds a unique marker in two benign specs.  For each place and
each hostile payload, the marker is replaced by the payload *in the plan* (so the back end is
tested even on text the front end would reject), the job is generated, and:

- the module parses (``ast.parse``) and has the AST of the benign job with constants blanked:
  no payload added, removed or changed a statement, a call or a name;
- every SQL text handed to ``F.expr`` parses in Spark's dialect to the benign shape (names
  and literals blanked): no payload escaped its SQL identifier or string either;
- the module encodes as UTF-8, and each payload's text comes back exactly from the literals.

``test_every_line_of_the_back_end_runs_under_the_cases`` fails when a line of the back end
(a new emit function, a new branch) is not reached by these cases: add a place for it.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import inspect
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import CodeType, FrameType
from typing import Any
from unittest import mock

import pytest
import sqlglot
import yaml
from sqlglot import exp
from sqlglot.tokens import TokenType

from sjoin.api import check_text
from sjoin.compiler.backends import pipeline, pyspark, pytext
from sjoin.compiler.backends.pipeline import compile_pipeline
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.planning.plan import Plan
from sjoin.compiler.vocabulary.sjointext import Unwritable

PAYLOADS = {
    "python-call": 'x", __import__("os").system("echo INJECTED > pwned.txt"), "',
    "single-quote": "it's",
    "double-quote": 'say "hi"',
    "triple-double": 'a"""b',
    "triple-single": "a'''b",
    "backslash": "a\\",
    "backslash-n": "a\\nb",
    "backslash-quote": 'a\\"b',
    "newline": "a\nb = 1",
    "cr": "a\rimport os",
    "crlf": "a\r\nb",
    "line-separator": "a\u2028b",
    "paragraph-separator": "a\u2029b",
    "next-line": "a\x85b",
    "vertical-tab": "a\x0bb",
    "form-feed": "a\x0cb",
    "nul": "a\x00b",
    "escape": "a\x1b[2Jb",
    "del": "a\x7fb",
    "lone-surrogate": "a\ud800b",
    "low-surrogate": "\udfff",
    "bidi-override": "a\u202eb",
    "bom": "\ufeffa",
    "braces": "{x}{{y}}",
    "hash": "a # b",
    "backtick": "a`b",
    "sql-identifier": "a` = 1 OR `b",
    "sql-string": "a' OR '1'='1",
    "sql-comment": "a -- b",
    "sql-keyword": "select",
    "unicode": "café 中 😀",
    "tag-character": "a\U000e0001b",
    "every-escape": '\\"\n\r\t\x00\u2028\U000e0001',
    "long": "x" * 300,
    "empty": "",
    # what the DataFrame API reads in a column reference: a path, a star, a quoted part
    "dot": "a.b",
    "star": "*",
    "dot-star": "a.*",
    "leading-dot": ".a",
    "trailing-dot": "a.",
    "space": "a b",
    "quoted": "`a`",
}

# One spec reading every source format (Kafka with columns from the record's timestamp and
# key, and with every column so), with a join of each emit shape (range, window keys, LEFT
# ANTI), an aggregate (named and unnamed grouping keys) and sinks of both writer shapes.
SOURCES_SPEC = """
set session_timezone = 'ZQTZ'
set trigger = '10 seconds'

stream ZQSA (ZQCA BIGINT, ZQTA TIMESTAMP, ZQVA STRING)
watermark ZQTA delay 10 seconds
from kafka (topic = 'ZQTOPIC', bootstrap_servers = 'ZQSERVER', format = 'json', ZQKK = 'ZQKV',
            timestamp_column = 'ZQTA', key_column = 'ZQVA')

stream ZQSB (ZQCB BIGINT, ZQTB TIMESTAMP, ZQVB STRING)
watermark ZQTB delay 10 seconds
from json (path = 'ZQPATH', ZQJK = 'ZQJV')

stream ZQSC (ZQCC BIGINT, ZQTC TIMESTAMP)
watermark ZQTC delay 10 seconds
from socket (host = 'ZQHOST', port = '9999')

stream ZQSD (ZQCD BIGINT, ZQTD TIMESTAMP)
watermark ZQTD delay 10 seconds
from rate (ZQRK = 'ZQRV')

stream ZQSE (ZQCE BIGINT, ZQTE TIMESTAMP)
watermark ZQTE delay 10 seconds
from delta (table = 'ZQTABLE')

stream ZQSF (ZQCF BIGINT, ZQTF TIMESTAMP)
watermark ZQTF delay 10 seconds
from kafka (subscribe = 'ZQSUB', `kafka.bootstrap.servers` = 'ZQKBS', format = 'csv')

-- every column from the record: no value is parsed
stream ZQSG (ZQTG TIMESTAMP, ZQKG STRING)
from kafka (topic = 'ZQGTOPIC', bootstrap_servers = 'ZQGSERVER', timestamp_column = 'ZQTG',
            key_column = 'ZQKG')

join ZQJA = ZQSA AS ZQAA INNER JOIN ZQSB AS ZQAB
    ON ZQAA.ZQCA = ZQAB.ZQCB
    AND ZQAB.ZQTB BETWEEN ZQAA.ZQTA AND ZQAA.ZQTA + INTERVAL 1 MINUTE
    AND ZQAA.ZQVA <> 'ZQLIT' AND ZQAB.ZQVB <> 'ZQLIU'
    SELECT ZQAA.ZQCA AS ZQOA, ZQAB.ZQTB AS ZQOB, upper(ZQAA.ZQVA) AS ZQOC

join ZQJB = ZQSC AS ZQAC LEFT ANTI JOIN ZQSD AS ZQAD
    ON ZQAC.ZQCC = ZQAD.ZQCD
    AND window(ZQAC.ZQTC, INTERVAL 1 MINUTE) = window(ZQAD.ZQTD, INTERVAL 1 MINUTE)

join ZQJC = ZQSE AS ZQAE LEFT OUTER JOIN ZQSF AS ZQAF
    ON ZQAE.ZQCE = ZQAF.ZQCF
    AND ZQAF.ZQTF >= ZQAE.ZQTE AND ZQAF.ZQTF <= ZQAE.ZQTE + INTERVAL 1 MINUTE

aggregate ZQGA = ZQJA AS ZQAG
    GROUP BY ZQAG.ZQOA, ZQAG.ZQOC, window(ZQAG.ZQOB, '10 minutes')
    SELECT ZQAG.ZQOA AS ZQOD, count(*) AS ZQOE
    OUTPUT MODE append

sink ZQGA to kafka (bootstrap_servers = 'ZQKSERVER', topic = 'ZQKTOPIC', key = 'ZQOD')
    checkpoint 'ZQCHKA'
sink ZQJB to parquet (path = 'ZQSINKPATH', ZQPK = 'ZQPV') checkpoint 'ZQCHKB'
sink ZQJC to delta (table = 'ZQDTABLE') checkpoint 'ZQCHKC'
"""

# Streams without `from` (read_inputs raises, naming them), no sink, a side whose state is
# never evicted (its reason is prose), sliding windows as keys (a duration as a string), a
# union (DataFrame.union; in the pipeline, UNION ALL of each input read with its watermark).
MISSING_SPEC = """
stream ZQMA (ZQMC BIGINT, ZQMT TIMESTAMP)
watermark ZQMT delay 10 seconds

stream ZQMR (ZQMC BIGINT, ZQMT TIMESTAMP)

union ZQMQ = ZQMA UNION ALL ZQMR

stream ZQMB (ZQMD BIGINT, ZQMU TIMESTAMP)

stream ZQMS (ZQMK BIGINT, ZQMV TIMESTAMP)
watermark ZQMV delay 10 seconds

join ZQMJ = ZQMA INNER JOIN ZQMB ON ZQMA.ZQMC = ZQMB.ZQMD

join ZQMW = ZQMA AS ZQMX INNER JOIN ZQMS AS ZQMY
    ON ZQMX.ZQMC = ZQMY.ZQMK
    AND window(ZQMX.ZQMT, '1 minute', INTERVAL 30 SECONDS)
        = window(ZQMY.ZQMV, '1 minute', INTERVAL 30 SECONDS)

join ZQMF = ZQMA AS ZQMX INNER JOIN ZQMS AS ZQMY
    ON ZQMX.ZQMC = ZQMY.ZQMK
    AND ZQMY.ZQMV >= window(ZQMX.ZQMT, INTERVAL 1 MINUTE, INTERVAL 1 MINUTE, '5 seconds').start
    AND ZQMY.ZQMV < window(ZQMX.ZQMT, INTERVAL 1 MINUTE).end
    SELECT window(ZQMX.ZQMT, INTERVAL 1 MINUTE).start AS ZQMG
"""

# The other trigger forms of the writers; a watermark on a join's output (withWatermark, the
# pipeline's WATERMARK on a view's read), which Spark runs with one watermark for all.
TRIGGER_SPEC = """
set trigger = 'TRIGGER'
set allow_multiple_stateful_operators = false

stream ZQNA (ZQNC BIGINT, ZQNT TIMESTAMP) watermark ZQNT delay 1 second from rate ()
stream ZQNB (ZQND BIGINT, ZQNU TIMESTAMP) watermark ZQNU delay 1 second from rate ()

join ZQNJ = ZQNA INNER JOIN ZQNB ON ZQNA.ZQNC = ZQNB.ZQND AND ZQNA.ZQNT = ZQNB.ZQNU

aggregate ZQNG = ZQNJ GROUP BY window(ZQNJ.ZQNT, INTERVAL 1 MINUTE)
    SELECT window(ZQNJ.ZQNT, INTERVAL 1 MINUTE) AS ZQNW, count(*) AS ZQNN

aggregate ZQNR = ZQNJ AS ZQNX watermark ZQNU delay 5 seconds
    GROUP BY window(ZQNX.ZQNU, INTERVAL 1 MINUTE)
    SELECT count(*) AS ZQNM

sink ZQNG to json (path = 'ZQNPATH') checkpoint 'ZQNCHK'
sink ZQNJ to kafka (topic = 'ZQNTOPIC', bootstrap_servers = 'ZQNSERVER')
"""

# deduplications: dropDuplicates (a key evicted, and never), within the watermark, and one
# over a watermark defined on another dedup's output (one global watermark for all)
DEDUP_SPEC = """spark 4.3
set allow_multiple_stateful_operators = false
stream ZQDS (ZQDK BIGINT, ZQDT TIMESTAMP) watermark ZQDT delay 5 seconds from json (path = 'ZQDP')
stream ZQDV (ZQDW BIGINT) from json (path = 'ZQDQ')
dedup ZQDA = ZQDS ON (ZQDK, ZQDT)
dedup ZQDB = ZQDS ON (ZQDK) WITHIN WATERMARK
dedup ZQDC = ZQDV ON (ZQDW)
dedup ZQDE = ZQDA watermark ZQDT delay 1 minute ON (ZQDK, ZQDT)
"""

# a view (its input, alias, WHERE and items), a join's WHERE, an aggregate's, and a LEFT
# SEMI join over a union, which the plan holds as one join per union input and their union
# (issue 37; a view reads the union too, which keeps it in the plan)
VIEW_SPEC = """
stream ZQWA (ZQWC BIGINT, ZQWT TIMESTAMP, ZQWV STRING) watermark ZQWT delay 10 seconds

aggregate ZQWG = ZQWA AS ZQWH WHERE ZQWH.ZQWV <> 'ZQWLIV'
    GROUP BY window(ZQWH.ZQWT, INTERVAL 10 SECONDS) SELECT count(*) AS ZQWN

view ZQWW = SELECT ZQWX.ZQWC, ZQWX.ZQWT, upper(ZQWX.ZQWV) AS ZQWO FROM ZQWA AS ZQWX
    WHERE ZQWX.ZQWV <> 'ZQWLIT'

join ZQWJ = ZQWW AS ZQWY LEFT OUTER JOIN ZQWA AS ZQWZ
    ON ZQWY.ZQWC = ZQWZ.ZQWC AND ZQWY.ZQWT = ZQWZ.ZQWT
    WHERE ZQWZ.ZQWV <> 'ZQWLIU'

stream ZQWB (ZQWC BIGINT, ZQWT TIMESTAMP, ZQWV STRING) watermark ZQWT delay 10 seconds

union ZQWU = ZQWA UNION ALL ZQWB

join ZQWS = ZQWU AS ZQWE LEFT SEMI JOIN ZQWA AS ZQWF
    ON ZQWE.ZQWC = ZQWF.ZQWC AND ZQWE.ZQWT = ZQWF.ZQWT

view ZQWK = SELECT ZQWM.ZQWC FROM ZQWU AS ZQWM
"""

# a static table (its columns, source and options) and a stream-static join that reads it
# (issue 37): `spark.read` in the job and in the pipeline's Python, the table's name without
# STREAM() in the pipeline's SQL
TABLE_SPEC = """
table ZQYT (ZQYK BIGINT, ZQYS STRING) from parquet (path = 'ZQYP', ZQYO = 'ZQYV')
stream ZQYR (ZQYK BIGINT, ZQYW TIMESTAMP) watermark ZQYW delay 10 seconds
from json (path = 'ZQYI')
join ZQYJ = ZQYR AS ZQYA LEFT OUTER JOIN ZQYT AS ZQYB
    ON ZQYA.ZQYK = ZQYB.ZQYK AND ZQYB.ZQYS <> 'ZQYL'
    SELECT ZQYA.ZQYK AS ZQYX, ZQYA.ZQYW, ZQYB.ZQYS AS ZQYZ
"""

# a file table and a Delta table (the job selects a Delta table's columns), the second joined
# with a stream-static join's output (issue 37)
TABLE_CHAIN_SPEC = """
table ZQQA (ZQQC BIGINT, ZQQS STRING) from parquet (path = 'ZQQP')
table ZQQB (ZQQC BIGINT, ZQQD STRING) from delta (path = 'ZQQR', ZQQO = 'ZQQV')
stream ZQQE (ZQQC BIGINT, ZQQT TIMESTAMP) watermark ZQQT delay 10 seconds
from json (path = 'ZQQI')

join ZQQJ = ZQQE AS ZQQX LEFT OUTER JOIN ZQQA AS ZQQY
    ON ZQQX.ZQQC = ZQQY.ZQQC AND ZQQY.ZQQS <> 'ZQQL'
    SELECT ZQQX.ZQQC, ZQQX.ZQQT, ZQQY.ZQQS

join ZQQK = ZQQB AS ZQQZ INNER JOIN ZQQJ AS ZQQW ON ZQQW.ZQQC = ZQQZ.ZQQC
"""

SPEC_PATH = "ZQFILE.sjoin"
MARKER = re.compile(r"ZQ[A-Z]+")
SAFE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _plan(text: str) -> Plan:
    result = check_text(text, SPEC_PATH)
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    return result.plan


SPECS = {
    "sources": SOURCES_SPEC,
    "missing": MISSING_SPEC,
    "available-now": TRIGGER_SPEC.replace("TRIGGER", "available_now"),
    "once": TRIGGER_SPEC.replace("TRIGGER", "once"),
    "dedup": DEDUP_SPEC,
    "views": VIEW_SPEC,
    "tables": TABLE_SPEC,
    "table-chain": TABLE_CHAIN_SPEC,
    # Spark 3.3 has no DataFrame.to: a Delta read selects its columns instead
    "sources-3.3": "spark 3.3\n" + SOURCES_SPEC,
    "table-chain-3.3": "spark 3.3\n" + TABLE_CHAIN_SPEC,
}
PLANS = {kind: _plan(text) for kind, text in SPECS.items()}
PLACES = sorted(
    {(kind, m) for kind, text in SPECS.items() for m in MARKER.findall(text)}
    | {(kind, "ZQFILE") for kind in SPECS}
)
# the pipeline target writes every kind (a dedup as a Python flow): its cases are all of them
PIPELINE_PLANS = PLANS
PIPELINE_PLACES = PLACES


# ------------------------------------------------------------------ putting payloads in


def substitute(value: Any, marker: str, payload: str) -> Any:
    """``value`` (a plan or any part of it) with ``marker`` replaced by ``payload`` in every
    string: names, options, prose, and the identifiers and literals of sqlglot trees."""
    if isinstance(value, str):
        return value.replace(marker, payload)
    if isinstance(value, exp.Expression):
        return _substitute_tree(value, marker, payload)
    if isinstance(value, tuple):
        return tuple(substitute(v, marker, payload) for v in value)
    if isinstance(value, list):
        return [substitute(v, marker, payload) for v in value]
    if isinstance(value, dict):
        return {
            substitute(k, marker, payload): substitute(v, marker, payload) for k, v in value.items()
        }
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: substitute(getattr(value, f.name), marker, payload)
            for f in dataclasses.fields(value)
            if f.init
        }
        return dataclasses.replace(value, **changes)
    return value


def _mentions(value: Any, marker: str) -> bool:
    if isinstance(value, str):
        return marker in value
    if isinstance(value, exp.Expression):
        for node in value.walk():
            if isinstance(node, (exp.Identifier, exp.Literal)) and marker in str(node.this):
                return True
            if any(k != "span" and _mentions(v, marker) for k, v in node.meta.items()):
                return True
        return False
    if isinstance(value, (tuple, list)):
        return any(_mentions(v, marker) for v in value)
    return False


def _substitute_tree(tree: exp.Expression, marker: str, payload: str) -> exp.Expression:
    if not _mentions(tree, marker):
        return tree  # plan trees are shared and never changed: no copy needed
    tree = tree.copy()
    for node in list(tree.walk()):
        if isinstance(node, exp.Identifier) and marker in node.this:
            name = node.this.replace(marker, payload)
            node.set("this", name)
            node.set("quoted", not SAFE_NAME.fullmatch(name))
        elif isinstance(node, exp.Literal) and node.is_string and marker in node.this:
            node.set("this", node.this.replace(marker, payload))
        if node.meta:  # a copied node may share its meta dict with the plan's node
            node._meta = {
                k: v if k == "span" else substitute(v, marker, payload)
                for k, v in node.meta.items()
            }
    return tree


def generate(kind: str, marker: str | None, payload: str, formatted: bool = False) -> str:
    plan = PLANS[kind]
    path = SPEC_PATH
    if marker is not None:
        plan = substitute(plan, marker, payload)
        path = path.replace(marker, payload)
    return compile_pyspark(plan, path, formatted=formatted)


# ------------------------------------------------------------------ comparing shapes


def blanked(tree: ast.AST) -> str:
    """The AST with every constant's value blanked (kept: where constants stand).  This
    changes ``tree``: read its strings first."""

    class Blank(ast.NodeTransformer):
        def visit_Constant(self, node: ast.Constant) -> ast.Constant:
            return ast.Constant(value=type(node.value).__name__)

    return ast.dump(Blank().visit(tree))


def sql_texts(tree: ast.AST) -> list[str]:
    """Every SQL text of the module: the arguments of ``F.expr``."""
    out = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "expr"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            out.append(node.args[0].value)
    return out


def sql_shape(text: str) -> str:
    """Spark SQL parsed by sqlglot, identifiers and literals blanked."""
    tree = sqlglot.parse_one(text, dialect="spark")
    for node in list(tree.walk()):
        if isinstance(node, exp.Identifier):
            node.set("this", "_")
            node.set("quoted", False)
        elif isinstance(node, exp.Literal) and node.is_string:
            node.set("this", "_")
    return repr(tree)


def sql_values(text: str) -> list[str]:
    """The names and string literals of a Spark SQL text, as Spark reads them."""
    tree = sqlglot.parse_one(text, dialect="spark")
    return [
        node.this
        for node in tree.walk()
        if isinstance(node, exp.Identifier) or (isinstance(node, exp.Literal) and node.is_string)
    ]


def strings(tree: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


BASELINES: dict[str, tuple[str, list[str]]] = {}
BENIGN_SQL: dict[str, list[str]] = {}


def baseline(kind: str) -> tuple[str, list[str]]:
    if kind not in BASELINES:
        tree = ast.parse(generate(kind, None, ""))
        BENIGN_SQL[kind] = texts = sql_texts(tree)
        BASELINES[kind] = (blanked(tree), [sql_shape(s) for s in texts])
    return BASELINES[kind]


def assert_same_shape(code: str, kind: str, payload: str) -> None:
    code.encode("utf-8")  # no lone surrogate reaches the file
    tree = ast.parse(code)
    shape, sql = baseline(kind)
    texts, benign, values = sql_texts(tree), BENIGN_SQL[kind], strings(tree)
    assert blanked(tree) == shape
    assert len(texts) == len(benign)
    assert [t == b or sql_shape(t) == s for t, b, s in zip(texts, benign, sql, strict=True)] == [
        True
    ] * len(texts)
    if payload:
        kept = values + [
            v for t, b in zip(texts, benign, strict=True) if t != b for v in sql_values(t)
        ]
        assert any(payload in s for s in kept), "the payload is kept, exactly"
    for line in code.splitlines():  # comments are one line, whatever the payload
        assert "\u2028" not in line and "\u2029" not in line and "\x85" not in line


STAR = "\x00star"  # no name part is this: names hold no control characters


def attribute_parts(text: str) -> tuple[str, ...]:
    """A column reference as Spark's DataFrame API reads it (``Column(name)``: ``*`` and
    ``a.*`` are stars, else ``UnresolvedAttribute.parseAttributeName``): its name parts, or
    ``(STAR, qualifier...)`` for a star; ValueError where Spark raises a syntax error."""
    if text == "*":
        return (STAR,)
    if text.endswith(".*"):
        return (STAR, *attribute_parts(text[:-2]))
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    i = 0
    while i < len(text):
        char = text[i]
        if quoted:
            if char == "`":
                if text[i + 1 : i + 2] == "`":
                    current.append("`")
                    i += 1
                else:
                    quoted = False
                    if i + 1 < len(text) and text[i + 1] != ".":
                        raise ValueError(text)
            else:
                current.append(char)
        elif char == "`":
            if current:
                raise ValueError(text)
            quoted = True
        elif char == ".":
            if i == 0 or text[i - 1] == "." or i == len(text) - 1:
                raise ValueError(text)
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    if quoted:
        raise ValueError(text)
    return (*parts, "".join(current))


PARSED_BY_SPARK = {"select", "withWatermark", "col", "window"}  # their string arguments


def column_refs(code: str) -> list[str]:
    """The strings of the job that the DataFrame API parses as column references."""
    out = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name in PARSED_BY_SPARK:
                args = node.args if name == "select" else node.args[:1]
                out += [a.value for a in args if isinstance(a, ast.Constant)]
    return out


BENIGN_REFS: dict[str, list[str]] = {}


def assert_column_refs(code: str, kind: str, marker: str, payload: str) -> None:
    """Each column reference names exactly the benign one's column, the marker replaced by
    the payload: no payload made a path, a star or a syntax error of it."""
    if kind not in BENIGN_REFS:
        BENIGN_REFS[kind] = column_refs(generate(kind, None, ""))
    benign, found = BENIGN_REFS[kind], column_refs(code)
    assert len(found) == len(benign)
    for text, plain in zip(found, benign, strict=True):
        expected = tuple(p.replace(marker, payload) for p in attribute_parts(plain))
        assert attribute_parts(text) == expected, (text, plain)


# ------------------------------------------------------------------ the tests


def test_every_place_holds_its_marker_in_the_benign_job() -> None:
    for kind, marker in PLACES:
        code = generate(kind, None, "")
        assert marker in code, f"{marker} of the {kind} spec does not reach the job"
    assert len(PLACES) >= 60


@pytest.mark.parametrize("payload", sorted(PAYLOADS), ids=str)
def test_payload_in_every_place(payload: str) -> None:
    text = PAYLOADS[payload]
    for kind, marker in PLACES:
        try:
            code = generate(kind, marker, text)
            assert_same_shape(code, kind, text)
            assert_column_refs(code, kind, marker, text)
        except (AssertionError, ValueError) as err:
            raise AssertionError(f"{payload!r} in place {marker} ({kind}): {err}") from None


@pytest.mark.parametrize("payload", sorted(PAYLOADS), ids=str)
def test_payload_everywhere_at_once_formatted(payload: str) -> None:
    """The laid-out module (ruff format) too: every place of a spec holds the payload."""
    text = PAYLOADS[payload]
    for kind in PLANS:
        plan = PLANS[kind]
        for marker in sorted({m for k, m in PLACES if k == kind}, key=len, reverse=True):
            plan = substitute(plan, marker, text + marker.lower())  # names stay distinct
        code = compile_pyspark(plan, SPEC_PATH.replace("ZQFILE", text), formatted=True)
        tree = ast.parse(code)
        benign = ast.parse(compile_pyspark(PLANS[kind], SPEC_PATH, formatted=True))
        assert blanked(tree) == blanked(benign)
        code.encode("utf-8")


def test_column_refs_cover_every_parsed_place() -> None:
    """The benign jobs reference columns through each API that parses them."""
    calls = set()
    for kind in PLANS:
        for node in ast.walk(ast.parse(generate(kind, None, ""))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr in PARSED_BY_SPARK and any(
                isinstance(a, ast.Constant) and MARKER.search(str(a.value)) for a in node.args
            ):
                calls.add(node.func.attr)
    assert calls == PARSED_BY_SPARK


def test_attribute_parts_reads_as_spark_does() -> None:
    assert attribute_parts("a.b") == ("a", "b")
    assert attribute_parts("`a.b`") == ("a.b",)
    assert attribute_parts("`a``b`.c") == ("a`b", "c")
    assert attribute_parts("a.*") == (STAR, "a")
    assert attribute_parts("*") == (STAR,)
    assert attribute_parts("`*`") == ("*",)
    assert attribute_parts("a b") == ("a b",)
    for bad in ("a`b", "`a`b", "a..b", ".a", "a.", "`a"):
        with pytest.raises(ValueError):
            attribute_parts(bad)
    quoted = [ast.literal_eval(pytext.column_ref(n)) for n in ("x", "a.b", "*", "a`b", "")]
    assert quoted == ["x", "`a.b`", "`*`", "`a``b`", "``"]


def test_escape_round_trips_every_code_point_class() -> None:
    samples = [chr(c) for c in range(0x100)]
    samples += ["\u2028", "\u2029", "\ud800", "\udfff", "\ufeff", "\u202e", "\U0001f600"]
    samples += ["\U000e0001", "\u200b", "\ue000"]
    for char in samples:
        text = f"a{char}b"
        for source in (pytext.literal(text), '"""' + pytext.docstring_line(text) + '"""'):
            assert ast.literal_eval(source) == text
            assert len(source.splitlines()) == 1
            source.encode("utf-8")
        line = pytext.comment(text)
        assert len(line.splitlines()) == 1 and line.isprintable()
        assert ast.parse(line + "\n").body == []


def test_long_comments_are_cut_between_escapes() -> None:
    text = "\x00" * 200
    line = pytext.comment(text, 40)
    assert len(line) <= 40 and line.endswith(" ...")
    assert line[2:-4] == "\\x00" * ((40 - 2 - 4) // 4)


def test_every_line_of_the_back_end_runs_under_the_cases() -> None:
    """A new emit function or branch in the back end must get a place in this test."""
    files = {inspect.getfile(pyspark), inspect.getfile(pytext)}
    seen: set[tuple[str, int]] = set()

    def tracer(frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        if frame.f_code.co_filename not in files:
            return None
        seen.add((frame.f_code.co_filename, frame.f_lineno))
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        for payload in ("", PAYLOADS["python-call"], PAYLOADS["every-escape"], PAYLOADS["long"]):
            for kind, marker in PLACES:
                generate(kind, marker, payload)
        for kind in PLANS:
            generate(kind, None, "", formatted=True)
            for table in PLANS[kind].tables:  # a table in a pipeline's Python flow
                assert "DELTA_SCHEMAS" not in "\n".join(pyspark.emit(table))
        # a table name as readStream.table parses it (the pipeline target's flows)
        assert ast.literal_eval(pytext.table_ref("a.b")) == "`a.b`"
        with mock.patch.object(pyspark.subprocess, "run", side_effect=OSError("no ruff")):
            assert pyspark.format_python("x = 1\n") == "x = 1\n"  # unformatted, still valid
        # ruff's binary not found by its finder: `python -m ruff`
        with mock.patch("ruff.find_ruff_bin", side_effect=FileNotFoundError("no ruff binary")):
            assert pyspark.format_python("x=1\n") == "x = 1\n"
    finally:
        sys.settrace(previous)
    missing = sorted(
        (path, line)
        for path in files
        for line in _executable_lines(path)
        if (path, line) not in seen
    )
    assert not missing, "back-end lines no injection case reaches: " + ", ".join(
        f"{path.rsplit('/', 1)[-1]}:{line}" for path, line in missing
    )


def _executable_lines(path: str) -> set[int]:
    """Lines that hold code (not the defining lines of functions, not `no cover` ones)."""
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    lines = source.splitlines()
    module = compile(source, path, "exec")
    out: set[int] = set()
    for code in _code_objects(module):
        if code is module:
            continue
        for _start, _end, line in code.co_lines():
            if line is not None and line != code.co_firstlineno:
                out.add(line)
    skipped = {i + 1 for i, text in enumerate(lines) if "pragma: no cover" in text}
    return {line for line in out if line not in skipped}


def _code_objects(code: CodeType) -> Iterator[CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _code_objects(const)


# ------------------------------------------------------------------ the reproductions


def test_reproduction_stream_name_with_python_call(tmp_path: Path) -> None:
    """`sjoin compile` of a stream whose name closes a literal and calls os.system: the job
    holds the name as data, and `read_inputs` raises naming it; nothing runs."""
    spec = tmp_path / "exec.sjoin"
    spec.write_text(
        'stream `x", __import__("os").system("echo INJECTED > pwned.txt"), "` (t TIMESTAMP)\n'
    )
    job = tmp_path / "exec.py"
    done = subprocess.run(
        [sys.executable, "-m", "sjoin.cli.main", "compile", str(spec), "-o", str(job)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    code = job.read_text()
    calls = {
        n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
        for n in ast.walk(ast.parse(code))
        if isinstance(n, ast.Call)
    }
    assert "system" not in calls and "__import__" not in calls
    namespace: dict[str, Any] = {"__name__": "job"}
    exec(compile(code, str(job), "exec"), namespace)
    with pytest.raises(RuntimeError) as raised:
        namespace["read_inputs"](None)
    assert '__import__("os").system' in str(raised.value)  # the name, as text
    assert not (tmp_path / "pwned.txt").exists()


def test_reproduction_quote_in_a_stream_name(tmp_path: Path) -> None:
    result = check_text("stream `it's` (t TIMESTAMP)\n")
    assert result.ok and result.plan is not None
    code = compile_pyspark(result.plan, "q.sjoin")
    tree = ast.parse(code)
    assert "it's" in strings(tree)


# ------------------------------------------------------------------ the pipeline target
#
# The same places and payloads in `sjoin compile --target pipeline`'s project: its Python
# module has the benign module's AST (constants blanked), each SQL file the benign file's
# tokens as Spark's lexer splits them (names and strings blanked: sqlglot's Spark tokenizer,
# which unescapes back-quoted names and strings as Spark does) and as many lines (a comment
# stays one line), the YAML the benign YAML's keys; and the payload comes back exactly from
# a Python literal, an SQL name or string, or a YAML value.

PIPELINE_STORAGE = "file:///work/ZQFILE/pipeline-storage"
# a sink's checkpoint: SDP keeps each flow's checkpoint under the pipeline's storage, so it
# is only in sjoin-schemas.sql's `-- sjoin: sink` line (a comment for Spark's lexer)
# the sinks' checkpoints (unused by SDP, in sjoin-schemas.sql only)
NOT_IN_PIPELINE = {"ZQCHKA", "ZQCHKB", "ZQCHKC", "ZQNCHK"}


def generate_pipeline(kind: str, marker: str | None, payload: str) -> dict[str, str]:
    plan, path, storage, name = PLANS[kind], SPEC_PATH, PIPELINE_STORAGE, "ZQFILE"
    if marker is not None:
        plan = substitute(plan, marker, payload)
        path, storage, name = (t.replace(marker, payload) for t in (path, storage, name))
    return compile_pipeline(plan, name, storage, path, formatted=False)


def sql_tokens(text: str) -> tuple[list[str], list[str]]:
    """A SQL file's token shape (names and strings blanked) and its names, strings and
    comments as Spark reads them."""
    from sqlglot.dialects.spark import Spark

    shape, values = [], []
    for token in Spark().tokenize(text):
        values.extend(token.comments)
        if token.token_type in (TokenType.VAR, TokenType.IDENTIFIER, TokenType.STRING):
            shape.append("STRING" if token.token_type == TokenType.STRING else "NAME")
            values.append(token.text)
        else:
            shape.append(f"{token.token_type.name} {token.text}")
    return shape, values


def pipeline_shape(files: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """Each file's shape, and every text the files hold as values."""
    shapes: dict[str, Any] = {}
    values: list[str] = []
    for path, text in files.items():
        if path.endswith(".sql"):
            # SQL has no escapes in a back-quoted name: a name is written as it is, line
            # breaks too (Spark's lexer reads them as part of the name; the tokens below
            # show that nothing else changed). A lone surrogate or a CR in a name never
            # reaches a plan from a spec (the checker refuses both where they stand).
            shape, found = sql_tokens(text)
            shapes[path] = (shape, sum(1 for line in text.splitlines() if line.startswith("--")))
            values.extend(found)
            continue
        text.encode("utf-8")  # no lone surrogate reaches a file
        for line in text.splitlines():
            assert "\u2028" not in line and "\u2029" not in line and "\x85" not in line
        if path.endswith(".py"):
            tree = ast.parse(text)
            values.extend(strings(tree))
            shapes[path] = blanked(tree)
        else:
            spec = yaml.safe_load(text)
            conf = spec.get("configuration", {})
            shapes[path] = (sorted(spec), len(conf), len(text.splitlines()))
            values.extend([spec["name"], spec["storage"], *conf.values()])
    return shapes, values


PIPELINE_BASELINES: dict[str, dict[str, Any]] = {}


@pytest.mark.parametrize("payload", sorted(PAYLOADS), ids=str)
def test_payload_in_every_place_of_the_pipeline(payload: str) -> None:
    text = PAYLOADS[payload]
    for kind, marker in PIPELINE_PLACES:
        try:
            if kind not in PIPELINE_BASELINES:
                PIPELINE_BASELINES[kind] = pipeline_shape(generate_pipeline(kind, None, ""))[0]
            files = generate_pipeline(kind, marker, text)
            shapes, values = pipeline_shape(files)
            assert shapes == PIPELINE_BASELINES[kind]
            if text and marker not in NOT_IN_PIPELINE | {"ZQFILE"}:  # ZQFILE: in comments
                assert any(text in v for v in values), "the payload is kept, exactly"
        except (AssertionError, ValueError, yaml.YAMLError) as err:
            raise AssertionError(f"{payload!r} in place {marker} ({kind}): {err}") from None


def test_every_place_holds_its_marker_in_the_benign_pipeline() -> None:
    """Every place reaches the project, the sinks' checkpoints (unused by SDP) only in
    sjoin-schemas.sql."""
    missing = []
    for kind, marker in PIPELINE_PLACES:
        files = generate_pipeline(kind, None, "")
        files.pop("sjoin-schemas.sql")
        if not any(marker in text for text in files.values()):
            missing.append((kind, marker))
    assert {marker for _, marker in missing} == NOT_IN_PIPELINE, missing
    for kind, marker in PIPELINE_PLACES:
        assert marker in "".join(generate_pipeline(kind, None, "").values())


def test_every_line_of_the_pipeline_back_end_runs_under_the_cases() -> None:
    """A new branch of the pipeline back end must get a place in this test."""
    files = {inspect.getfile(pipeline)}
    seen: set[tuple[str, int]] = set()

    def tracer(frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        if frame.f_code.co_filename not in files:
            return None
        seen.add((frame.f_code.co_filename, frame.f_lineno))
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        for payload in ("", PAYLOADS["python-call"], PAYLOADS["every-escape"]):
            for kind, marker in PIPELINE_PLACES:
                generate_pipeline(kind, marker, payload)
                plan = substitute(PLANS[kind], marker, payload)
                with contextlib.suppress(Unwritable):  # `sjoin fmt --to sql` refuses it
                    pipeline.pipeline_sql(plan, SPEC_PATH)
        for kind in PIPELINE_PLANS:
            compile_pipeline(PLANS[kind], "p", PIPELINE_STORAGE, SPEC_PATH)
            pipeline.pipeline_notes(PLANS[kind])
            if kind != "dedup":
                pipeline.pipeline_sql(PLANS[kind], SPEC_PATH)
        with pytest.raises(Unwritable, match="has no pipeline SQL"):  # a dedup has none
            pipeline.pipeline_sql(PLANS["dedup"], SPEC_PATH)
        with contextlib.suppress(Unwritable):  # a SET ends at `;`
            pipeline.pipeline_sql(substitute(PLANS["sources"], "ZQTZ", "a;b"), SPEC_PATH)
        # a relation named as the first sink would be: the sink's name moves aside
        taken = substitute(PLANS["available-now"], "ZQNG", "sink_0")
        assert pipeline.sink_names(taken) == ["sink_0_", "sink_1"]
    finally:
        sys.settrace(previous)
    missing = sorted(
        (path, line)
        for path in files
        for line in _executable_lines(path)
        if (path, line) not in seen
    )
    assert not missing, "pipeline back-end lines no injection case reaches: " + ", ".join(
        f"{path.rsplit('/', 1)[-1]}:{line}" for path, line in missing
    )


def test_every_declarable_type_has_its_pyspark_class() -> None:
    """A Delta source's DELTA_SCHEMAS entry builds each column's type in Python: every type a
    column can be declared with has its pyspark.sql.types class, with its parameters."""
    from sjoin.compiler.vocabulary.model import Column
    from sjoin.compiler.vocabulary.types import TYPE_NAMES, lookup_type

    canonical = {name for name, _ in TYPE_NAMES.values()}
    assert canonical == set(pyspark._TYPE_CLASSES)
    declared = [("a", lookup_type("decimal", (12, 3))), ("b", lookup_type("varchar", (5,)))]
    text = pyspark._struct_type(Column(n, t) for n, t in declared if t is not None)
    assert text == (
        'T.StructType([T.StructField("a", T.DecimalType(12, 3)), '
        'T.StructField("b", T.StringType())])'
    )
