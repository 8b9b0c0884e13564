"""Every pipeline of the catalogue (tests/integration/pipelines/catalogue/, docs/pipelines.md) runs
on local Spark with SDP's own CLI, and what Spark does with it equals what its `expected.json`
recorded: accepted with these final rows of every table and these micro-batches of every flow,
or rejected with this error. `python scripts/pipeline_catalogue.py record` rewrites the
recordings (after a change of a case, or of Spark).

The cases run on the test run's one Spark Connect server (the `connect_server` fixture), a
few at a time, each in its own database; each pipeline sets `spark.sql.shuffle.partitions`
to 1 (a third faster than 2 on this 2-core machine; the outcomes recorded with 2 were the
same) and reads a handful of rows in three micro-batches (a rejected one in one).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ...conftest import load_script

pytestmark = pytest.mark.spark

catalogue = load_script("pipeline_catalogue")
CASES = catalogue.cases()


@pytest.fixture(scope="module")
def outcomes(connect_server: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each case's outcome on Spark, or the exception its run raised."""
    work: Path = tmp_path_factory.mktemp("catalogue")

    def one(case: str) -> Any:
        try:
            return catalogue.run_case(catalogue.CATALOGUE / case, connect_server, work)
        except Exception as err:  # reported by the case's own test
            return err

    with ThreadPoolExecutor(max_workers=catalogue.JOBS) as pool:
        return dict(zip(CASES, pool.map(one, CASES), strict=True))


@pytest.mark.parametrize("case", CASES)
def test_spark_does_what_the_catalogue_recorded(case: str, outcomes: dict[str, Any]) -> None:
    outcome = outcomes[case]
    if isinstance(outcome, Exception):
        raise outcome
    expected = (catalogue.CATALOGUE / case / "expected.json").read_text(encoding="utf-8")
    assert catalogue.dumps(outcome) == expected
