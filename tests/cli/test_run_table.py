"""`sjoin run --table NAME=PATH` (issue 37, item 4): a static table's rows from a file the
user names, on both engines; with the trace's own table lines (a Delta table's later
version); and every way the option or the file can be wrong, each a usage error or a bad
row located at its line and column, never a row silently dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from sjoin.cli.main import main

SPEC = """\
table customers (customer_id BIGINT, segment STRING) from FORMAT (path = 'dim/c')
stream orders (order_id BIGINT, customer_id BIGINT, order_time TIMESTAMP)
    watermark order_time delay 10 minutes
join e = orders AS o LEFT OUTER JOIN customers AS c ON o.customer_id = c.customer_id
    SELECT o.order_id, c.segment
"""


def _order(batch: int, oid: int, cid: int) -> str:
    row = {"order_id": oid, "customer_id": cid, "order_time": "2026-01-01T08:00:00Z"}
    return json.dumps({"batch": batch, "stream": "orders", "row": row})


def _setup(tmp_path: Path, fmt: str, table_lines: list[str], trace: list[str]) -> list[str]:
    (tmp_path / "s.sjoin").write_text(SPEC.replace("FORMAT", fmt))
    (tmp_path / "t.jsonl").write_text("".join(line + "\n" for line in trace))
    (tmp_path / "customers.jsonl").write_text("".join(line + "\n" for line in table_lines))
    return [
        "run",
        str(tmp_path / "s.sjoin"),
        "--trace",
        str(tmp_path / "t.jsonl"),
        "--table",
        f"customers={tmp_path / 'customers.jsonl'}",
    ]


def _invoke(args: list[str]) -> Result:
    return CliRunner().invoke(main, args)


def _rows(result: Result) -> list[tuple[int, object]]:
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return [(r["row"]["order_id"], r["row"]["segment"]) for r in lines if "row" in r]


CUSTOMERS = [
    json.dumps({"customer_id": 1, "segment": "gold"}),
    json.dumps({"customer_id": 2, "segment": None}),
]


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_a_table_file_holds_for_the_whole_run(tmp_path: Path, engine: str) -> None:
    args = _setup(tmp_path, "parquet", CUSTOMERS, [_order(0, 10, 1), _order(1, 11, 2)])
    result = _invoke([*args, "--engine", engine])
    assert result.exit_code == 0, result.output
    assert _rows(result) == [(10, "gold"), (11, None)]


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_a_delta_table_holds_the_file_until_the_trace_gives_its_next_version(
    tmp_path: Path, engine: str
) -> None:
    version = json.dumps(
        {"batch": 1, "table": "customers", "row": {"customer_id": 1, "segment": "new"}}
    )
    trace = [_order(0, 10, 1), version, _order(1, 11, 1)]
    result = _invoke([*_setup(tmp_path, "delta", CUSTOMERS, trace), "--engine", engine])
    assert result.exit_code == 0, result.output
    assert _rows(result) == [(10, "gold"), (11, "new")]


def test_a_file_table_given_twice_is_refused(tmp_path: Path) -> None:
    twice = json.dumps(
        {"batch": 0, "table": "customers", "row": {"customer_id": 1, "segment": "x"}}
    )
    result = _invoke(_setup(tmp_path, "parquet", CUSTOMERS, [twice, _order(0, 10, 1)]))
    assert result.exit_code == 2
    assert "given both by --table and in the trace's batch 0" in result.output


@pytest.mark.parametrize(
    ("line", "where", "message"),
    [
        ('{"customer_id": 1, "segment": 5}', ":1:31:", "column `segment`"),
        ('{"customer_id": 1, "segmnt": "x"}', ":1:20:", "unknown column(s) `segmnt` for table"),
        ('{"customer_id": 1}', ":1:1:", "missing column `segment` of table `customers`"),
        ("[1, 2]", ":1:1:", "expected an object of table `customers`'s columns"),
        ("{nope", ":1:2:", ""),
    ],
)
def test_a_bad_line_of_a_table_file_stops_the_run_at_its_line_and_column(
    tmp_path: Path, line: str, where: str, message: str
) -> None:
    args = _setup(tmp_path, "parquet", [CUSTOMERS[0], line], [_order(0, 10, 1)])
    result = _invoke(args)
    assert result.exit_code == 1, result.output  # as a trace's bad rows: before any batch
    assert "bad row(s) in table `customers`'s file" in result.output
    assert where.replace(":1:", ":2:", 1) in result.output
    assert message in result.output
    assert "--bad-rows skip" not in result.output  # a table's rows are all read


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("customers", "expected NAME=PATH"),
        ("=x.jsonl", "expected NAME=PATH"),
        ("custmers=x.jsonl", "the spec has no table `custmers` (tables: customers)"),
        ("orders=x.jsonl", "the spec has no table `orders`"),
    ],
)
def test_a_wrong_table_option_is_a_usage_error(tmp_path: Path, option: str, message: str) -> None:
    args = _setup(tmp_path, "parquet", CUSTOMERS, [_order(0, 10, 1)])
    result = _invoke([*args[:-1], option])
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_a_table_named_twice_is_a_usage_error(tmp_path: Path) -> None:
    args = _setup(tmp_path, "parquet", CUSTOMERS, [_order(0, 10, 1)])
    result = _invoke([*args, "--table", args[-1]])
    assert result.exit_code == 2
    assert "--table names `customers` twice" in result.output


def test_a_missing_table_file_is_a_usage_error(tmp_path: Path) -> None:
    args = _setup(tmp_path, "parquet", CUSTOMERS, [_order(0, 10, 1)])
    result = _invoke([*args[:-1], f"customers={tmp_path / 'none.jsonl'}"])
    assert result.exit_code == 2, result.output
    assert "cannot read table file" in result.output and "none.jsonl" in result.output


def test_the_output_may_not_overwrite_the_table_file(tmp_path: Path) -> None:
    args = _setup(tmp_path, "parquet", CUSTOMERS, [_order(0, 10, 1)])
    before = (tmp_path / "customers.jsonl").read_text()
    result = _invoke([*args, "--output", str(tmp_path / "customers.jsonl")])
    assert result.exit_code == 2, result.output
    assert "--table" in result.output
    assert (tmp_path / "customers.jsonl").read_text() == before
