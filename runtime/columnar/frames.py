"""Runtime values as polars columns, and JSON lines written from columns.

A relation's rows are a polars ``DataFrame`` whose columns are named ``c0, c1, ...`` in the
relation's column order (names from the spec never become frame names, so no user text can
clash with the operator's own columns, which start with ``_``).  Each SQL type has one dtype
holding exactly the reference runtime's value (``values.py``): TIMESTAMP, DATE and the integer
types are ``Int64`` (microseconds, days, the integer), DOUBLE and FLOAT ``Float64``, STRING
and BINARY ``String``, BOOLEAN ``Boolean``, DECIMAL(p, s) ``Decimal(38, s)`` (the values'
unscaled integers at the column's scale: ``decimals.py`` runs columnar only the operators
whose DECIMAL values are all at their column's scale, so none is rounded on the way in).
So ``DataFrame.rows()`` gives back the very tuples the reference runtime would hold, and a
value crosses between the engines without change.  Types without such a dtype have none:
``dtype_of`` says None and the operator that meets them runs on the reference engine.  A
window is a struct column only in a columnar join's frames and output (``windows.py``,
``batches.Frame.windows``); its lines are written from its two times.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any, cast

import polars as pl

from ...compiler.vocabulary.types import SqlType
from ..engine.batches import Batch, Frame
from ..engine.values import MAX_TIMESTAMP_US, MIN_TIMESTAMP_US, dumps, format_date, format_timestamp
from .support import COLUMNAR_KINDS

Row = tuple[Any, ...]

_DTYPES: dict[str, Any] = {
    "tinyint": pl.Int64,
    "smallint": pl.Int64,
    "int": pl.Int64,
    "bigint": pl.Int64,
    "timestamp": pl.Int64,
    "date": pl.Int64,
    "interval": pl.Int64,
    "double": pl.Float64,
    "float": pl.Float64,
    "string": pl.String,
    "binary": pl.String,
    "boolean": pl.Boolean,
}
assert set(_DTYPES) | {"decimal"} == COLUMNAR_KINDS, "support.COLUMNAR_KINDS: the kinds mapped"
# DATE values inside years 0001..9999: written by polars; others (arithmetic may leave the
# range) by values.format_date, which writes ISO 8601's expanded years as java.time does
_MIN_DAY, _MAX_DAY = -719_162, 2_932_896


Kind = str | SqlType  # a type, or its canonical name (enough for every type but DECIMAL)


def dtype_of(kind: Kind) -> Any:
    """The polars dtype of a SQL type (or of its canonical name), or None when it has none
    (a DECIMAL named without its scale has none)."""
    if isinstance(kind, SqlType):
        if kind.name == "decimal" and len(kind.params) == 2:
            return pl.Decimal(38, kind.params[1])
        kind = kind.name
    return _DTYPES.get(kind)


def decimal_dtype(scale: int) -> Any:
    """The dtype of DECIMAL values at ``scale``."""
    return pl.Decimal(38, scale)


def schema_of(kinds: Sequence[Kind]) -> dict[str, Any]:
    schema = {f"c{i}": dtype_of(k) for i, k in enumerate(kinds)}
    assert all(d is not None for d in schema.values()), kinds
    return schema


def to_frame(rows: Sequence[Row], kinds: Sequence[Kind]) -> pl.DataFrame:
    """Reference rows (tuples) -> a frame; exact for every kind ``dtype_of`` knows."""
    schema = schema_of(kinds)
    if not rows:
        return pl.DataFrame(schema=schema)
    columns = list(zip(*rows, strict=True))
    return pl.DataFrame(
        [
            pl.Series(name, columns[i], dtype=dtype, strict=True)
            for i, (name, dtype) in enumerate(schema.items())
        ]
    )


def to_rows(frame: pl.DataFrame) -> list[Row]:
    """A frame -> reference rows (tuples of plain Python values)."""
    return frame.rows()


def as_frame(batch: Batch, kinds: Sequence[Kind]) -> pl.DataFrame:
    """A relation's batch as a frame (``kinds``: its columns' types)."""
    if isinstance(batch, Frame):
        return cast(pl.DataFrame, batch.frame)
    return to_frame(batch.rows, kinds)


# ---------------------------------------------------------------------------- JSON lines


def _python_json(column: pl.Series, convert: Any) -> pl.Series:
    """The JSON text of each value, by ``values.dumps`` (the reference writer) in Python."""
    texts = [
        "null" if v is None else dumps(v if convert is None else convert(v))
        for v in column.to_list()
    ]
    return pl.Series(column.name, texts, dtype=pl.String)


def _json_expr(name: str, kind: str, column: pl.Series) -> pl.Expr | pl.Series:
    """An expression giving the JSON text of each value of ``column`` exactly as
    ``values.dumps`` writes the JSON-ready value (``json_converter``) of the reference
    runtime; values outside what the vectorised form covers take the Python writer."""
    c = pl.col(name)
    if kind in ("tinyint", "smallint", "int", "bigint", "interval"):
        return c.cast(pl.String).fill_null("null")
    if kind == "decimal" and isinstance(column.dtype, pl.Decimal):
        # polars writes a Decimal's digits at its scale, as format(value, "f") does
        return c.cast(pl.String).fill_null("null")
    if kind == "boolean":
        return (
            pl.when(c.is_null())
            .then(pl.lit("null"))
            .when(c)
            .then(pl.lit("true"))
            .otherwise(pl.lit("false"))
        )
    if kind in ("string", "binary"):
        if column.str.contains(r'[\x00-\x1f"\\]').any():
            return _python_json(column, None)
        return (pl.lit('"') + c + pl.lit('"')).fill_null("null")
    if kind == "timestamp":
        if ((column < MIN_TIMESTAMP_US) | (column > MAX_TIMESTAMP_US)).any():
            return _python_json(column, format_timestamp)
        return _each_distinct_once(column, _timestamp_text)
    if kind == "date":
        if ((column < _MIN_DAY) | (column > _MAX_DAY)).any():
            return _python_json(column, format_date)
        return _each_distinct_once(column, _date_text)
    if kind == "window":
        return _window_json(column)
    return _python_json(column, None)  # doubles: Python's repr, "NaN", "Infinity"


def _window_json(column: pl.Series) -> pl.Series:
    """A window column (structs ``{start, end}``, ``columnar/windows.py``) as the reference
    writes its value ``{"start": <timestamp>, "end": <timestamp>}``, each time as a
    TIMESTAMP column's."""
    c = pl.col(column.name)
    fields = pl.DataFrame([column]).select(
        *(pl.when(c.is_not_null()).then(c.struct.field(f)).alias(f) for f in ("start", "end")),
        c.is_null().alias("null"),
    )
    start, end = (
        fields.select(_as_expr(_json_expr(f, "timestamp", fields.get_column(f)))).to_series()
        for f in ("start", "end")
    )
    return (
        pl.DataFrame([start.alias("s"), end.alias("e"), fields.get_column("null")])
        .select(
            pl.when(pl.col("null"))
            .then(pl.lit("null"))
            .otherwise(
                pl.lit('{"start": ') + pl.col("s") + pl.lit(', "end": ') + pl.col("e") + pl.lit("}")
            )
        )
        .to_series()
        .alias(column.name)
    )


