"""Re-record ``spark_decimal_common.json``: the type Spark gives a value that is one of two
numeric operands (``CASE WHEN true THEN a ELSE b END``, ``coalesce(a, b)``) for a grid of
DECIMALs, integers, an integer literal and DOUBLE, read with ``typeof`` on local Spark.

    .venv/bin/python -m tests.compiler.binding.record_decimal_common

``test_decimal_common_types.py`` checks ``compiler.types.common_type`` against every row.
"""

from __future__ import annotations

import json
from pathlib import Path

RECORDED = Path(__file__).with_name("spark_decimal_common.json")

OPERANDS: dict[str, str] = {
    "DECIMAL(12,2)": "CAST(1 AS DECIMAL(12,2))",
    "DECIMAL(10,4)": "CAST(1 AS DECIMAL(10,4))",
    "DECIMAL(38,10)": "CAST(1 AS DECIMAL(38,10))",
    "DECIMAL(38,0)": "CAST(1 AS DECIMAL(38,0))",
    "DECIMAL(5,5)": "CAST(0.1 AS DECIMAL(5,5))",
    "INT": "CAST(1 AS INT)",
    "BIGINT": "CAST(1 AS BIGINT)",
    "literal 2": "2",
    "DOUBLE": "CAST(1 AS DOUBLE)",
}
FORMS = {
    "case": "CASE WHEN true THEN ({a}) ELSE ({b}) END",
    "coalesce": "coalesce(({a}), ({b}))",
}


def main() -> None:
    from sjoin.jvm.spark_driver import get_spark

    spark = get_spark("record-decimal-common", quiet=True)
    pairs = [(a, b) for a in OPERANDS for b in OPERANDS if "DECIMAL" in a + b]
    rows = []
    for form, template in FORMS.items():
        exprs = ["typeof(" + template.format(a=OPERANDS[a], b=OPERANDS[b]) + ")" for a, b in pairs]
        got = spark.sql("SELECT " + ", ".join(exprs)).collect()[0]
        rows += [[form, a, b, str(got[i])] for i, (a, b) in enumerate(pairs)]
    RECORDED.write_text(json.dumps({"spark": spark.version, "rows": rows}, indent=1) + "\n")
    print(f"{len(rows)} rows recorded from Spark {spark.version}")


if __name__ == "__main__":
    main()
