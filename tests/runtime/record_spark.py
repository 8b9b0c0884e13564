"""Re-record ``spark_recorded.json``: run every scenario's PySpark job on real Spark (through
``sjoin.jvm.spark_driver``) and store what Spark reported per batch.

    .venv/bin/python -m tests.runtime.record_spark [NAME ...]

It prints, per scenario, whether the runtime agrees; the stored file is what
``test_scenarios.py`` checks the runtime against without a JVM.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from datetime import date
from pathlib import Path
from typing import Any

from .harness import Observed, explain_difference
from .scenarios import SCENARIOS

RECORDED = Path(__file__).with_name("spark_recorded.json")


def load() -> dict[str, list[Observed]]:
    data = json.loads(RECORDED.read_text())
    return {
        name: [
            Observed(
                o["batch"],
                tuple(o["rows"]),
                o["watermark_ms"],
                tuple(tuple(m) for m in o["metrics"]),
            )
            for o in batches
        ]
        for name, batches in data["scenarios"].items()
    }


def main(names: list[str]) -> int:
    import pyspark

    from sjoin.jvm.spark_driver import get_spark

    spark = get_spark("sjoin-record")
    data = json.loads(RECORDED.read_text()) if RECORDED.exists() else {"scenarios": {}}
    data["_comment"] = (
        f"Recorded from Spark {pyspark.__version__} (local[2], 2 shuffle partitions, UTC) "
        f"via sjoin.jvm.spark_driver by tests/runtime/record_spark.py on {date.today()}"
    )
    failures = 0
    for scenario in SCENARIOS:
        if names and scenario.name not in names:
            continue
        want = scenario.run_spark(spark)
        got = scenario.run_runtime()
        same = got == want
        failures += not same
        print(f"{'ok  ' if same else 'DIFF'} {scenario.name}", flush=True)
        if not same:
            print(explain_difference(got, want), flush=True)
        data["scenarios"][scenario.name] = [
            {**asdict(o), "rows": list(o.rows), "metrics": [list(m) for m in o.metrics]}
            for o in want
        ]
    data["scenarios"] = dict(sorted(data["scenarios"].items()))
    RECORDED.write_text(dump(data))
    return 1 if failures else 0


def dump(data: dict[str, Any]) -> str:
    """One line per recorded batch, so that a re-recording diffs batch by batch."""
    lines = ["{", f' "_comment": {json.dumps(data["_comment"])},', ' "scenarios": {']
    names = list(data["scenarios"])
    for i, name in enumerate(names):
        lines.append(f"  {json.dumps(name)}: [")
        batches = data["scenarios"][name]
        for j, batch in enumerate(batches):
            comma = "," if j < len(batches) - 1 else ""
            lines.append(f"   {json.dumps(batch, sort_keys=True)}{comma}")
        lines.append("  ]" + ("," if i < len(names) - 1 else ""))
    lines += [" }", "}"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
