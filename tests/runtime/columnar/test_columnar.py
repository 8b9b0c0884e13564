"""The columnar engine's own parts: values cross between rows and frames unchanged, and the
output lines written from columns are byte for byte the reference writer's."""

from __future__ import annotations

import io
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sjoin.runtime import output_line
from sjoin.runtime.columnar import frames
from sjoin.runtime.columnar.frames import json_chunks, to_frame, to_rows, write_json_lines
from sjoin.runtime.engine.values import MAX_TIMESTAMP_US, MIN_TIMESTAMP_US, json_converter

KINDS = ["bigint", "int", "timestamp", "date", "string", "boolean", "double", "interval"]

_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "bigint": st.integers(-(2**63), 2**63 - 1),
    "int": st.integers(-(2**31), 2**31 - 1),
    "interval": st.integers(-(2**62), 2**62),
    "timestamp": st.one_of(
        st.integers(MIN_TIMESTAMP_US, MAX_TIMESTAMP_US),
        st.integers(-(2**62), 2**62),  # arithmetic may leave years 0001..9999
        st.sampled_from([0, -1, 1, 999_999, 1_000_000, 1_767_225_600_000_000]),
    ),
    "date": st.one_of(st.integers(-800_000, 3_000_000), st.sampled_from([0, -1, -719_162])),
    "string": st.text(
        st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12
    ),  # quotes, backslashes, control characters, non-ASCII
    "boolean": st.booleans(),
    "double": st.floats(allow_nan=True, allow_infinity=True),
}


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[str], list[str], list[tuple[Any, ...]]]:
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=5))  # no 0-column relation
    names = [
        draw(st.sampled_from(["a", "b", 'q"u', "é", "x\\y"])) + str(i) for i in range(len(kinds))
    ]
    rows = draw(
        st.lists(st.tuples(*[st.none() | _VALUES[k] for k in kinds]), min_size=1, max_size=20)
    )
    return kinds, names, rows


def _reference_lines(
    batch: int,
    relation: str,
    names: list[str],
    kinds: list[str],
    rows: list[tuple[Any, ...]],
    trace_batch: int | None = None,
) -> str:
    converters = [json_converter(k) for k in kinds]
    lines = []
    for row in rows:
        cells = [
            v if v is None or f is None else f(v) for v, f in zip(row, converters, strict=True)
        ]
        row_dict = dict(zip(names, cells, strict=True))
        if trace_batch is None:
            lines.append(output_line(batch, relation, row_dict))
        else:
            lines.append(output_line(batch, relation, row_dict, trace_batch=trace_batch))
    return "\n".join(lines)


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return all(
        (isinstance(x, float) and math.isnan(x) and isinstance(y, float) and math.isnan(y))
        or (x == y and type(x) is type(y))
        for x, y in zip(a, b, strict=True)
    )


@settings(max_examples=300, deadline=None)
@given(table=tables(), batch=st.integers(0, 10**6), relation=st.sampled_from(["j", 'ré"l']))
def test_lines_from_columns_are_the_reference_lines(
    table: tuple[list[str], list[str], list[tuple[Any, ...]]], batch: int, relation: str
) -> None:
    kinds, names, rows = table
    if len(set(names)) < len(names):
        return
    frame = to_frame(rows, kinds)
    assert all(_same(a, b) for a, b in zip(to_rows(frame), rows, strict=True))
    got = json_chunks(frame, batch, relation, list(zip(names, kinds, strict=True)))
    assert b"".join(got).decode() == _reference_lines(batch, relation, names, kinds, rows) + "\n"
    with_trace_batch = json_chunks(frame, batch, relation, list(zip(names, kinds, strict=True)), 7)
    assert b"".join(with_trace_batch).decode() == (
        _reference_lines(batch, relation, names, kinds, rows, trace_batch=7) + "\n"
    )
    # written straight into a file (`sjoin run --output`), after what it holds already
    for trace_batch in (None, 7):
        into = io.BytesIO(b"before\n")
        into.seek(0, io.SEEK_END)
        write_json_lines(
            frame, batch, relation, list(zip(names, kinds, strict=True)), trace_batch, into
        )
        assert into.getvalue().decode() == "before\n" + (
            _reference_lines(batch, relation, names, kinds, rows, trace_batch=trace_batch) + "\n"
        )


