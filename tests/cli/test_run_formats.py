"""`sjoin run` output (issue 16): trace batches beside Spark's batch ids (`--trace-batches`),
and `--format table` (aligned tables batch by batch), the default on a terminal only."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from sjoin.cli.main import main
from sjoin.cli.scaffold import scaffold

SJOIN = Path(sys.executable).with_name("sjoin")


@pytest.fixture
def demo(tmp_path: Path) -> tuple[Path, Path]:
    """The `sjoin init` scaffold: trace batch 1 runs as Spark batch 2, and the unshipped
    order 2 comes out null-padded in the no-data batch 3 that runs after it; trace batch 2
    runs as batch 4 (order 4 shipped), and order 3 comes out in the no-data batch 5."""
    spec, trace, _ = scaffold("shipped", tmp_path)
    return spec, trace


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_trace_batches_beside_batch_ids(demo: tuple[Path, Path], tmp_path: Path) -> None:
    spec, trace = demo
    progress = tmp_path / "progress.jsonl"
    code, out, err = cli(
        "run", str(spec), "--trace", str(trace), "--progress", str(progress), "--trace-batches"
    )
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [list(r) for r in rows] == [["batch", "trace_batch", "relation", "row"]] * 4
    assert [(r["batch"], r["trace_batch"], r["row"]["order_id"]) for r in rows] == [
        (0, 0, 1),
        (3, 1, 2),  # the no-data batch after trace batch 1's data batch (batch 2)
        (4, 2, 4),
        (5, 2, 3),
    ]
    steps = [json.loads(line) for line in progress.read_text().splitlines()]
    assert [(p["batch"], p["trace_batch"]) for p in steps] == [
        (0, 0),
        (1, 0),
        (2, 1),
        (3, 1),
        (4, 2),
        (5, 2),
    ]
    assert list(steps[0])[:3] == ["batch", "trace_batch", "watermark"]


def test_the_brief_formats_stay_as_they_are_by_default(
    demo: tuple[Path, Path], tmp_path: Path
) -> None:
    spec, trace = demo
    progress = tmp_path / "progress.jsonl"
    code, out, err = cli("run", str(spec), "--trace", str(trace), "--progress", str(progress))
    assert code == 0, err
    assert all(set(json.loads(line)) == {"batch", "relation", "row"} for line in out.splitlines())
    for line in progress.read_text().splitlines():
        assert set(json.loads(line)) == {"batch", "watermark", "operators"}


def test_trace_batch_values_are_the_traces_own(tmp_path: Path) -> None:
    """Trace batch values only group rows (10 and 20 here); the ids are Spark's."""
    spec, _, _ = scaffold("shipped", tmp_path)
    trace = tmp_path / "gaps.jsonl"
    trace.write_text(
        "".join(
            json.dumps({"batch": b, "stream": s, "row": r}) + "\n"
            for b, s, r in (
                (10, "orders", {"order_id": 1, "order_time": "2026-01-01T09:00:00Z", "amount": 1}),
                (
                    10,
                    "shipments",
                    {"order_id": 9, "ship_time": "2026-01-01T09:00:00Z", "carrier": "a"},
                ),
                (20, "orders", {"order_id": 2, "order_time": "2026-01-03T09:00:00Z", "amount": 2}),
                (
                    20,
                    "shipments",
                    {"order_id": 8, "ship_time": "2026-01-03T09:00:00Z", "carrier": "b"},
                ),
            )
        )
    )
    code, out, err = cli("run", str(spec), "--trace", str(trace), "--trace-batches")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["batch"], r["trace_batch"], r["row"]["order_id"]) for r in rows] == [(3, 20, 1)]


def test_json_lines_are_the_default_for_a_pipe(demo: tuple[Path, Path]) -> None:
    spec, trace = demo
    code, out, err = cli("run", str(spec), "--trace", str(trace))  # CliRunner: not a terminal
    assert code == 0, err
    assert [json.loads(line)["batch"] for line in out.splitlines()] == [0, 3, 4, 5]


