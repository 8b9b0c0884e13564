"""Counts the inputs the fuzz tests feed to the checker and reports the total at the end of
the run, so that the size of the fuzzing is visible in every CI log.
"""

from __future__ import annotations

from collections import Counter

import pytest

FUZZ_INPUTS: Counter[str] = Counter()


@pytest.fixture(scope="session")
def fuzz_inputs() -> Counter[str]:
    """Test name -> number of inputs checked (session-scoped, so hypothesis accepts it)."""
    return FUZZ_INPUTS


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    if not FUZZ_INPUTS:
        return
    total = sum(FUZZ_INPUTS.values())
    terminalreporter.write_sep("-", f"fuzz: {total} inputs checked")
    for name, count in sorted(FUZZ_INPUTS.items()):
        terminalreporter.write_line(f"  {name}: {count}")