def test_long_outputs_are_written_in_chunks(monkeypatch: Any) -> None:
    """A batch's lines are made and written in chunks (a batch's text is never all in
    memory)."""
    monkeypatch.setattr(frames, "CHUNK_ROWS", 3)
    rows = [(i, f"v{i}") for i in range(7)]
    got = list(
        frames.json_chunks(
            to_frame(rows, ["bigint", "string"]), 1, "j", [("k", "bigint"), ("v", "string")]
        )
    )
    assert [chunk.count(b"\n") for chunk in got] == [3, 3, 1]
    assert b"".join(got).decode() == (
        _reference_lines(1, "j", ["k", "v"], ["bigint", "string"], rows) + "\n"
    )
    into = io.BytesIO()
    writes: list[int] = []
    write = into.write
    into.write = lambda data: writes.append(len(data)) or write(data)  # type: ignore[method-assign]
    frames.write_json_lines(
        to_frame(rows, ["bigint", "string"]), 1, "j", [("k", "bigint"), ("v", "string")], None, into
    )
    assert into.getvalue() == b"".join(got)
    assert max(writes) < len(into.getvalue())  # a chunk at a time, never the whole batch


@pytest.mark.parametrize("kind", ["timestamp", "date"])
def test_repeated_times_are_formatted_once_and_written_alike(kind: str) -> None:
    """Times that repeat (a join's output repeats each stored row's times) are formatted once
    per distinct value and spread back; NULLs and every distinct value land where they were."""
    values = (
        [0, -1, 1_767_225_600_000_000, 1_767_225_600_123_000, 999_999, None]
        if kind == "timestamp"
        else [0, -1, 20_000, -719_162, None]
    )
    rows = [(values[i * 7 % len(values)], i) for i in range(60)]
    got = json_chunks(to_frame(rows, [kind, "bigint"]), 2, "j", [("t", kind), ("i", "bigint")])
    assert b"".join(got).decode() == (
        _reference_lines(2, "j", ["t", "i"], [kind, "bigint"], rows) + "\n"
    )


T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z


@pytest.mark.parametrize(
    ("kind", "values"),
    [
        # whole milliseconds over a short range: each millisecond of it formatted, gathered
        ("timestamp", [T0, T0 + 1_000, None, T0 + 9_000, T0 + 5_000, T0]),
        ("timestamp", [-1_000, 0, None, 2_000]),  # before 1970: the floor of negatives
        ("timestamp", [T0, T0 + 1, T0 + 1_000, None]),  # a value off the millisecond grid
        ("date", [20_000, 20_001, None, 20_003, 20_010]),
        ("date", [-719_162, -719_161, 2_932_896]),  # a range wider than the values: a lookup
    ],
    ids=["ms-grid", "ms-grid-negative", "off-grid", "day-grid", "wide-range"],
)
@pytest.mark.parametrize("first", [True, False], ids=["first-column", "later-column"])
def test_times_on_a_grid_are_written_as_the_reference_writes_them(
    kind: str, values: list[int | None], first: bool
) -> None:
    """A time column whose values are a few steps apart (a join's output repeats a few
    seconds of whole-millisecond times) is formatted per step of its range and gathered by
    position; NULLs, negative times and values off the grid land as the reference writes
    them, as the first column (the key in the line's opening) or a later one."""
    rows = [(values[i * 5 % len(values)], i) for i in range(40)]
    step, text = (1000, frames._timestamp_text) if kind == "timestamp" else (1, frames._date_text)
    on_grid = frames._on_grid(to_frame(rows, [kind, "bigint"]).get_column("c0"), text, step)
    assert (on_grid is not None) == (values[2] is None)  # (the grid cases hold a NULL third)
    kinds = [kind, "bigint"]
    names = ["t", "i"]
    if not first:
        rows = [(i, t) for t, i in rows]
        kinds, names = kinds[::-1], names[::-1]
    got = json_chunks(to_frame(rows, kinds), 4, "j", list(zip(names, kinds, strict=True)))
    assert b"".join(got).decode() == _reference_lines(4, "j", names, kinds, rows) + "\n"


@pytest.mark.parametrize("rows", [1, 2, 7], ids=["one", "two", "seven"])
def test_each_line_of_a_chunk_opens_and_closes_once(rows: int, monkeypatch: Any) -> None:
    """A chunk's first line opens with the chunk and each line's end opens the next one: a
    chunk of one row, and chunks cut anywhere, give the reference's lines and nothing more."""
    monkeypatch.setattr(frames, "CHUNK_ROWS", 3)
    table = [(i, None if i % 3 else f"v{i}", i % 2 == 0) for i in range(rows)]
    kinds = ["bigint", "string", "boolean"]
    names = ["k", "v", "b"]
    frame = to_frame(table, kinds)
    want = _reference_lines(9, "j", names, kinds, table) + "\n"
    got = b"".join(json_chunks(frame, 9, "j", list(zip(names, kinds, strict=True))))
    assert got.decode() == want
    into = io.BytesIO()
    write_json_lines(frame, 9, "j", list(zip(names, kinds, strict=True)), None, into)
    assert into.getvalue().decode() == want
