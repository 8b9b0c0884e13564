"""Counts the inputs the fuzz tests feed to the checker; the total is reported at the end of
the run (tests/conftest.py), so that the size of the fuzzing is visible in every CI log.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

FUZZ_INPUTS: Counter[str] = Counter()


@pytest.fixture(scope="session")
def fuzz_inputs() -> Counter[str]:
    """Test name -> number of inputs checked (session-scoped, so hypothesis accepts it)."""
    return FUZZ_INPUTS


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """The inputs a test checked go with its report (a property of the test), so that the
    total is right when the tests run in several processes (pytest-xdist)."""
    before = Counter(FUZZ_INPUTS)
    try:
        return (yield)
    finally:
        added = FUZZ_INPUTS - before
        if added:
            item.user_properties.append(("fuzz inputs", dict(added)))