def run_on_a_terminal(
    *args: str, env: dict[str, str] | None = None, stderr_too: bool = False
) -> str:
    """`sjoin ARGS` with stdout (and, with ``stderr_too``, stderr) on a pseudo-terminal;
    what it printed there."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [str(SJOIN), *args],
        stdout=follower,
        stderr=follower if stderr_too else subprocess.PIPE,
        env={**os.environ, "COLUMNS": "120", **(env or {})},
    )
    os.close(follower)
    chunks = []  # read while it runs: a full terminal buffer would block its writes
    try:
        while chunk := os.read(leader, 65536):
            chunks.append(chunk)
    except OSError:  # EIO: the terminal's other end is closed and everything was read
        pass
    os.close(leader)
    err = proc.stderr.read() if proc.stderr is not None else b""
    assert proc.wait(timeout=120) == 0, err.decode()
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_tables_on_a_terminal_share_no_line_with_a_progress_bar(demo: tuple[Path, Path]) -> None:
    """stdout and stderr on one terminal: no progress bar is drawn beside the tables (it
    shared the first table's title line; issue 23)."""
    spec, trace = demo
    long = trace.with_name("long.trace.jsonl")  # long enough for a bar to be drawn
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    with long.open("w", encoding="utf-8") as out:
        for copy in range(400):  # the demo again and again, each copy 8 days later
            for record in records:
                row = dict(record["row"])
                row["order_id"] += 100 * copy
                for name, value in row.items():
                    if name.endswith("_time"):
                        moved = datetime.fromisoformat(value) + timedelta(days=8 * copy)
                        row[name] = moved.isoformat().replace("+00:00", "Z")
                batch = 10 * copy + record["batch"]
                out.write(json.dumps({**record, "batch": batch, "row": row}) + "\n")
    shown = run_on_a_terminal(
        "run", str(spec), "--trace", str(long), stderr_too=True, env={"TERM": "xterm-256color"}
    )
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown)  # colors and cursor moves
    lines = shown.splitlines()
    assert lines[0].startswith("batch 0 · trace batch 0"), lines[:3]
    assert "━" not in shown and "batches" not in lines[0]


def test_tables_are_the_default_on_a_terminal(demo: tuple[Path, Path]) -> None:
    spec, trace = demo
    shown = run_on_a_terminal("run", str(spec), "--trace", str(trace), "--color", "never")
    assert "{" not in shown  # no JSON line
    lines = shown.splitlines()
    assert "batch 0 · trace batch 0 · watermark 1970-01-01T00:00:00Z" in lines
    assert "batch 3 · trace batch 1 (no-data batch) · watermark 2026-01-02T11:50:00Z" in lines
    header = next(line for line in lines if line.startswith("order_id"))
    assert header.split() == ["order_id", "order_time", "amount", "ship_time", "carrier"]
    row = next(line for line in lines if line.startswith("2 "))
    assert row.split() == ["2", "2026-01-01T09:30:00Z", "12.5", "NULL", "NULL"]
    # aligned: each value starts under its column's name
    assert row.index("NULL") == header.index("ship_time")
    # --output on a terminal is still JSON lines, and --format json is honoured there
    forced = run_on_a_terminal("run", str(spec), "--trace", str(trace), "--format", "json")
    assert [json.loads(line)["batch"] for line in forced.splitlines()] == [0, 3, 4, 5]


def test_format_table_on_a_pipe_and_with_output(demo: tuple[Path, Path], tmp_path: Path) -> None:
    spec, trace = demo
    code, out, err = cli("run", str(spec), "--trace", str(trace), "--format", "table")
    assert code == 0, err
    assert "shipped: 1 row" in out and "{" not in out
    code, out, err = cli(
        "run", str(spec), "--trace", str(trace), "--format", "table", "--output", "x.jsonl"
    )
    assert code == 2 and "--output writes JSON lines" in err


def test_tables_name_the_query_when_a_run_has_several(tmp_path: Path) -> None:
    """Each query numbers its own batches, so with two sinks the title names the query."""
    spec, trace, _ = scaffold("shipped", tmp_path)
    text = spec.read_text()
    twice = text.replace(
        "join shipped =",
        "join also = orders AS o2 INNER JOIN shipments AS s2 "
        "ON o2.order_id = s2.order_id AND s2.ship_time = o2.order_time\n\n"
        "join shipped =",
    )
    spec.write_text(twice + "sink also to console ()\n")
    code, out, err = cli("run", str(spec), "--trace", str(trace), "--format", "table")
    assert code == 0, err
    assert "query shipped · batch 0 · trace batch 0 · watermark 1970-01-01T00:00:00Z" in out


# names rich would read as markup (`[/]` closes nothing: MarkupError, which was E999), and
# values that would make a terminal act (ESC), break a row or reorder the text
MARKUP_SPEC = """stream `[/]` (`[bold]k` BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 second
stream b (`[bold]k` BIGINT, t TIMESTAMP) watermark t delay 1 second
join `[red]j[/red]` = `[/]` AS `[i]` INNER JOIN b AS y
    ON `[i]`.`[bold]k` = y.`[bold]k` AND `[i]`.t = y.t
    SELECT `[i]`.`[bold]k` AS `[/]`, `[i]`.v AS `[link=http://e]v`
sink `[red]j[/red]` to console ()
"""
VALUES = ["\x1b[2J\x1b]0;owned\x07", "a\nb", "\u202eevil", "[bold]x[/bold]"]


