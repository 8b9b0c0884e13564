"""Cold start of `sjoin check`: a new process per run, as a user's shell or a pre-commit
hook runs it.  Prints the median and the best of N runs, plus the very first run, with an
empty parser cache (a fresh ``XDG_CACHE_HOME``: grammar/__init__.py).  `bench.py --startup`
times every command this way.

    .venv/bin/python benchmarks/check_startup.py [--runs 15] [SPEC]

Run it with the venv that scripts/setup.sh makes (a regular install, as users get): an
editable install adds an import hook that costs tens of milliseconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from workload import count  # noqa: E402 - the benchmark folder is not a package


def one_run(spec: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "sjoin.cli.main", "check", spec],
        check=True,
        capture_output=True,
        env=env,
    )
    return time.perf_counter() - start


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__)
    args.add_argument("spec", nargs="?", default=str(ROOT / "examples" / "ad_attribution.sjoin"))
    args.add_argument("--runs", type=count, default=15)
    opts = args.parse_args()
    with tempfile.TemporaryDirectory(prefix="sjoin-cache-") as cache:
        env = {**os.environ, "XDG_CACHE_HOME": cache}
        first = one_run(opts.spec, env)
        times = sorted(one_run(opts.spec, env) for _ in range(opts.runs))
    print(f"sjoin check {Path(opts.spec).name}: {opts.runs} cold processes")
    print(f"  first run (no parser cache): {first:.3f} s")
    print(f"  median: {statistics.median(times):.3f} s   best: {times[0]:.3f} s")
    print(f"  machine load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
