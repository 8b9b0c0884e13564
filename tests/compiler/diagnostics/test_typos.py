"""One typo, one diagnostic: a typo injected into each example (a keyword, a unit, a name, a
type) gets its own error and nothing that merely follows from it: no `unknown relation` for
what the broken statement declares, no warning about the state of a stream whose watermark
did not bind, and no warning the clean spec does not have (issue 23)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sjoin.api import CheckResult, check_pipeline, check_text

from ...conftest import EXAMPLES

# (what, pattern, replacement): the first match in a spec is replaced
TYPOS = [
    ("keyword stream", r"(?m)^stream ", "strem "),
    ("keyword join", r"(?m)^join ", "jion "),
    ("keyword watermark", r"(?m)^watermark ", "watermak "),
    ("keyword delay", r" delay ", " dealy "),
    ("keyword JOIN", r" JOIN ", " JION "),
    ("keyword BETWEEN", r"BETWEEN", "BETWEN"),
    ("keyword SELECT", r"(?m)^(\s+)SELECT ", r"\1SELCT "),
    ("keyword sink", r"(?m)^sink ", "snik "),
    ("bare OUTER", r"LEFT OUTER JOIN", "OUTER JOIN"),
    ("unit hours", r"(delay \d+) hours\b", r"\1 hourz"),
    ("unit minutes", r"(delay \d+) minutes?\b", r"\1 minuts"),
    ("type BIGINT", r"\bBIGINT\b", "BIGNT"),
    ("type TIMESTAMP", r"\bTIMESTAMP\b", "TIMESTMP"),
    ("type STRING", r"\bSTRING\b", "STRNG"),
]


def _names(spec: str) -> list[str]:
    return re.findall(r"(?m)^stream (\w+)", spec)


def _cases() -> list[tuple[str, str, str]]:
    out = []
    for path in EXAMPLES:
        text = path.read_text(encoding="utf-8")
        for what, pattern, replacement in TYPOS:
            typo, n = re.subn(pattern, replacement, text, count=1)
            if n:
                out.append((f"{path.stem}-{what}", text, typo))
        # a stream's name misspelt where a join reads it
        stream = _names(text)[0]
        typo, n = re.subn(rf"= {stream} ", f"= {stream[:-1]} ", text, count=1)
        if n:
            out.append((f"{path.stem}-name", text, typo))
    return out


CASES = _cases()


@pytest.mark.parametrize(("clean", "typo"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_one_typo_one_diagnostic(clean: str, typo: str) -> None:
    before = check_text(clean, "s.sjoin")
    assert before.ok
    after = check_text(typo, "s.sjoin")
    errors = [d for d in after.diagnostics if d.severity == "error"]
    assert len(errors) == 1, [f"{d.code} {d.message}" for d in errors]
    known = {(d.code, d.message) for d in before.diagnostics}
    new = [
        d for d in after.diagnostics if d.severity != "error" and (d.code, d.message) not in known
    ]
    assert not new, [f"{d.code} {d.message}" for d in new]


def test_the_corpus_covers_every_kind_of_typo() -> None:
    kinds = {c[0].split("-", 1)[1].split()[0] for c in CASES}
    assert {"keyword", "unit", "type", "name", "bare"} <= kinds
    assert len(CASES) >= 40


# Cascades across statements (issue 35, item 5), in both syntaxes: (what, suffix, clean,
# broken, the new warnings the broken one may add beside its one error).  A broken statement
# marks the relations that read it (compiler/frontend/cascades.py): what judges them by what flows
# in (state eviction, output modes, event-time columns) is left out.
_STREAMS = """stream orders (id BIGINT, t TIMESTAMP) watermark t delay 5 minutes
stream pays (id BIGINT, pt TIMESTAMP) watermark pt delay 5 minutes
"""
_AGG = """aggregate c = paid GROUP BY window(paid.t, INTERVAL 10 MINUTES)
    SELECT window(paid.t, INTERVAL 10 MINUTES) AS w, count(*) AS n
"""
_OUTER = """join paid = orders AS o LEFT OUTER JOIN pays AS p
    ON o.id = p.id AND p.pt BETWEEN o.t AND o.t + INTERVAL 1 HOUR
    SELECT o.id, o.t, p.pt
