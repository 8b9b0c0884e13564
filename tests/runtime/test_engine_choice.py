"""`--engine auto` (issue 23, item 6): the engine is chosen from what the costs depend on,
the rows per batch and the number of batches (``runtime/choice.py``), never from the bytes.

* the rule at its boundaries, for every combination of the facts it reads;
* the two reported traces (120 small batches, 2.4 MB; 600 batches, 30 MB), rebuilt with the
  same rows per batch, now run on the reference engine, and a trace of large batches on the
  columnar one, whatever its size in bytes;
* the scan that finds the facts: exact batch counts over every layout a trace may have, and
  no error on bad input of any kind (the readers report it when the run reads the trace).
"""

from __future__ import annotations

import json
import math
import os
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from sjoin.cli.main import main
from sjoin.runtime import choice
from sjoin.runtime.choice import (
    COLUMNAR_FIXED_ROWS,
    COLUMNAR_ROWS_PER_BATCH,
    ROW_BY_ROW_FACTOR,
    PlanFacts,
    TraceShape,
    choose_engine,
    decide,
    plan_facts,
    rows_needed,
    scan_trace,
)

from .harness import plan_of

# the benchmark workload's join (benchmarks/workload.py)
SPEC = """\
spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
  SELECT L.k AS k, L.t AS lt, R.t AS rt, L.v AS lv, R.v AS rv
"""
PLAN = plan_of(SPEC)


def line(batch: int, i: int, pad: str = "") -> str:
    stream = "lr"[i % 2]
    second, milli = divmod(batch * 10_000 + i * 7 % 10_000, 1000)
    minute, second = divmod(second, 60)
    hour, minute = divmod(minute, 60)
    t = f"2026-01-01T{hour % 24:02d}:{minute:02d}:{second:02d}.{milli:03d}Z"
    row = f'{{"k": {i % 5000 + 1}, "t": "{t}", "v": "{stream}{batch}-{i}{pad}"}}'
    return f'{{"batch": {batch}, "stream": "{stream}", "row": {row}}}\n'


def trace_of(path: Path, batches: int, rows: int, pad: str = "") -> Path:
    """``batches`` batches of ``rows`` canonical rows each, both streams."""
    with path.open("w") as out:
        for batch in range(batches):
            out.writelines(line(batch, i, pad) for i in range(rows))
    return path


# ------------------------------------------------------------------------------- the rule

FACTS = [
    (columnar, operators, row_by_row)
    for columnar, operators in ((1, 1), (1, 3), (2, 2), (3, 3))
    for row_by_row in (None, "column `s.x` is DOUBLE")
]


@pytest.mark.parametrize("batches", [1, 2, 8, 120, 600, 10_000, 1_000_000])
@pytest.mark.parametrize(("columnar", "operators", "row_by_row"), FACTS)
def test_the_rule_at_its_boundaries(
    batches: int, columnar: int, operators: int, row_by_row: str | None
) -> None:
    """The columnar engine from exactly the rows the cost model needs, the reference one a
    row below; and the reason states the facts and the threshold."""
    facts = PlanFacts(columnar, operators, row_by_row, None)
    needed = rows_needed(batches, columnar, row_by_row is None)
    assert needed == (COLUMNAR_FIXED_ROWS + COLUMNAR_ROWS_PER_BATCH * columnar * batches) * (
        1 if row_by_row is None else ROW_BY_ROW_FACTOR
    )
    threshold = math.ceil(needed / batches)
    engine, reason = decide(TraceShape(threshold * batches, batches, 0), facts)
    assert engine == "columnar", reason
    below, reason_below = decide(TraceShape(threshold * batches - 1, batches, 0), facts)
    assert below == "reference", reason_below
    plural = "batch" if batches == 1 else "batches"
    assert reason.startswith(f"{batches:,} {plural} of {threshold:,} rows on average (>= ")
    assert reason_below.startswith(
        f"{batches:,} {plural} of {threshold - 1:,} rows on average (< {threshold:,} rows/batch"
    )
    ops = f"{columnar} columnar operator{'s' if columnar > 1 else ''}"
    ops += f" of {operators}" if columnar < operators else ""
    read = "read in bulk" if row_by_row is None else f"read row by row: {row_by_row}"
    assert reason.endswith(f" rows/batch for {ops}, {read})")
    assert reason_below.endswith(f" rows/batch for {ops}, {read})")


