"""`StateRule` checks itself when built: a reason exactly when a side is never evicted, and
each eviction with the fields it reads (key: a key index; value: bounds; both: a column and
an offset; a window only for a key)."""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.planning.plan import StateRule
from sjoin.compiler.vocabulary.model import Bound

BOUND = Bound(1, -60_000_000.0, False, "a.t >= b.t - INTERVAL 1 MINUTE")

GOOD: list[dict[str, Any]] = [
    {"eviction": "key", "column": "k", "offset_ms": 0, "key_index": 0},
    {"eviction": "key", "column": "w", "offset_ms": 0, "key_index": 1, "window": True},
    {"eviction": "value", "column": "t", "offset_ms": -60_001, "bounds": (BOUND,)},
    {"eviction": "never", "reason": "`a` has no watermark"},
]


@pytest.mark.parametrize("fields", GOOD)
def test_a_consistent_rule_is_built(fields: dict[str, Any]) -> None:
    assert StateRule(**fields).eviction == fields["eviction"]


@pytest.mark.parametrize(
    ("fields", "needs"),
    [
        # the documented invariant: a reason exactly when the side is never evicted
        ({"eviction": "never"}, "a reason exactly when"),
        ({"eviction": "never", "reason": ""}, "a reason exactly when"),
        ({**GOOD[0], "reason": "why"}, "a reason exactly when"),
        ({**GOOD[2], "reason": "why"}, "a reason exactly when"),
        # the fields each eviction reads
        ({**GOOD[3], "column": "t"}, "a column and an offset"),
        ({**GOOD[3], "offset_ms": 0}, "a column and an offset"),
        ({**GOOD[0], "column": None}, "a column and an offset"),
        ({**GOOD[2], "offset_ms": None}, "a column and an offset"),
        ({**GOOD[0], "key_index": None}, "a key index exactly for key eviction"),
        ({**GOOD[2], "key_index": 0}, "a key index exactly for key eviction"),
        ({**GOOD[3], "key_index": 0}, "a key index exactly for key eviction"),
        ({**GOOD[2], "bounds": ()}, "bounds exactly for value eviction"),
        ({**GOOD[0], "bounds": (BOUND,)}, "bounds exactly for value eviction"),
        ({**GOOD[3], "bounds": (BOUND,)}, "bounds exactly for value eviction"),
        ({**GOOD[2], "window": True}, "a window only for key eviction"),
        ({**GOOD[3], "window": True}, "a window only for key eviction"),
        ({"eviction": "sometimes", "reason": "x"}, "an eviction of key, value or never"),
    ],
)
def test_an_inconsistent_rule_raises_when_built(fields: dict[str, Any], needs: str) -> None:
    with pytest.raises(ValueError, match=f"invalid StateRule .*: it needs .*{needs}"):
        StateRule(**fields)


def test_the_planner_builds_each_kind_of_rule() -> None:
    """Every kind the planner makes passes the check (key, value, never with its reason)."""
    result = check_text(
        "spark 4.3\n"
        "stream a (k INT, t TIMESTAMP) watermark t delay 1 minute\n"
        "stream b (j INT, u TIMESTAMP) watermark u delay 1 minute\n"
        "stream c (i INT, v TIMESTAMP)\n"
        "join by_key = a INNER JOIN b ON a.k = b.j AND a.t = b.u\n"
        "join by_time = a INNER JOIN b\n"
        "  ON a.k = b.j AND a.t BETWEEN b.u - INTERVAL 1 MINUTE AND b.u + INTERVAL 1 MINUTE\n"
        "join unbounded = a INNER JOIN c ON a.k = c.i\n"
    )
    assert result.ok, [d.message for d in result.diagnostics]
    assert result.plan is not None
    rules = {(j.name, s.name): s.state for j in result.plan.joins for s in (j.left, j.right)}
    assert rules[("by_key", "left")].eviction == "key"
    assert rules[("by_time", "left")].eviction == "value"
    assert rules[("unbounded", "right")].eviction == "never"
    assert rules[("unbounded", "right")].reason
