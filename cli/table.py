"""`sjoin run --format table`: the output rows batch by batch as aligned tables, the way
Flink's SQL client (tableau mode) and ksqlDB show a query's results on a terminal.

Each executed batch that emits rows gets a title line (the Spark batch id, the trace batch
whose step ran it, whether it is a no-data batch, the watermark, the rows dropped as late)
and one table per relation with rows; a batch without rows prints nothing unless it dropped
late rows (its title alone).  ``NULL`` stands for a null, as Spark's
``show()`` prints it.  No value is ever broken across lines: a table that does not fit the
terminal's width shows its rows as records instead (one ``column  value`` line each, as psql's
``\\x auto`` does), and no line is wrapped here (a line longer than the terminal is the
terminal's to wrap).  JSON lines stay the format for pipes and files (the language brief,
§7): ``sjoin run`` picks the table only when stdout is a terminal and no ``--output`` is
given, or when asked with ``--format table``.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from ..runtime import BatchOutput
from ..runtime.engine.values import dumps


def shown(text: str) -> Text:
    """Text from a spec or a trace as the terminal shows it: never rich markup (a name such as
    ``[/]`` or ``[red]j`` is text), and every unprintable character (ESC, which would make
    the terminal act, a line break, a bidi override) as its escape (``\\x1b``), so that what
    a cell holds is what it shows, on one line."""
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return Text(text)


def cell(value: Any) -> Text:
    """One value as the table shows it: NULL for null, a string as it is, anything else as
    `run` writes it in a JSON line (``values.dumps``: a DECIMAL's exact digits, a struct or an
    array as JSON), a non-finite double without the JSON string's quotes (``NaN``)."""
    if value is None:
        return Text("NULL", style="dim")
    if isinstance(value, str):
        return shown(value)
    text = dumps(value)
    return shown(json.loads(text) if text.startswith('"') else text)


def title(out: BatchOutput) -> Text:
    """``batch 2 · trace batch 1 (no-data batch) · watermark 2026-01-01T00:00:00Z``, after
    ``query NAME · `` when the run has several queries (each numbers its own batches), and
    ``· 2 late rows dropped (j 2)`` when operators dropped rows by the watermark (their
    ``numRowsDroppedByWatermark``; a batch that only dropped rows still gets its title)."""
    parts = [f"query {out.query}"] if "query" in out.progress else []
    parts.append(f"batch {out.batch}")
    if out.trace_batch is not None:
        parts.append(f"trace batch {out.trace_batch}" + ("" if out.data else " (no-data batch)"))
    if out.watermark is not None:
        parts.append(f"watermark {out.watermark}")
    late = [
        (op["relation"], op["numRowsDroppedByWatermark"])
        for op in out.progress.get("operators", [])
        if op.get("numRowsDroppedByWatermark")
    ]
    if late:
        total = sum(n for _, n in late)
        each = ", ".join(f"{relation} {n}" for relation, n in late)
        parts.append(f"{total} late row{'s' if total != 1 else ''} dropped ({each})")
    title = shown(" · ".join(parts))
    title.stylize("bold")
    return title


class TableWriter:
    """Shows each batch's rows as tables on ``file`` (``show`` is ``run_to_files``'s
    ``show_rows``).  ``color``: auto (a terminal, unless NO_COLOR), always or never."""

    def __init__(self, file: TextIO, color: bool, width: int | None = None) -> None:
        self.console = Console(
            file=file,
            force_terminal=color,
            no_color=not color,
            highlight=False,
            width=width,
        )

    def show(self, out: BatchOutput) -> None:
        late = any(op.get("numRowsDroppedByWatermark") for op in out.progress.get("operators", []))
        if not out.row_count:
            if late:  # a batch that only dropped rows says so: late rows are never invisible
                self.line(title(out))
                self.console.print()
                self.console.file.flush()
            return
        by_relation: dict[str, list[dict[str, Any]]] = {}
        for relation, row in out.rows:
            by_relation.setdefault(relation, []).append(row)
        self.line(title(out))
        for relation, rows in by_relation.items():
            caption = shown(f"{relation}: {len(rows)} row{'s' if len(rows) != 1 else ''}")
            table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
            for name in rows[0]:
                table.add_column(shown(name), no_wrap=True, overflow="ignore")
            cells = [[cell(v) for v in row.values()] for row in rows]
            for values in cells:
                table.add_row(*values)
            self.line(caption)
            if self.fits(table):
                self.console.print(table)
            else:
                self.records([shown(name) for name in rows[0]], cells)
        self.console.print()
        self.console.file.flush()

    def line(self, text: Text) -> None:
        """One line as it is: rich neither wraps nor crops it (soft wrap)."""
        self.console.print(text, soft_wrap=True)

    def fits(self, table: Table) -> bool:
        """Whether the table at its natural width (every value on one line) fits the console."""
        unbounded = self.console.options.update_width(1 << 30)
        return Measurement.get(self.console, unbounded, table).maximum <= self.console.width

    def records(self, names: list[Text], rows: list[list[Text]]) -> None:
        """Rows too wide for a table, one record each: a ``-[ row N ]-`` line, then a
        ``column  value`` line per column (names aligned), each value whole on its line."""
        width = max(name.cell_len for name in names)
        for n, values in enumerate(rows, 1):
            self.line(Text(f"-[ row {n} ]-", style="dim"))
            for name, value in zip(names, values, strict=True):
                line = name.copy()
                line.stylize("bold")
                line.append(" " * (width - name.cell_len + 2))
                line.append_text(value)
                self.line(line)
