"""Differential test: random valid specs and traces through ``sjoin.jvm.verify``.

Specs: a join type Spark accepts with the generated bounds, equi-keys (one or two), lower
and upper time bounds in seconds (strict or not), an optional side filter, and watermark
delays.  Traces: 2-4 micro-batches whose timestamps move forward and cluster around the
bounds and the watermark, with late rows, rows exactly at the watermark, duplicates and
nulls.  CI runs ``SJOIN_RANDOM_CASES`` (default 10) derandomized examples; set it higher to
run more by hand (``SJOIN_RANDOM_CASES=500``).  Shrinking re-runs Spark many times, so it
is off unless ``SJOIN_RANDOM_SHRINK=1``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
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

    n_batches = draw(st.integers(2, 4))
    batches = []
    base = 100
    for _ in range(n_batches):
        base += draw(st.sampled_from([0, 5, 10, 20, 40]))
        batch: dict[str, list[dict[str, Any]]] = {}
        for side in ("l", "r"):
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
                batch[side] = rows
        if not batch:
            batch["l"] = [{"k": 1, "g": "x", "t": ts(base), "v": "a"}]
        batches.append(batch)
    return Case(spec, batches)


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