"""
_PIPELINE = """CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP);
CREATE STREAMING TABLE b (k BIGINT, t TIMESTAMP);
CREATE TEMPORARY VIEW j AS
SELECT x.k, x.t
FROM STREAM(a) WATERMARK t DELAY OF INTERVAL 5 SECONDS AS x
INNER JOIN STREAM(b) WATERMARK t DELAY OF INTERVAL 5 SECONDS AS y
ON x.k = y.k AND y.t BETWEEN x.t AND x.t + INTERVAL 30 MINUTES;
CREATE STREAMING TABLE c AS
SELECT window(v.t, '10 minutes') AS w, count(*) AS n
FROM STREAM(j) AS v
GROUP BY window(v.t, '10 minutes');
"""
CASCADES = [
    (
        "bare OUTER without aliases",
        ".sjoin",
        # the clean join keeps both sides forever (W001 twice): so does the broken one,
        # where the warnings would name the state of `OUTER`
        _STREAMS + "join paid = orders INNER JOIN pays ON orders.id = pays.id\n",
        _STREAMS + "join paid = orders OUTER JOIN pays ON orders.id = pays.id\n",
        (),
    ),
    (
        "watermark unit typo above an aggregate",
        ".sjoin",
        _STREAMS + _OUTER + _AGG,
        _STREAMS.replace("pt delay 5 minutes", "pt delay 5 minuts") + _OUTER + _AGG,
        (),
    ),
    (
        "watermark unit typo above an inner join's aggregate",
        ".sjoin",
        _STREAMS + _OUTER.replace("LEFT OUTER", "INNER") + _AGG,
        _STREAMS.replace("t delay 5 minutes\nstream", "t delay 5 minuts\nstream")
        + _OUTER.replace("LEFT OUTER", "INNER")
        + _AGG,
        (),
    ),
    (
        "missing watermark above an aggregate",
        ".sjoin",
        _STREAMS + _OUTER + _AGG,
        _STREAMS.replace(" watermark t delay 5 minutes", "", 1) + _OUTER + _AGG,
        ("W001", "W002"),  # the join's other side, truly unbounded now; pays' watermark unused
    ),
    (
        "watermark on a stream's read above an aggregate",
        ".sjoin",
        # the binder drops a watermark written on a stream's read (E034): the join would be
        # judged without it (E021: `p` has no watermark) and so would the aggregate
        _STREAMS + _OUTER + _AGG,
        _STREAMS.replace(" watermark pt delay 5 minutes", "")
        + _OUTER.replace("pays AS p", "pays AS p watermark pt delay 5 minutes")
        + _AGG,
        ("W002",),  # orders' watermark: with none on pays, it evicts no state
    ),
    (
        "E033 on the table that reads a view",
        ".sql",
        _PIPELINE,
        _PIPELINE.replace("SELECT window(v.t", "SELECT DISTINCT window(v.t"),
        (),
    ),
    (
        "E033 inside the table that reads a view",
        ".sql",
        _PIPELINE,
        _PIPELINE.replace(
            "FROM STREAM(j) AS v", "FROM STREAM(j) AS v JOIN parquet.`dim` AS d ON v.k = d.k"
        ),  # files read in batch: refused where they are read (a WHERE is a view now)
        (),
    ),
]


def _check(text: str, suffix: str, tmp_path: Path) -> CheckResult:
    if suffix == ".sjoin":
        return check_text(text, "s.sjoin")
    path = tmp_path / f"p{len(list(tmp_path.iterdir()))}.sql"
    path.write_text(text, encoding="utf-8")
    return check_pipeline(path)


@pytest.mark.parametrize(
    ("suffix", "clean", "broken", "allowed"),
    [c[1:] for c in CASCADES],
    ids=[c[0] for c in CASCADES],
)
def test_no_cascade_from_a_broken_statement(
    suffix: str, clean: str, broken: str, allowed: tuple[str, ...], tmp_path: Path
) -> None:
    before = _check(clean, suffix, tmp_path)
    assert before.ok, [f"{d.code} {d.message}" for d in before.diagnostics]
    after = _check(broken, suffix, tmp_path)
    errors = [d for d in after.diagnostics if d.severity == "error"]
    assert len(errors) == 1, [f"{d.code} {d.message}" for d in errors]
    known = {(d.code, d.message) for d in before.diagnostics}
    new = [
        d
        for d in after.diagnostics
        if d.severity != "error" and (d.code, d.message) not in known and d.code not in allowed
    ]
    assert not new, [f"{d.code} {d.message}" for d in new]


# E034 where Spark refuses a watermark defined on a join's output (allowMultiple, its
# default): the relations that read that aggregate read nothing Spark runs
# (cascades.RUNS_NOT), so the state warnings of the join that reads it are left out.
_REDEFINED = """spark 4.3
{setting}
stream l (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds
stream c (k BIGINT, t TIMESTAMP)
join j = l AS L INNER JOIN r AS R
    ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
    SELECT L.k AS k, L.t AS lt
aggregate a = j AS x watermark lt delay 30 seconds
    GROUP BY window(x.lt, INTERVAL 10 SECONDS), x.k
    SELECT window(x.lt, INTERVAL 10 SECONDS) AS w, x.k AS k, count(*) AS n
join z = a AS A INNER JOIN c AS C ON A.k = C.k
    SELECT A.k, A.n, C.t
"""


def test_a_refused_watermark_silences_what_reads_it() -> None:
    allowed = check_text(
        _REDEFINED.format(setting="set allow_multiple_stateful_operators = false"), "a.sjoin"
    )
    assert [d.code for d in allowed.diagnostics if d.severity == "error"] == []
    # runs: `z` keeps both sides for ever (no watermark reaches `c`, no range), and says so
    assert any(d.code == "W001" and "`z`" in d.message for d in allowed.diagnostics)
    refused = check_text(_REDEFINED.format(setting=""), "r.sjoin")
    assert [d.code for d in refused.diagnostics] == ["E034"], [
        f"{d.code} {d.message}" for d in refused.diagnostics
    ]
