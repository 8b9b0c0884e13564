"""Differential test: random valid specs and traces through ``sjoin.jvm.verify``.

Specs: a join type Spark accepts with the generated bounds, equi-keys (one or two), lower
and upper time bounds in seconds (strict or not), an optional side filter, and watermark
delays.  Traces: 2-4 micro-batches whose timestamps move forward and cluster around the
bounds and the watermark, with late rows, rows exactly at the watermark, duplicates and
nulls.  CI runs ``SJOIN_RANDOM_CASES`` (default 10) derandomized examples; set it higher to
run more by hand (``SJOIN_RANDOM_CASES=500``).  Shrinking re-runs Spark many times, so it
is off unless ``SJOIN_RANDOM_SHRINK=1``.

``pipeline_cases`` wraps such a join in the operators around it (issue 37): a union of two
streams, a view with a WHERE, a dedup (with or without WITHIN WATERMARK) before either side,
and after the join a stream-static join with a table and a windowed aggregate; its trace is
the join's with rows for the second stream and the table's rows.
``tests/integration/parity/test_engines.py`` runs both generators on both engines.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from sjoin.api import check_text
from sjoin.jvm.verify import verify

from .scenarios import records, ts

pytestmark = pytest.mark.spark

CASES = int(os.environ.get("SJOIN_RANDOM_CASES", "10"))
PHASES = (
    (Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink)
    if os.environ.get("SJOIN_RANDOM_SHRINK")
    else (Phase.explicit, Phase.reuse, Phase.generate)
)
JOIN_TYPES = ("INNER", "LEFT OUTER", "RIGHT OUTER", "FULL OUTER", "LEFT SEMI", "LEFT ANTI")


@dataclass(frozen=True)
class Case:
    spec: str
    batches: list[dict[str, list[dict[str, Any]]]]
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def trace(self) -> list[dict[str, Any]]:
        """The trace records: the static tables' rows in batch 0, then the streams'."""
        return [
            *(
                {"batch": 0, "table": name, "row": r}
                for name, rs in self.tables.items()
                for r in rs
            ),
            *records(self.batches),
        ]


def _offset(seconds: int) -> str:
    if seconds == 0:
        return ""
    sign = "+" if seconds > 0 else "-"
    return f" {sign} INTERVAL {abs(seconds)} SECONDS"


@st.composite
def cases(draw: st.DrawFn) -> Case:
    how = draw(st.sampled_from(JOIN_TYPES))
    # non-inner joins need a watermark and a time range on both sides to be accepted
    optional = st.none() if how == "INNER" else st.nothing()
    delay_l = draw(st.integers(0, 12) | optional)
    delay_r = draw(st.integers(0, 12) | optional)
    lower = draw(st.integers(-10, 8))
    upper = lower + draw(st.integers(0, 12))
    strict_lo, strict_hi = draw(st.booleans()), draw(st.booleans())
    if strict_lo and strict_hi and upper - lower < 1:
        upper = lower + 1
    composite = draw(st.booleans())
    keys = "L.k = R.k" + (" AND L.g = R.g" if composite else "")
    lo_op, hi_op = (">" if strict_lo else ">="), ("<" if strict_hi else "<=")
    condition = f"{keys} AND L.t {lo_op} R.t{_offset(lower)} AND L.t {hi_op} R.t{_offset(upper)}"
    side_filter = draw(st.sampled_from(["", " AND L.v <> 'b'", " AND R.v <> 'b'"]))
    condition += side_filter
    policy = draw(st.sampled_from(["", "set multiple_watermark_policy = max\n"]))

    def stream(name: str, delay: int | None) -> str:
        wm = f" watermark t delay {delay} seconds" if delay is not None else ""
        return f"stream {name} (k BIGINT, g STRING, t TIMESTAMP, v STRING){wm}\n"

    if how in ("LEFT SEMI", "LEFT ANTI"):
        select = "SELECT L.k AS lk, L.g AS lg, L.t AS lt, L.v AS lv"
    else:
        select = (
            "SELECT L.k AS lk, L.g AS lg, L.t AS lt, L.v AS lv, "
            "R.k AS rk, R.g AS rg, R.t AS rt, R.v AS rv"
        )
    spec = (
        "spark 4.3\n"
        + policy
        + stream("l", delay_l)
        + stream("r", delay_r)
        + f"join j = l AS L {how} JOIN r AS R ON {condition}\n  {select}\n"
    )

    return Case(spec, _batches(draw, ("l", "r"), composite))


def _batches(
    draw: st.DrawFn, streams: tuple[str, ...], composite: bool
) -> list[dict[str, list[dict[str, Any]]]]:
    """2-4 micro-batches of rows of ``streams`` (each ``(k, g, t, v)``), their times
    moving forward, with late rows, duplicates and nulls; batch 0 has a row."""
    n_batches = draw(st.integers(2, 4))
    batches = []
    base = 100
    for _ in range(n_batches):
        base += draw(st.sampled_from([0, 5, 10, 20, 40]))
        batch: dict[str, list[dict[str, Any]]] = {}
        for side in streams:
            rows = []
            for _ in range(draw(st.integers(0, 3))):
                # around the current time: up to 25 s back (late rows) and 15 s ahead
                seconds = draw(st.integers(base - 25, base + 15))
                t = None if draw(st.integers(0, 19)) == 0 else ts(seconds)
                rows.append(
                    {
                        "k": draw(st.sampled_from([1, 1, 2, 3, None])),
                        "g": draw(st.sampled_from(["x", "y", None])) if composite else "x",
                        "t": t,
                        "v": draw(st.sampled_from(["a", "b", None])),
                    }
                )
            if rows:
                # a Kafka redelivery: a row again, in its batch (a dedup keeps the first)
                if draw(st.integers(0, 3)) == 0:
                    rows.append(dict(draw(st.sampled_from(rows))))
                batch[side] = rows
        if not batch:
            batch["l"] = [{"k": 1, "g": "x", "t": ts(base), "v": "a"}]
        batches.append(batch)
    return batches


YES_OR_NO = st.sampled_from([True, False])  # unlike booleans(), not False at first
VIEW_WHERES = ("X.v <> 'b'", "X.v IS NULL OR X.k <> 3", "X.k IN (1, 2) AND X.g = 'x'")


@st.composite
def pipeline_cases(draw: st.DrawFn) -> Case:
    """A join of ``cases`` with the operators around it: each side read through an
    optional union (left: ``l UNION ALL l2``), view with a WHERE and dedup, and the join's
    output through an optional stream-static join with ``dim`` and a windowed aggregate."""
    join = draw(cases())
    head, _, rest = join.spec.partition("join j = ")
    wm_l = " watermark t delay" in head.split("stream l ")[1].split("\n")[0]
    wm_r = " watermark t delay" in head.split("stream r ")[1].split("\n")[0]
    statements: list[str] = []
    streams = ["l", "r"]

    def side(name: str, alias: str, watermarked: bool) -> str:
        current = name
        if name == "l" and draw(YES_OR_NO):  # a second topic of the same shape
            delay = f" watermark t delay {draw(st.integers(0, 12))} seconds" if watermarked else ""
            statements.append(f"stream l2 (k BIGINT, g STRING, t TIMESTAMP, v STRING){delay}")
            statements.append("union lu = l UNION ALL l2")
            streams.append("l2")
            current = "lu"
        if draw(st.booleans()):
            where = draw(st.sampled_from(VIEW_WHERES))
            statements.append(
                f"view {name}v = SELECT X.k, X.g, X.t, X.v FROM {current} AS X WHERE {where}"
            )
            current = f"{name}v"
        keys = ["(k, t)", "(k, g, t)", "(v)", *(["(k) WITHIN WATERMARK"] if watermarked else [])]
        dedup = draw(st.sampled_from([None, *keys]))
        if dedup is not None:
            statements.append(f"dedup {name}d = {current} ON {dedup}")
            current = f"{name}d"
        return current

    left = side("l", "L", wm_l)
    right = side("r", "R", wm_r)
    join_text = rest.replace("l AS L ", f"{left} AS L ", 1).replace(
        " r AS R ", f" {right} AS R ", 1
    )
    statements.append("join j = " + join_text.rstrip("\n"))
    tables: dict[str, list[dict[str, Any]]] = {}
    current = "j"
    if draw(YES_OR_NO):
        statements.insert(0, "table dim (k BIGINT, d STRING) from parquet (path = 'dim')")
        dim_rows = draw(
            st.lists(
                st.tuples(st.sampled_from([1, 2, 3, None]), st.sampled_from(["p", "q", None])),
                max_size=4,
            )
        )
        tables["dim"] = [{"k": k, "d": d} for k, d in dim_rows]
        how = draw(st.sampled_from(["INNER", "LEFT OUTER", "RIGHT OUTER"]))
        on = "J.lk = D.k"
        if how == "RIGHT OUTER":  # the table on the left, the stream on the null-padded side
            spec = f"dim AS D RIGHT OUTER JOIN j AS J ON {on}"
        else:
            spec = f"j AS J {how} JOIN dim AS D ON {on}"
        statements.append(f"join e = {spec}\n  SELECT J.lk AS lk, J.lt AS lt, J.lv AS lv, D.d AS d")
        current = "e"
    if draw(YES_OR_NO):
        window = "window(A.lt, INTERVAL 10 SECONDS)"
        by = draw(st.sampled_from(["", ", A.lv"]))
        # a join other than INNER under an aggregate runs in append mode only (E023)
        inner = " INNER JOIN " in rest
        modes = ["append", "update"] if inner and wm_l else ["update"] if inner else ["append"]
        mode = draw(st.sampled_from(modes))
        select = f"{window} AS w{by.replace('A.lv', 'A.lv AS lv')}, count(*) AS n, max(A.lk) AS mk"
        statements.append(
            f"aggregate a = {current} AS A GROUP BY {window}{by}\n  SELECT {select}\n"
            f"  OUTPUT MODE {mode}"
        )
    spec = head + "\n".join(statements) + "\n"
    composite = " AND L.g = R.g" in join.spec
    batches = join.batches
    if "l2" in streams:  # the second topic's rows, in the join's micro-batches
        extra = draw(st.lists(st.integers(0, 3), min_size=len(batches), max_size=len(batches)))
        for i, (batch, n) in enumerate(zip(batches, extra, strict=True)):
            base = min(
                (int(_secs(r["t"])) for rs in batch.values() for r in rs if r["t"]), default=100
            )
            rows = [
                {
                    "k": draw(st.sampled_from([1, 2, 3, None])),
                    "g": draw(st.sampled_from(["x", "y"])) if composite else "x",
                    "t": ts(draw(st.integers(base - 20, base + 15))),
                    "v": draw(st.sampled_from(["a", "b", None])),
                }
                for _ in range(n)
            ]
            if rows:
                batches[i] = {**batch, "l2": rows}
    return Case(spec, batches, tables)


def _secs(text: str) -> float:
    """Seconds after 2026-01-01T00:00:00Z of a ``ts`` text."""
    from datetime import datetime

    at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return at.timestamp() - 1_767_225_600


RAN = {"cases": 0, "agree": 0}


@settings(
    max_examples=CASES,
    derandomize=True,
    deadline=None,
    database=None,
    phases=PHASES,
    suppress_health_check=list(HealthCheck),
)
@given(case=cases())
def test_random_specs_agree(spark: Any, case: Case) -> None:
    note(case.spec)
    note(repr(case.batches))
    result = check_text(case.spec, "random.sjoin")
    errors = [f"{d.code} {d.message}" for d in result.diagnostics if d.severity == "error"]
    assert result.ok and result.plan is not None, errors
    report = verify(result.plan, records(case.batches), spark=spark)
    RAN["cases"] += 1
    RAN["agree"] += report.agree
    print(f"random case {RAN['cases']}: agree={report.agree}", file=sys.stderr)
    assert report.agree, "\n" + case.spec + "\n" + repr(case.batches) + "\n" + report.text()


@settings(
    max_examples=CASES,
    derandomize=True,
    deadline=None,
    database=None,
    phases=PHASES,
    suppress_health_check=list(HealthCheck),
)
@given(case=pipeline_cases())
def test_random_pipelines_agree(spark: Any, case: Case) -> None:
    """The operators around the join (``pipeline_cases``) on real Spark: the runtime and the
    generated job agree batch by batch (rows, watermark, every operator's state metrics)."""
    note(case.spec)
    note(repr(case.trace()))
    result = check_text(case.spec, "pipeline.sjoin")
    errors = [f"{d.code} {d.message}" for d in result.diagnostics if d.severity == "error"]
    assert result.ok and result.plan is not None, errors
    report = verify(result.plan, case.trace(), spark=spark)
    assert report.agree, "\n" + case.spec + "\n" + repr(case.trace()) + "\n" + report.text()
