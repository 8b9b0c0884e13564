"""Where the reference runtime spends its time on the benchmark workload: a pyinstrument
profile of reading the trace and running every batch (output rows counted, as in bench.py's
throughput figure; ``--rows`` also builds the JSON-ready row dicts).

    .venv/bin/python benchmarks/profile_runtime.py [--n 20000] [--rows] [--html FILE]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import count, generate  # the benchmark folder is not a package


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=count, default=20_000, help="rows per side per batch")
    parser.add_argument("--rows", action="store_true", help="also build the output row dicts")
    parser.add_argument("--html", type=Path, help="write pyinstrument's HTML page here too")
    opts = parser.parse_args()
    try:
        from pyinstrument import Profiler
    except ImportError:
        sys.exit("profile_runtime: needs pyinstrument (pip install pyinstrument)")

    from sjoin.api import check_file
    from sjoin.runtime import iter_batches

    with tempfile.TemporaryDirectory(prefix="sjoin-profile-") as tmp:
        work = generate(Path(tmp), opts.n)
        plan = check_file(work.spec).plan
        assert plan is not None
        profiler = Profiler(interval=0.0005)
        profiler.start()
        for out in iter_batches(plan, work.trace):
            if opts.rows:
                assert len(out.rows) == out.row_count
        profiler.stop()
    print(profiler.output_text(unicode=True, color=False, show_all=False))
    if opts.html is not None:
        opts.html.write_text(profiler.output_html())


if __name__ == "__main__":
    main()
