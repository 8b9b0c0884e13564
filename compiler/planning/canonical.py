"""The canonical dump of a plan: every decision of the plan model as plain JSON data, for
what must tell two plans apart (a checkpoint's identity, ``runtime/checkpoints/checkpoint.py``),
apart
from what `sjoin plan` shows a user (``explain``), which may change its words and fields.

The dump follows the model itself, field by field, so a decision the planner adds is in it
without anyone writing it out.  Its form:

- a dataclass is an object: ``"@"`` its class name, then each field by name (``dataclasses``
  order; the JSON text sorts the keys);
- a sqlglot expression is its Spark SQL text (``sql.spark_sql``);
- a ``Span`` (a place in the spec's text) is ``null``: moving a statement, or a comment
  above it, decides nothing;
- a field of SQL types marked ``plan.TYPES_AS_TEXT`` (a state's key and value schemas) is
  the list of their Spark SQL texts, as when those fields held text;
- a field marked ``"canonical": "omit_empty"`` is left out when empty (a field added so,
  ``Plan.copies``, changes no identity of a plan without it);
- a tuple or list is a list; a set or frozenset a sorted list; a dict an object whose keys
  are text; ``None``, booleans, numbers and text are themselves.

Any other value is a ``TypeError``: a value without a stable text (an object's default
``repr`` holds its address) would make the identity of one plan differ from run to run.
``canonical_text`` is the dump as compact JSON with sorted keys: equal plans give equal
text, in every process.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from sqlglot import exp

from ..vocabulary.source import Span
from ..vocabulary.sql import spark_sql
from .plan import Plan

CANONICAL_FORMAT = 1  # bump when the form above changes (every identity changes with it)


def dump(value: Any) -> Any:
    """``value`` (a plan, or any part of one) in the canonical form."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Span):
        return None
    if isinstance(value, exp.Expression):
        return spark_sql(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {"@": type(value).__name__}
        for f in dataclasses.fields(value):
            field = getattr(value, f.name)
            if f.metadata.get("canonical") == "omit_empty" and not field:
                continue
            as_text = f.metadata.get("canonical") == "text"  # plan.TYPES_AS_TEXT
            out[f.name] = [str(t) for t in field] if as_text else dump(field)
        return out
    if isinstance(value, (tuple, list)):
        return [dump(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((dump(v) for v in value), key=_text)
    if isinstance(value, dict):
        return {_key(k): dump(v) for k, v in value.items()}
    raise TypeError(f"no canonical form for {type(value).__name__} in a plan")


def canonical_text(plan: Plan, **extra: Any) -> str:
    """The canonical dump of ``plan`` as JSON text (sorted keys, no spaces), with ``extra``
    fields beside ``plan`` (what else an identity depends on, e.g. the relation run)."""
    body = {
        "format": CANONICAL_FORMAT,
        "plan": dump(plan),
        **{k: dump(v) for k, v in extra.items()},
    }
    return _text(body)


def _key(key: Any) -> str:
    dumped = dump(key)
    return dumped if isinstance(dumped, str) else _text(dumped)


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
