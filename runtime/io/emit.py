"""An engine's ``BatchResult`` made into the ``BatchOutput`` the caller and the sinks get:
the output rows as JSON-ready row dicts (built only when asked for), the lines written straight
from the columns of a columnar batch, and the §7 progress record."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import IO, Any

from ...compiler.planning.plan import Plan
from ..engine.batches import Batch, Frame, Rows
from ..engine.values import format_watermark, json_converter
from ..query import BatchResult
from .output import BatchOutput, OutputRows, output_line


class Emitter:
    """Makes each ``BatchResult`` of a run into its ``BatchOutput``."""

    def __init__(
        self,
        plan: Plan,
        relations: Sequence[str],
        multiple: bool,
        keep_outputs: bool,
        late: Callable[[BatchResult], list[dict[str, Any]]] | None = None,
    ) -> None:
        self.plan = plan
        self.late = late  # a batch's late-row records (``late.LateRecords``), when kept
        self.keep_outputs = keep_outputs
        self.multiple = multiple
        self.converters: dict[str, tuple[list[str], list[tuple[int, Any]]]] = {}
        for name in relations:
            columns = plan.columns_of(name)
            self.converters[name] = (
                [c for c, _ in columns],
                [
                    (i, f)
                    for i, (_, kind) in enumerate(columns)
                    if (f := json_converter(kind)) is not None
                ],
            )

    def output(self, result: BatchResult) -> BatchOutput:
        outputs = result.outputs
        counts = {relation: len(values) for relation, values in outputs.items()}
        held = [outputs]

        keep = self.keep_outputs

        def make_rows() -> OutputRows:  # called once (BatchOutput caches the rows)
            rows = self._json_ready(held[0])
            if not keep:
                held[0] = {}  # the raw tuples are not needed any more
            return rows

        make_text = None
        if any(isinstance(values, Frame) for values in outputs.values()):

            def make_text(trace_batch: int | None, into: IO[bytes] | None) -> Iterator[bytes]:
                return self._column_text(result.batch_id, held[0], trace_batch, into)

        output = self._batch_output(result, counts, make_rows, make_text)
        if self.late is not None and result.late:
            output = replace(output, late=self.late(result))
        if keep:
            return replace(output, make_outputs=lambda: held[0])
        return output

    def _column_text(
        self,
        batch: int,
        outputs: dict[str, Batch],
        trace_batch: int | None,
        into: IO[bytes] | None,
    ) -> Iterator[bytes]:
        """The lines of a batch whose outputs are frames: from the columns, no row dict and
        no tuple (relations the reference operator made are lists of rows).  Given ``into``
        (a binary file) they are written there, in order, and nothing is yielded."""
        from ..columnar.frames import json_chunks, write_json_lines

        for relation, values in outputs.items():
            if isinstance(values, Rows):
                lines = [
                    output_line(batch, relation, row)
                    if trace_batch is None
                    else output_line(batch, relation, row, trace_batch=trace_batch)
                    for _, row in self._json_ready({relation: values})
                ]
                if lines and into is not None:
                    into.write("".join(line + "\n" for line in lines).encode("utf-8"))
                elif lines:
                    yield "".join(line + "\n" for line in lines).encode("utf-8")
            elif len(values):
                columns = self.plan.columns_of(relation)
                if into is not None:
                    write_json_lines(values.frame, batch, relation, columns, trace_batch, into)
                else:
                    yield from json_chunks(values.frame, batch, relation, columns, trace_batch)

    def _json_ready(self, outputs: dict[str, Batch]) -> OutputRows:
        """Output rows as (relation, row dict) pairs with JSON-ready values."""
        rows: OutputRows = []
        for relation, batch in outputs.items():
            names, converters = self.converters[relation]
            values = batch.to_rows()
            if not converters:
                rows.extend([(relation, dict(zip(names, row, strict=True))) for row in values])
                continue
            for row in values:
                cells = list(row)
                for i, convert in converters:
                    value = cells[i]
                    if value is not None:
                        cells[i] = convert(value)
                rows.append((relation, dict(zip(names, cells, strict=True))))
        return rows

    def _batch_output(
        self,
        result: BatchResult,
        counts: dict[str, int],
        make_rows: Callable[[], OutputRows],
        make_text: Callable[[int | None, IO[bytes] | None], Iterator[bytes]] | None = None,
    ) -> BatchOutput:
        watermark = None if result.watermark_ms is None else format_watermark(result.watermark_ms)
        progress: dict[str, Any] = {"batch": result.batch_id}
        if self.multiple:
            progress["query"] = result.query
        progress["watermark"] = watermark
        progress["operators"] = [
            {
                "relation": r.relation,
                "numRowsTotal": r.num_rows_total,
                "numRowsUpdated": r.num_rows_updated,
                "numRowsRemoved": r.num_rows_removed,
                "numRowsDroppedByWatermark": r.num_rows_dropped_by_watermark,
            }
            for r in result.operators
        ]
        sides = {r.relation: r.side_rows for r in result.operators if r.side_rows is not None}
        return BatchOutput(
            result.batch_id,
            result.query,
            watermark,
            result.data,
            counts,
            progress,
            make_rows,
            sides,
            result.trace_batch,
            make_text,
        )