def test_the_break_even_falls_with_batches_and_rises_with_costs() -> None:
    """More batches share the fixed cost (the rows per batch needed fall towards
    COLUMNAR_ROWS_PER_BATCH per operator); more columnar operators, or a trace read row by
    row, need larger batches."""
    per_batch = [rows_needed(b, 1, True) / b for b in (1, 10, 100, 1000, 10**6)]
    assert per_batch == sorted(per_batch, reverse=True)
    assert per_batch[-1] == pytest.approx(COLUMNAR_ROWS_PER_BATCH, rel=0.01)
    assert rows_needed(100, 2, True) > rows_needed(100, 1, True)
    assert rows_needed(100, 1, False) > rows_needed(100, 1, True)
    assert COLUMNAR_FIXED_ROWS > 0 and COLUMNAR_ROWS_PER_BATCH > 0 and ROW_BY_ROW_FACTOR > 1


# ------------------------------------------------------------------------- the reports


@pytest.mark.parametrize(
    ("batches", "rows", "reported"),
    [
        (120, 180, "2.4 MB, 120 batches: 3.2-3.9 s columnar, 1.2-1.4 s reference"),
        # 600 batches of 500 rows in 30 MB: a tenth of its batches, the same batches
        (60, 500, "30 MB, 600 batches: 12.8 s columnar, 8.4 s reference"),
    ],
)
def test_the_reported_traces_run_on_the_reference_engine(
    tmp_path: Path, batches: int, rows: int, reported: str
) -> None:
    trace = trace_of(tmp_path / "t.jsonl", batches, rows)
    assert trace.stat().st_size >= 512 * 1024  # the old rule ran them columnar
    engine, reason = choose_engine(PLAN, trace)
    assert (engine, reason.split(" (")[0]) == (
        "reference",
        f"{batches} batches of {rows} rows on average",
    ), reported
    # and the whole 30 MB trace (600 batches), on the rule
    assert decide(TraceShape(300_000, 600, 0), plan_facts(PLAN))[0] == "reference"
    # a few lines read per batch (bisection), not every line
    shape = scan_trace(trace)
    assert shape is not None and shape.probes <= 4 * math.log2(rows) * batches < rows * batches