def _as_expr(text: pl.Expr | pl.Series) -> pl.Expr:
    return text if isinstance(text, pl.Expr) else pl.lit(text)


def _timestamp_text(c: pl.Expr) -> pl.Expr:
    micros = c - (c // 1_000_000) * 1_000_000
    second = c.cast(pl.Datetime("us")).dt.strftime('"%Y-%m-%dT%H:%M:%S')
    return (
        pl.when(micros == 0)
        .then(second + pl.lit('Z"'))
        .otherwise(second + pl.lit(".") + micros.cast(pl.String).str.zfill(6) + pl.lit('Z"'))
        .fill_null("null")
    )


def _date_text(c: pl.Expr) -> pl.Expr:
    return c.cast(pl.Int32).cast(pl.Date).dt.strftime('"%Y-%m-%d"').fill_null("null")


def _each_distinct_once(
    column: pl.Series, text: Callable[[pl.Expr], pl.Expr], step: int = 1
) -> pl.Expr | pl.Series:
    """``text`` of a time column, formatting each distinct value once when values repeat (a
    join's output repeats each stored row's times; event times are often whole milliseconds):
    formatting costs about six times the lookup that spreads the texts back.  When every
    value is the smallest one plus a multiple of ``step`` (a millisecond of a timestamp's
    microseconds) over a range of at most half as many steps as values, each step of the
    range is formatted and the texts are gathered by position, which costs a third of the
    lookup of each distinct value."""
    gathered = _on_grid(column, text, step)
    if gathered is not None:
        return gathered
    distinct = column.unique()
    if 2 * len(distinct) > len(column):
        return text(pl.col(column.name))
    texts = pl.DataFrame([distinct]).select(text(pl.col(column.name))).to_series()
    return column.replace_strict(distinct, texts, return_dtype=pl.String)


def _on_grid(column: pl.Series, text: Callable[[pl.Expr], pl.Expr], step: int) -> pl.Series | None:
    """``_each_distinct_once``'s texts gathered by position from those of each ``step`` of
    the column's range; None when its values are not on such a grid (or it is too wide)."""
    low, high = column.min(), column.max()
    if not (isinstance(low, int) and isinstance(high, int)):
        return None
    if (high - low) // step >= len(column) // 2:
        return None
    c = pl.col(column.name)
    if not pl.DataFrame([column]).select(((c - low) % step == 0).all()).item():
        return None
    grid = pl.int_range(0, (high - low) // step + 1, eager=True) * step + low
    texts = pl.DataFrame([grid.alias(column.name)]).select(text(c)).to_series()
    null = pl.DataFrame([pl.Series(column.name, [None], dtype=column.dtype)]).select(text(c))
    gathered = pl.lit(texts).gather((c - low) // step).fill_null(null.item())
    return pl.DataFrame([column]).select(gathered).to_series()


CHUNK_ROWS = 1_000_000  # lines per chunk of text: a batch's text is never all in memory


def json_chunks(
    frame: pl.DataFrame,
    batch: int,
    relation: str,
    columns: Sequence[tuple[str, str]],
    trace_batch: int | None = None,
) -> Iterator[bytes]:
    """The §7 output lines of ``frame`` (``{"batch": B, "relation": R, "row": {...}}``, with
    ``"trace_batch": T`` after the batch when given) as UTF-8, each line ending in LF, in
    chunks of up to ``CHUNK_ROWS`` lines: byte for byte what the reference writer makes of
    the same rows (``output_line``), built column by column with no Python object per row
    (``_write_chunk``)."""
    for opening, tokens in _token_frames(frame, batch, relation, columns, trace_batch):
        buffer = io.BytesIO()
        _write_chunk(opening, tokens, buffer)
        yield buffer.getvalue()


def write_json_lines(
    frame: pl.DataFrame,
    batch: int,
    relation: str,
    columns: Sequence[tuple[str, str]],
    trace_batch: int | None,
    into: IO[bytes],
) -> None:
    """``json_chunks``' bytes written straight into a binary file by polars' CSV writer: no
    bytes object of the chunk is made (growing it, copying it out and writing it cost about
    a third of the writer's time: issue 26)."""
    for opening, tokens in _token_frames(frame, batch, relation, columns, trace_batch):
        _write_chunk(opening, tokens, into)


def _token_frames(
    frame: pl.DataFrame,
    batch: int,
    relation: str,
    columns: Sequence[tuple[str, str]],
    trace_batch: int | None,
) -> Iterator[tuple[str, pl.DataFrame]]:
    """Each chunk's lines as the text that opens every line, up to its first value, and a
    frame of one token per column (``_tokens``)."""
    opening = f'{{"batch": {dumps(batch)}, '
    if trace_batch is not None:
        opening += f'"trace_batch": {dumps(trace_batch)}, '
    opening += f'"relation": {dumps(relation)}, "row": {{'
    if columns:
        opening += json.dumps(columns[0][0], ensure_ascii=False) + ": "
    for start in range(0, frame.height, CHUNK_ROWS):
        part = frame.slice(start, CHUNK_ROWS)
        yield opening, part.select(_tokens(part, columns))


def _tokens(frame: pl.DataFrame, columns: Sequence[tuple[str, str]]) -> list[pl.Expr]:
    """One token per column: the JSON text of its value, after the column's key for every
    column but the first (``' "name": value'``; the first one's key ends the line's opening).
    Written with ``,`` between them, the tokens are a line's row.  The first column, if it
    is an integer, is the column itself: the CSV writer writes its digits, and NULL as
    ``null``.  A time column's tokens are looked up per distinct value with the key in
    them, a string column's made with its quotes in one concatenation."""
    tokens = []  # (a frame of no columns has no rows: nothing to write)
    for i, (column, kind) in enumerate(columns):
        name = f"c{i}"
        key = "" if i == 0 else " " + json.dumps(column, ensure_ascii=False) + ": "
        tokens.append(_json_token(name, kind, frame.get_column(name), key).alias(f"t{i}"))
    return tokens


def _json_token(name: str, kind: str, column: pl.Series, key: str) -> pl.Expr:
    """``key`` followed by the JSON text of each value of ``column``, exactly as
    ``values.dumps`` writes the JSON-ready value (``json_converter``) of the reference
    runtime (``_json_expr``)."""
    c = pl.col(name)
    if kind in ("tinyint", "smallint", "int", "bigint", "interval") and not key:
        return c  # digits and null: the CSV writer's
    if kind == "boolean":
        return (
            pl.when(c.is_null())
            .then(pl.lit(key + "null"))
            .when(c)
            .then(pl.lit(key + "true"))
            .otherwise(pl.lit(key + "false"))
        )
    if kind in ("string", "binary") and not column.str.contains_any(_ESCAPED).any():
        return (pl.lit(key + '"') + c + pl.lit('"')).fill_null(key + "null")
    if kind == "timestamp" and not _outside(column, MIN_TIMESTAMP_US, MAX_TIMESTAMP_US):
        return _as_expr(
            _each_distinct_once(column, lambda t: pl.lit(key) + _timestamp_text(t), 1000)
        )
    if kind == "date" and not _outside(column, _MIN_DAY, _MAX_DAY):
        return _as_expr(_each_distinct_once(column, lambda t: pl.lit(key) + _date_text(t)))
    text = _as_expr(_json_expr(name, kind, column))
    return pl.lit(key) + text if key else text


_ESCAPED = ['"', "\\", *map(chr, range(32))]  # what JSON escapes in a string (values.dumps)


def _outside(column: pl.Series, low: int, high: int) -> bool:
    return bool(((column < low) | (column > high)).any())


def _write_chunk(opening: str, tokens: pl.DataFrame, into: IO[bytes]) -> None:
    """A chunk's lines written by polars' CSV writer, unquoted, ``,`` between the tokens of
    a row: each row's line ends with ``}}`` and LF, and, but for the last, the next line's
    opening, which the chunk starts with.  So a line costs no concatenation of its parts (a
    third of what building each line as one string cost, issue 26), and no line holds a raw
    LF or CR (JSON escapes both)."""
    into.write(opening.encode("utf-8"))
    into.flush()  # what the file holds in Python's buffer goes first
    last = tokens.height - 1
    _write_csv(tokens.head(last), into, "}}\n" + opening)
    _write_csv(tokens.tail(1), into, "}}\n")


def _write_csv(tokens: pl.DataFrame, into: IO[bytes], line_end: str) -> None:
    tokens.write_csv(
        into,
        include_header=False,
        separator=",",
        quote_style="never",
        null_value="null",
        line_terminator=line_end,
    )
