"""The Spark rules both engines run (``runtime/spark_rules.py``): each rule's own cases, and
each scalar rule held equal to its vectorised twin (``runtime/columnar/spark_rules_vec.py``)
over generated inputs."""

from __future__ import annotations

import pytest

from sjoin.compiler.model import Bound
from sjoin.compiler.plan import StateRule
from sjoin.runtime.spark_rules import state_threshold_us

# ------------------------------------------------------------------ 1. state threshold

_KEY = StateRule("key", column="t", offset_ms=0, key_index=0)
_VALUE = StateRule(
    "value",
    column="t",
    offset_ms=-10_001,
    bounds=(Bound(1, -10_000_000.0, False, "a"), Bound(1, -5_000_000.0, True, "b")),
)
_NEVER = StateRule("never", reason="no watermark on the other side")


@pytest.mark.parametrize(
    ("rule", "evict_ms", "expected"),
    [
        (_KEY, None, None),  # no watermark yet: nothing is evicted
        (_VALUE, None, None),
        (_NEVER, None, None),
        (_NEVER, 60_000, None),  # a side that is never evicted
        (_KEY, 0, 0),
        (_KEY, 60_000, 60_000_000),  # the key watermark is the eviction watermark, in µs
        (_VALUE, 60_000, 49_999_000),  # the smallest bound: 60 s - 10 s - 1 ms (not strict)
        (_VALUE, 0, -10_001_000),
    ],
)
def test_state_threshold_is_the_side_state_watermark_in_us(
    rule: StateRule, evict_ms: int | None, expected: int | None
) -> None:
    assert state_threshold_us(rule, evict_ms) == expected
