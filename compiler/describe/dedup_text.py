"""A deduplication (``DedupNode``) as `sjoin plan` shows it: text lines and its JSON object
(docs/plan-json.md, ``dedups``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..vocabulary.types import format_ms

if TYPE_CHECKING:
    from ..planning.plan import DedupNode, DedupState
    from ..vocabulary.model import WatermarkChoice


FLOAT_KEYS_TEXT = {
    "normalized": "normalized: -0.0 and 0.0 are one key, every NaN one key "
    "(NormalizeFloatingNumbers on the keys, SPARK-56280, Spark 4.2+)",
    "bitwise": "compared as stored: -0.0 and 0.0 are two keys (no normalization before "
    "Spark 4.2, SPARK-56280)",
}


def eviction_text(state: DedupState) -> str:
    """When a key leaves the state, in words."""
    if state.eviction == "never":
        return f"never: {state.reason}"
    if state.eviction == "key":
        column = f"{state.column}.end" if state.window else state.column
        return f"key watermark: {column} <= watermark"
    return (
        f"expiry: expiresAtMicros = {state.column} + {format_ms(state.offset_ms or 0)} "
        "(the first row's event time plus its watermark delay) <= watermark"
    )


def state_json(state: DedupState) -> dict[str, Any]:
    return {
        "key": [{"name": c.name, "type": str(c.type)} for c in state.key],
        "value": [{"name": c.name, "type": str(c.type)} for c in state.value],
        "eviction": state.eviction,
        "column": state.column,
        "offset_ms": state.offset_ms,
        "window": state.window,
        "reason": state.reason,
    }


def dedup_json(node: DedupNode, watermarks: dict[str, Any]) -> dict[str, Any]:
    """``watermarks``: explain's ``watermarks_json`` of the node's use."""
    mark = node.input_watermark
    return {
        "name": node.name,
        "input": node.input,
        "keys": list(node.keys),
        "within_watermark": node.within_watermark,
        "spark_method": "dropDuplicatesWithinWatermark"
        if node.within_watermark
        else "dropDuplicates",
        "state": state_json(node.state),
        "float_keys": node.float_keys,
        "late_column": node.late_column,
        "late_is_window": node.late_is_window,
        "watermarks": watermarks,
        "input_watermark": None
        if mark is None
        else {"column": mark.column, "delay_ms": mark.delay_ms},
        "columns": [
            {"name": c.name, "type": str(c.type), "event_time": c.event_time} for c in node.columns
        ],
    }


def dedup_text(node: DedupNode, watermark_text: Any, input_watermark: str | None) -> list[str]:
    """The lines of `sjoin plan` for ``node``; ``watermark_text`` words a
    ``WatermarkChoice``, ``input_watermark`` the watermark defined on its input."""
    within = " WITHIN WATERMARK" if node.within_watermark else ""
    method = "dropDuplicatesWithinWatermark" if node.within_watermark else "dropDuplicates"
    keys = ", ".join(node.keys)
    value = (
        ", ".join(f"{c.name} {c.type}" for c in node.state.value)
        or "(empty: Spark stores no value)"
    )
    late = (
        f"rows with {node.late_column}{'.end' if node.late_is_window else ''} <= watermark "
        "are dropped before the state is read (numRowsDroppedByWatermark)"
        if node.late_column is not None
        else "none (its input carries no watermark)"
    )
    choice: WatermarkChoice
    lines = [
        f"dedup {node.name} = {node.input} AS {node.alias} ON ({keys}){within}",
        f"  spark            {method}([{keys}]); the first row of a key in input order passes",
        f"  state key        {', '.join(f'{c.name} {c.type}' for c in node.state.key)}",
        f"  state value      {value}",
        f"  state            {eviction_text(node.state)}",
    ]
    if node.float_keys is not None:
        lines.append(f"  float keys       {FLOAT_KEYS_TEXT[node.float_keys]}")
    if input_watermark is not None:
        lines.append(f"  input watermark  {input_watermark}")
    lines.append(f"  late rows        {late}")
    choice = node.watermarks.late_rows
    eviction = node.watermarks.eviction
    lines.append(
        f"  watermarks       late rows: {watermark_text(choice)}; "
        f"eviction: {watermark_text(eviction)}"
    )
    return lines
