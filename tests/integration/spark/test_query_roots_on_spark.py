"""The Spark fact behind W010 and E025 for an intermediate relation (issue 16), on real
Spark: each query is pruned by itself.  Under the aggregate `hourly` Spark prunes
k.order_time and the query runs; `shipped` run as its own query keeps it, and its input `k`
carries two event-time columns: MULTIPLE_EVENT_TIME_COLUMNS at the first batch."""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.api import check_file
from sjoin.jvm.verify import verify

from ...cli.test_query_roots import TRACE, WITH_SINK

pytestmark = pytest.mark.spark


def test_each_query_is_pruned_by_itself(spark: Any) -> None:
    checked = check_file(WITH_SINK)  # W010 only: the plan of the spec's queries
    assert checked.ok and checked.plan is not None
    trace = [line for line in TRACE.splitlines() if line]
    hourly = verify(checked.plan, trace, relation="hourly", spark=spark)
    assert hourly.agree, hourly.text()
    # the default plan run as `shipped` (what --relation now refuses with E025)
    shipped = verify(checked.plan, trace, relation="shipped", spark=spark)
    assert not shipped.agree
    assert "MULTIPLE_EVENT_TIME_COLUMNS" in shipped.text()