def test_tables_show_names_and_values_as_text(tmp_path: Path) -> None:
    spec = tmp_path / "m.sjoin"
    spec.write_text(MARKUP_SPEC)
    at = "2026-01-01T00:00:00Z"
    rows = []
    for k, value in enumerate(VALUES):
        rows.append({"batch": 0, "stream": "[/]", "row": {"[bold]k": k, "t": at, "v": value}})
        rows.append({"batch": 0, "stream": "b", "row": {"[bold]k": k, "t": at}})
    trace = tmp_path / "m.jsonl"
    trace.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for colour in ("never", "always"):
        code, out, err = cli(
            "run", str(spec), "--trace", str(trace), "--format", "table", "--color", colour
        )
        assert code == 0 and "E999" not in err, err
        plain = out if colour == "never" else out.replace("\x1b[1m", "").replace("\x1b[0m", "")
        assert "\x07" not in out and "\x1b[2J" not in out and "\u202e" not in out
        assert "[red]j[/red]: 4 rows" in plain
        header = next(line for line in plain.splitlines() if line.lstrip().startswith("[/]"))
        assert header.split() == ["[/]", "[link=http://e]v"]
        for shown in ("\\x1b[2J\\x1b]0;owned\\x07", "a\\nb", "\\u202eevil", "[bold]x[/bold]"):
            assert shown in plain, shown


def test_verify_progress_shows_a_query_name_as_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """verify's progress bar (a terminal) describes each query by name: rich markup there
    would fail on `[/]`."""
    import io

    from sjoin.cli.main import _verify_progress
    from sjoin.cli.printer import Printer

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    progress = type("P", (), {"query": "[/]", "index": 1, "queries": 1, "batches": 2})
    with _verify_progress(Printer("never")) as advance:
        for batch in (0, 1, 2):
            progress.batch = batch
            advance(progress)
    assert "query `[/]` (1 of 1)" in err.getvalue()


# item 13 of issue 35: at 80 columns a timestamp's `Z` went to the next line (rich folded the
# cell). A value is never broken: a table that does not fit shows its rows as records.
WIDE_VALUES = {
    "order_id": 7,
    "order_time": "2026-01-01T09:00:00Z",
    "amount": Decimal("12.50"),
    "carrier": None,
    "note": "x" * 150 + "end",
    "city": "東京都千代田区",
    "tags": ["a", "b"],
}


@pytest.mark.parametrize("width", [20, 40, 60, 79, 80, 100, 120, 200, 400])
@pytest.mark.parametrize("columns", [["order_id", "order_time", "amount"], list(WIDE_VALUES)])
def test_no_value_is_broken_across_lines_at_any_width(width: int, columns: list[str]) -> None:
    import io

    from sjoin.cli.table import TableWriter, cell
    from sjoin.runtime import BatchOutput

    row = {name: WIDE_VALUES[name] for name in columns}
    rows = [("j", row), ("j", {**row, "order_id": 8, "amount": Decimal("-0.5")})]
    progress = {"batch": 3, "operators": []}
    out = BatchOutput.of(3, "j", "2026-01-01T08:50:00Z", True, rows, progress, trace_batch=1)
    text = io.StringIO()
    TableWriter(text, color=False, width=width).show(out)
    lines = text.getvalue().splitlines()
    assert lines[0] == "batch 3 · trace batch 1 · watermark 2026-01-01T08:50:00Z"  # unwrapped
    assert lines[1] == "j: 2 rows"
    for _, values in rows:
        for name, value in values.items():
            whole = str(cell(value))
            assert any(whole in line for line in lines), (name, whole, lines)
    as_records = any(line.startswith("-[ row ") for line in lines)
    natural = len("2026-01-01T09:00:00Z") + len("order_id   ") + len("   amount")
    if width >= 400 or (width >= natural and len(columns) == 3):
        assert not as_records  # a table that fits is a table
    if as_records:
        assert [line for line in lines if line.startswith("-[ row ")] == [
            "-[ row 1 ]-",
            "-[ row 2 ]-",
        ]
        for line in lines[2:]:
            name = line.split()[0] if line.strip() else ""
            assert not line.strip() or line.startswith("-[ row ") or name in columns, line
    else:  # every line of the table fits the width, each row on one line
        assert all(len(line.rstrip()) <= width for line in lines[2:])
        assert sum(line.startswith("7 ") for line in lines) == 1
