"""Re-record ``spark_decimal_arith.json``: the type Spark gives ``a OP b`` for a grid of
numeric operand types (DECIMALs of several (precision, scale), near 38 too, integers, integer
and decimal literals, DOUBLE) and each of + - * / %, read with ``typeof`` on local Spark
(spark.sql.decimalOperations.allowPrecisionLoss at its default, true).

    .venv/bin/python -m tests.compiler.binding.record_decimal_arith

``test_decimal_arith_types.py`` checks ``compiler.types.arith_type`` against every row.
"""

from __future__ import annotations

import json
from pathlib import Path

RECORDED = Path(__file__).with_name("spark_decimal_arith.json")

# operand -> (SQL text of a value of that type, the type as sjoin's binder types it)
OPERANDS: dict[str, str] = {
    "DECIMAL(12,2)": "CAST(1 AS DECIMAL(12,2))",
    "DECIMAL(10,0)": "CAST(1 AS DECIMAL(10,0))",
    "DECIMAL(5,5)": "CAST(0.1 AS DECIMAL(5,5))",
    "DECIMAL(20,18)": "CAST(1 AS DECIMAL(20,18))",
    "DECIMAL(38,0)": "CAST(1 AS DECIMAL(38,0))",
    "DECIMAL(38,10)": "CAST(1 AS DECIMAL(38,10))",
    "DECIMAL(38,38)": "CAST(0.1 AS DECIMAL(38,38))",
    "DECIMAL(30,25)": "CAST(1 AS DECIMAL(30,25))",
    "TINYINT": "CAST(1 AS TINYINT)",
    "SMALLINT": "CAST(1 AS SMALLINT)",
    "INT": "CAST(1 AS INT)",
    "BIGINT": "CAST(1 AS BIGINT)",
    "DOUBLE": "CAST(1 AS DOUBLE)",
    "FLOAT": "CAST(1 AS FLOAT)",
    "literal 2": "2",
    "literal 1000000": "1000000",
    "literal 10000000000": "10000000000",
    "literal 1.5": "1.5",
    "literal 0.05": "0.05",
}
OPERATORS = ("+", "-", "*", "/", "%")


def main() -> None:
    from sjoin.jvm.spark_driver import get_spark

    spark = get_spark("record-decimal-arith", quiet=True)
    names = list(OPERANDS)
    pairs = [
        (a, b)
        for a in names
        for b in names
        if "DECIMAL" in a + b or "." in OPERANDS[a] + OPERANDS[b] or a.startswith("literal")
    ]
    rows = []
    for op in OPERATORS:
        exprs = [f"typeof(({OPERANDS[a]}) {op} ({OPERANDS[b]}))" for a, b in pairs]
        got = spark.sql("SELECT " + ", ".join(exprs)).collect()[0]
        rows += [[a, op, b, str(got[i])] for i, (a, b) in enumerate(pairs)]
    literals = {
        name: str(spark.sql(f"SELECT typeof({text})").collect()[0][0])
        for name, text in OPERANDS.items()
        if name.startswith("literal")
    }
    RECORDED.write_text(
        json.dumps(
            {
                "spark": spark.version,
                "ansi": spark.conf.get("spark.sql.ansi.enabled"),
                "allowPrecisionLoss": spark.conf.get(
                    "spark.sql.decimalOperations.allowPrecisionLoss"
                ),
                "literals": literals,
                "rows": rows,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"{len(rows)} rows recorded from Spark {spark.version}")


if __name__ == "__main__":
    main()