def test_large_batches_run_columnar_whatever_their_bytes(tmp_path: Path) -> None:
    """The rows per batch decide, not the bytes: short lines in large batches run columnar,
    the same number of bytes in small batches of long lines on the reference engine."""
    batches = 4
    rows = math.ceil(rows_needed(batches, 1, True) / batches) + 10
    large = trace_of(tmp_path / "large.jsonl", batches, rows)
    engine, reason = choose_engine(PLAN, large)
    assert engine == "columnar", reason
    assert reason.startswith(f"4 batches of {rows:,} rows on average (>= ")
    size = large.stat().st_size
    long_lines = trace_of(tmp_path / "long.jsonl", 400, 5, pad="x" * (size // 2000))
    assert long_lines.stat().st_size >= size
    assert choose_engine(PLAN, long_lines) == (
        "reference",
        f"400 batches of 5 rows on average (< {math.ceil(rows_needed(400, 1, True) / 400):,} "
        "rows/batch for 1 columnar operator, read in bulk)",
    )


def test_verbose_states_the_facts(tmp_path: Path) -> None:
    spec = tmp_path / "s.sjoin"
    spec.write_text(SPEC)
    trace = trace_of(tmp_path / "t.jsonl", 12, 30)
    result = CliRunner().invoke(
        main, ["run", str(spec), "--trace", str(trace), "--verbose", "--output", os.devnull]
    )
    assert result.exit_code == 0, result.stderr
    threshold = math.ceil(rows_needed(12, 1, True) / 12)
    assert (
        "sjoin run: engine: reference (row at a time): 12 batches of 30 rows on average "
        f"(< {threshold:,} rows/batch for 1 columnar operator, read in bulk)\n"
    ) in result.stderr


# ---------------------------------------------------------------------- what is read how

DOUBLE_SPEC = SPEC.replace(
    "v STRING) watermark t delay 10 seconds\njoin", "v DOUBLE) watermark t delay 10 seconds\njoin"
)
# a computed grouping key: the aggregate runs on the reference operator
MIXED_SPEC = SPEC + (
    "aggregate a = j AS x GROUP BY x.k + 1\n  SELECT x.k + 1 AS kk, count(*) AS n\n"
    "  OUTPUT MODE update\n"
)


def test_what_the_columnar_engine_reads_row_by_row(tmp_path: Path) -> None:
    """A column without a canonical form, a line not in it (found by the lines the scan
    reads), and a checkpoint each make the columnar engine read the trace row by row, which
    takes ROW_BY_ROW_FACTOR times the rows to pay off; the reason says which."""
    trace = trace_of(tmp_path / "t.jsonl", 3, 10)
    assert choose_engine(PLAN, trace)[1].endswith("read in bulk)")
    assert choose_engine(PLAN, trace, checkpoint=True)[1].endswith(
        "read row by row: a checkpoint keeps each batch's digest)"
    )
    double = plan_of(DOUBLE_SPEC)
    assert plan_facts(double).row_by_row == "column `r.v` is DOUBLE"
    assert plan_facts(double).pattern is None
    lines = trace.read_text().splitlines(keepends=True)
    # the last line (the scan always reads it) with its fields in another order
    record = json.loads(lines[-1])
    lines[-1] = json.dumps({"stream": record["stream"], "row": record["row"], "batch": 2}) + "\n"
    odd = tmp_path / "odd.jsonl"
    odd.write_text("".join(lines))
    shape = scan_trace(odd, canonical=plan_facts(PLAN).pattern)
    assert shape is not None and (shape.batches, shape.not_canonical) == (3, 30)
    reason = decide(shape, plan_facts(PLAN))[1]
    assert reason.endswith("read row by row: line 30 is not in the canonical form)")
    # every line compact: the first one read is line 1
    every = tmp_path / "every.jsonl"
    every.write_text(
        "".join(json.dumps(json.loads(x), separators=(",", ":")) + "\n" for x in lines)
    )
    shape = scan_trace(every, canonical=plan_facts(PLAN).pattern)
    assert shape is not None and (shape.batches, shape.not_canonical) == (3, 1)


def test_a_mixed_plan_counts_its_columnar_operators() -> None:
    facts = plan_facts(plan_of(MIXED_SPEC))
    assert (facts.columnar, facts.operators) == (1, 2)
    assert plan_facts(PLAN).columnar == plan_facts(PLAN).operators == 1
    engine, reason = decide(TraceShape(10, 1, 0), facts)
    assert engine == "reference"
    assert "rows/batch for 1 columnar operator of 2, read in bulk)" in reason


# ------------------------------------------------------------------------------ the scan


def layout(seed: int) -> tuple[list[bytes], int]:
    """A trace of random batches (sizes 1..40, numbers ascending with gaps, some negative),
    its records in several forms, with blank and bad lines between them; and its number of
    batches."""
    rng = random.Random(seed)
    out: list[bytes] = []
    number = rng.randrange(-50, 5)
    batches = rng.randrange(1, 60)
    for _ in range(batches):
        for i in range(rng.randrange(1, 40)):
            # the first line of a batch holds its number (a batch of bad lines alone is
            # no batch to anyone)
            form = rng.randrange(6) if i else rng.choice([0, 1, 2, 3, 5])
            record = {"batch": number, "stream": "l", "row": {"k": i, "batch": number + 7}}
            if form == 0:
                text = json.dumps(record)
            elif form == 1:  # the batch last, a column called batch before it
                text = json.dumps({"row": record["row"], "stream": "l", "batch": number})
            elif form == 2:
                text = json.dumps(record, separators=(",", ":"))
            elif form == 3:
                text = " " + json.dumps(record, indent=None) + "\t"
            elif form == 4:
                text = rng.choice(
                    [
                        "",
                        "   ",
                        "not json",
                        '{"batch": "3"}',
                        '{"batch": 1.5}',
                        '{"batch": true}',
                        "[1, 2]",
                        '{"stream": "l"}',
                        "\x00\x01",
                    ]
                )
            else:
                text = json.dumps(record, ensure_ascii=False) + "é"  # bad JSON, good head
            out.append(text.encode())
        number += rng.randrange(1, 4)
    return out, batches


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("ending", ["\n", "\r\n", "no final newline", "BOM"])
def test_the_scan_counts_lines_and_batches_exactly(tmp_path: Path, seed: int, ending: str) -> None:
    lines, batches = layout(seed)
    sep = b"\r\n" if ending == "\r\n" else b"\n"
    data = sep.join(lines) + (b"" if ending == "no final newline" else sep)
    if ending == "BOM":
        data = b"\xef\xbb\xbf" + data
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    shape = scan_trace(path)
    assert shape is not None
    # a last line left empty by "no final newline" is no line
    assert shape.lines == len(lines) - (ending == "no final newline" and not lines[-1])
    assert (shape.batches, shape.at_least) == (batches, False)


def test_batches_out_of_order_only_make_the_count_low(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(line(b, i) for b in (0, 1, 2, 1, 0, 2) for i in range(5)))
    shape = scan_trace(path)
    assert shape is not None and shape.lines == 30 and 1 <= shape.batches <= 6


def test_the_scan_stops_counting_where_the_verdict_is_certain(tmp_path: Path) -> None:
    """Many batches of one row: the scan stops once the reference engine is certain (and
    it has read ``_PROBES`` lines), and says "at least"."""
    path = tmp_path / "t.jsonl"
    batches = 20_000
    path.write_text("".join(line(b, 0) for b in range(batches)))
    shape = scan_trace(path, enough=lambda lines: 2)
    assert shape is not None and shape.at_least
    assert 2 <= shape.batches < batches and shape.probes < 3 * choice._PROBES
    engine, reason = decide(shape, plan_facts(PLAN))
    assert engine == "reference"
    assert reason.startswith(f"at least {shape.batches:,} batches of at most ")
    # counted to the end, the count is exact
    full = scan_trace(path)
    assert full is not None and (full.batches, full.at_least) == (batches, False)


HOSTILE: dict[str, bytes] = {
    "empty": b"",
    "blank lines": b"\n\n  \n\t\n",
    "one newline": b"\n",
    "no newline at all": b'{"batch": 1, "stream": "l", "row": {}}',
    "garbage": bytes(random.Random(3).randrange(256) for _ in range(200_000)),
    "invalid UTF-8": b'{"batch": 0, "stream": "\xff\xfe", "row": {}}\n' * 10,
    "UTF-16": '{"batch": 0, "stream": "l", "row": {}}\n'.encode("utf-16") * 10,
    "NUL bytes": b"\x00" * 10_000,
    "a long line": b'{"stream": "l", "row": {"v": "' + b"x" * 3_000_000 + b'"}, "batch": 4}\n',
    "a long line without a batch": b"[" * 2_000_000 + b"\n",
    "deep nesting": b'{"row": ' + b"[" * 100_000 + b"]" * 100_000 + b', "batch": 1}\n',
    "a huge batch number": b'{"batch": 1' + b"0" * 5000 + b', "stream": "l", "row": {}}\n',
    "a batch number of 20 digits": b'{"batch": 12345678901234567890, "stream": "l"}\n',
    "a float batch": b'{"batch": 1e400, "stream": "l"}\n{"batch": NaN}\n',
    "a string batch": b'{"batch": "0"}\n{"batch": "1"}\n',
    "a negative zero": b'{"batch": -0}\n{"batch": 0}\n',
    "a list": b"[]\n[1]\n",
    "only bad lines, many": b"nope\n" * 100_000,
    "CR only": b'{"batch": 0}\r{"batch": 1}\r',
    "a lone BOM": b"\xef\xbb\xbf",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_the_scan_never_fails_on_bad_input(tmp_path: Path, name: str) -> None:
    """Bad input just counts as lines; `sjoin run` then reports it through the reader, with
    its line, never an internal error."""
    data = HOSTILE[name]
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    shape = scan_trace(path, canonical=plan_facts(PLAN).pattern)
    assert shape is not None
    assert shape.lines == data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    assert shape.batches <= max(shape.lines, 1)
    engine, reason = choose_engine(PLAN, path)
    assert engine == "reference" and reason
    spec = tmp_path / "s.sjoin"
    spec.write_text(SPEC)
    result = CliRunner().invoke(
        main, ["run", str(spec), "--trace", str(path), "--output", os.devnull]
    )
    assert result.exit_code in (0, 1), result.stderr
    assert "E999" not in result.stderr and "internal error" not in result.stderr
    if result.exit_code == 1:
        assert f"bad row(s) in trace {path}" in result.stderr


def test_a_path_that_is_not_a_regular_file_is_not_read(tmp_path: Path) -> None:
    """A pipe would block the scan (and be consumed by it): not opened; a missing file is
    the reader's to report."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert scan_trace(fifo) is None
    assert choose_engine(PLAN, fifo) == (
        "reference",
        "the trace is not a regular file that can be scanned",
    )
    assert scan_trace(tmp_path / "missing.jsonl") is None


# --------------------------------------------------------- the measured traces (issue 26)

# The facts `auto` reads for each measured shape: (columnar operators, operators, why the
# trace is read row by row or None)
SHAPE_FACTS: dict[str, tuple[int, int, str | None]] = {
    "uniform": (1, 1, None),
    "skewed": (1, 1, None),
    "outer": (1, 1, None),
    # the aggregate on the reference engine; DECIMAL amounts have no bulk form
    "window_agg": (1, 2, "column `l.amount` is DECIMAL(12, 2)"),
    "bench": (1, 1, None),
    "ad_attribution": (1, 1, None),
    "checkout_funnel": (3, 3, "column `purchases.amount` is DOUBLE"),
}
# (shape, rows per batch, data batches, CPU s on the reference engine, on the columnar one):
# medians of 3 `sjoin run` processes of each engine, interleaved (benchmarks/engine_crossover.py
# --metric cpu; docs/benchmarks.md, "Which engine auto runs"): issue 26's four workloads
# (uniform, skewed, outer, window_agg), the traces of many small batches it reports (180 x
# 120 and 500 x 600 on the benchmark join), and issue 23's shapes around the crossover
MEASURED = [
    ("uniform", 10, 20, 0.44, 0.84),
    ("uniform", 100, 20, 0.46, 0.86),
    ("uniform", 300, 20, 0.48, 0.97),
    ("uniform", 1000, 20, 0.58, 1.06),
    ("uniform", 2000, 20, 0.77, 1.01),
    ("uniform", 5000, 20, 1.44, 1.09),
    ("uniform", 20000, 20, 6.88, 2.19),
    ("uniform", 10, 120, 0.44, 1.46),
    ("uniform", 100, 120, 0.58, 1.73),
    ("uniform", 300, 120, 0.61, 1.87),
    ("uniform", 1000, 120, 1.27, 2.24),
    ("uniform", 2000, 120, 2.44, 2.64),
    ("uniform", 10, 600, 0.52, 5.45),
    ("uniform", 100, 600, 0.91, 5.74),
    ("uniform", 300, 600, 1.70, 7.29),
    ("skewed", 10, 20, 0.41, 0.81),
    ("skewed", 100, 20, 0.45, 0.87),
    ("skewed", 300, 20, 0.49, 0.86),
    ("skewed", 1000, 20, 0.61, 1.07),
    ("skewed", 2000, 20, 0.75, 0.98),
    ("skewed", 5000, 20, 1.26, 1.02),
    ("skewed", 20000, 20, 5.89, 2.15),
    ("skewed", 10, 120, 0.45, 1.48),
    ("skewed", 100, 120, 0.52, 1.71),
    ("skewed", 300, 120, 0.68, 2.07),
    ("skewed", 1000, 120, 1.36, 1.98),
    ("skewed", 2000, 120, 2.23, 2.50),
    ("skewed", 10, 600, 0.59, 4.92),
    ("skewed", 100, 600, 0.83, 5.65),
    ("skewed", 300, 600, 1.68, 6.58),
    ("outer", 100, 20, 0.44, 0.89),
    ("outer", 300, 20, 0.47, 0.88),
    ("outer", 1000, 20, 0.66, 0.88),
    ("outer", 2000, 20, 0.87, 1.20),
    ("outer", 5000, 20, 1.69, 1.28),
    ("outer", 20000, 20, 5.03, 1.71),
    ("outer", 100, 120, 0.59, 2.37),
    ("outer", 300, 120, 0.82, 2.48),
    ("outer", 1000, 120, 1.65, 2.49),
    ("outer", 2000, 120, 2.93, 2.81),
    ("outer", 100, 600, 1.15, 8.37),
    ("outer", 300, 600, 2.37, 8.86),
    ("window_agg", 10, 20, 0.43, 0.93),
    ("window_agg", 100, 20, 0.41, 0.85),
    ("window_agg", 300, 20, 0.47, 0.98),
    ("window_agg", 1000, 20, 0.62, 1.09),
    ("window_agg", 2000, 20, 0.80, 1.27),
    ("window_agg", 5000, 20, 1.58, 1.86),
    ("window_agg", 20000, 20, 6.51, 6.49),
    ("window_agg", 10, 120, 0.43, 1.62),
    ("window_agg", 100, 120, 0.52, 1.67),
    ("window_agg", 300, 120, 0.70, 2.00),
    ("window_agg", 1000, 120, 1.45, 2.38),
    ("window_agg", 2000, 120, 2.92, 3.72),
    ("window_agg", 10, 600, 0.56, 5.13),
    ("window_agg", 100, 600, 1.00, 6.14),
    ("window_agg", 300, 600, 1.97, 6.84),
    ("bench", 180, 120, 0.53, 1.57),
    ("bench", 500, 600, 2.21, 6.29),
    ("bench", 1000, 20, 0.53, 0.79),
    ("bench", 4000, 20, 0.99, 0.88),
    ("bench", 16000, 8, 1.80, 0.88),
    ("bench", 1000, 120, 1.17, 1.66),
    ("bench", 2000, 120, 2.12, 2.25),
    ("ad_attribution", 180, 120, 0.75, 2.13),
    ("ad_attribution", 500, 600, 4.96, 7.94),
    ("ad_attribution", 1000, 20, 0.63, 0.94),
    ("ad_attribution", 4000, 20, 1.23, 1.03),
    ("ad_attribution", 16000, 8, 1.66, 1.00),
    ("ad_attribution", 1000, 120, 2.06, 2.37),
    ("ad_attribution", 2000, 120, 3.39, 2.68),
    ("checkout_funnel", 180, 120, 0.72, 3.09),
    ("checkout_funnel", 500, 600, 4.34, 14.03),
    ("checkout_funnel", 1000, 20, 0.56, 1.02),
    ("checkout_funnel", 4000, 20, 1.12, 1.35),
    ("checkout_funnel", 16000, 8, 1.63, 1.35),
    ("checkout_funnel", 1000, 120, 1.78, 3.60),
    ("checkout_funnel", 2000, 120, 3.10, 4.48),
    # the 30 MB shape's batch count with larger batches (--repeat 2)
    ("uniform", 1000, 600, 4.03, 6.61),
    ("uniform", 2000, 600, 9.02, 8.98),
    ("outer", 1000, 600, 6.99, 9.42),
    ("outer", 2000, 600, 11.42, 9.61),
]
# engines within this ratio are at their crossover: which is faster there depends on what
# no rule reads before the run (the join's fan-out: at 2,000 rows x 120 batches the inner
# joins run faster on the reference engine, the outer ones on the columnar engine)
CROSSOVER = 1.15


def _measured_choice(shape: str, rows: int, batches: int) -> str:
    columnar, operators, row_by_row = SHAPE_FACTS[shape]
    facts = PlanFacts(columnar, operators, row_by_row, None)
    return decide(TraceShape(rows * batches, batches, 0), facts)[0]


@pytest.mark.parametrize(
    ("shape", "rows", "batches", "reference", "columnar"),
    [m for m in MEASURED if max(m[3], m[4]) / min(m[3], m[4]) > CROSSOVER],
    ids=lambda x: str(x),
)
def test_auto_picks_the_faster_engine_on_the_measured_traces(
    shape: str, rows: int, batches: int, reference: float, columnar: float
) -> None:
    faster = "reference" if reference < columnar else "columnar"
    assert _measured_choice(shape, rows, batches) == faster


def test_at_the_crossover_auto_costs_little() -> None:
    """Over every measured trace, the crossover's included: auto's engine costs at most
    1.15x the faster one's time, and all its picks together 1% more than the faster ones."""
    picked = best = 0.0
    for shape, rows, batches, reference, columnar in MEASURED:
        times = {"reference": reference, "columnar": columnar}
        engine = _measured_choice(shape, rows, batches)
        assert times[engine] <= CROSSOVER * min(times.values()), (shape, rows, batches)
        picked += times[engine]
        best += min(times.values())
    assert picked <= 1.01 * best
    assert len(MEASURED) >= 70
