"""The columnar engine's queries: the reference ``Query`` and ``Engine`` (batch scheduling,
no-data batches, watermarks, batch ids, checkpoints), with each join and aggregate that
``operators.placement`` places columnar run on ``ColumnarJoin`` / ``ColumnarAggregate`` (built
by ``operators.make_operator``) and fed frames.

A relation's rows in a batch are a frame (columns ``c0..``, windows as structs) when they
come from a columnar join, a columnar aggregate whose outputs all have a columnar type (or
are windows), or the bulk trace reader, else the reference's list of tuples; each
operator takes the form it runs on (``batches.Batch``: ``frames.as_frame`` / ``to_rows``,
exact both ways; the columnar aggregate takes either).  An operator that is not columnar runs the
reference operator; ``Engine.fallbacks`` says which and why (``sjoin run --verbose`` prints
them).
"""

from __future__ import annotations

from ..query import Engine, Query


class ColumnarQuery(Query):
    """A ``Query`` of the columnar engine."""

    engine = "columnar"


class ColumnarEngine(Engine):
    """The reference ``Engine`` with ``ColumnarQuery`` queries."""

    query_class = ColumnarQuery
