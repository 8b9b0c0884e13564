"""Two Plans compared: can a running query take a spec change (`sjoin diff OLD NEW`), and
what does a Spark upgrade change for one spec (`sjoin diff SPEC --spark A --to B`).

Everything here reads the typed decisions of the two plans (state schemas, state rules,
watermark use, version quirks, ANSI mode) and compares them field by field; nothing is
re-derived.  The rules of a restart, from Spark's source and proven on Spark 4.3.0 by the
checkpoint catalogue (tests/compiler/describe/diff/, docs/changing-a-running-query.md):

* A query's stateful operators are numbered 0, 1, ... in pre-order from its root, left input
  before right (``IncrementalExecution`` numbers them as it walks the plan down); the state of
  operator *n* is read back by whatever operator is *n* after the change.
* Each operator's state stores have a key and a value schema, written at the first batch
  (``StateSchemaCompatibilityChecker``); a restart whose schemas differ in the number or the
  types of fields fails (names may differ).  A join's key is its key pairs' types and each
  side's value is the columns that side keeps after column pruning; an aggregate's key is
  its grouping keys and its value the aggregation buffers.  In 4.x the check runs on the
  driver before the first batch (``STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE`` /
  ``..._VALUE_...``); in 3.x in the first task (``StateSchemaNotCompatible``).  4.x's state
  schema evolution applies to transformWithState with Avro encoding only, never to joins
  or aggregations.
* From 4.0 (SPARK-46906) the operators must be the same, id by id, as the checkpoint's state
  metadata names them: adding, removing or replacing a stateful operator fails the restart
  (``STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA``).
* The checkpoint's offset log pins ``spark.sql.shuffle.partitions``, the state store
  provider and the multiple-watermark policy (``OffsetSeqMetadata.relevantSQLConfs``): a
  restart uses the checkpoint's values and ignores the new ones.
* The sources are matched by position (``sources/0``, ...), one per read of a stream (a
  stream read twice is two sources); another number of sources fails the restart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial, singledispatch
from typing import Any, Literal, TypeAlias

from sqlglot import exp

from ..diagnostics.diagnostics import Diagnostic
from ..planning.plan import (
    AggregateNode,
    DedupNode,
    InputWatermark,
    JoinNode,
    OperatorNode,
    Plan,
    PlanNode,
    Side,
    StateRule,
    StreamNode,
    UnionNode,
    ViewNode,
)
from ..vocabulary import annotate
from ..vocabulary.model import SparkVersion, WatermarkChoice
from ..vocabulary.settings import SETTINGS
from ..vocabulary.sql import written_sql
from ..vocabulary.types import SqlType, format_ms
from .explain import predicate_text, watermark_text

Verdict: TypeAlias = Literal["resumes", "differs", "fails"]
DIFF_SCHEMA = 1  # the JSON of `sjoin diff`: bump when a field changes meaning or goes away

VERDICT_TEXT: dict[Verdict, str] = {
    "resumes": "resumes",
    "differs": "resumes but behaves differently",
    "fails": "fails at restart",
}
# the settings whose confs the checkpoint pins at the query's first start
PINNED = tuple(name for name, spec in SETTINGS.items() if spec.pinned_by_checkpoint)


@dataclass(frozen=True)
class Reason:
    """One reason for a verdict: a short topic and a sentence for the user."""

    topic: str
    detail: str
    issue: str | None = None  # the Spark issue, for version differences

    def to_dict(self) -> dict[str, Any]:
        return {"topic": self.topic, "detail": self.detail, "issue": self.issue}


@dataclass(frozen=True)
class OperatorDiff:
    """One stateful operator (by Spark's operator id) of a query, OLD against NEW."""

    operator_id: int
    old: str | None  # the operator's name in OLD (None: NEW adds it)
    new: str | None
    kind: str  # "join" or "aggregate" (NEW's when both exist)
    verdict: Verdict
    error: str | None = None  # Spark's error when the restart fails
    reasons: tuple[Reason, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "operator_id": self.operator_id,
            "old": self.old,
            "new": self.new,
            "kind": self.kind,
            "verdict": self.verdict,
            "error": self.error,
            "reasons": [r.to_dict() for r in self.reasons],
        }


@dataclass(frozen=True)
class QueryDiff:
    """One query (one checkpoint): its root in OLD and NEW and each stateful operator."""

    old_root: str | None
    new_root: str | None
    checkpoint: str | None
    verdict: Verdict
    error: str | None
    reasons: tuple[Reason, ...]  # query-level: sources, pinned settings, the Spark version
    operators: tuple[OperatorDiff, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "old_root": self.old_root,
            "new_root": self.new_root,
            "checkpoint": self.checkpoint,
            "verdict": self.verdict,
            "error": self.error,
            "reasons": [r.to_dict() for r in self.reasons],
            "operators": [o.to_dict() for o in self.operators],
        }


@dataclass(frozen=True)
class SpecDiff:
    """`sjoin diff OLD NEW`: every query's verdict."""

    old_spark: str
    new_spark: str
    queries: tuple[QueryDiff, ...]

    @property
    def verdict(self) -> Verdict:
        return _worst(q.verdict for q in self.queries)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": DIFF_SCHEMA,
            "kind": "change",
            "old_spark": self.old_spark,
            "new_spark": self.new_spark,
            "verdict": self.verdict,
            "queries": [q.to_dict() for q in self.queries],
        }

    def text(self) -> str:
        lines = [
            f"restarting from OLD's checkpoint with NEW (verdicts follow Spark {self.new_spark}, "
            "NEW's target)",
            "",
        ]
        for q in self.queries:
            name = (
                q.new_root if q.old_root in (None, q.new_root) else f"{q.old_root} -> {q.new_root}"
            )
            where = f" (checkpoint '{q.checkpoint}')" if q.checkpoint else ""
            lines.append(f"query {name}{where}: {VERDICT_TEXT[q.verdict]}")
            if q.error:
                lines.append(f"  Spark fails with {q.error}")
            lines.extend(f"  {r.topic}: {r.detail}" for r in q.reasons)
            for op in q.operators:
                label = op.new or op.old
                if op.old and op.new and op.old != op.new:
                    label = f"{op.old} -> {op.new}"
                lines.append(
                    f"  operator {op.operator_id} ({op.kind} {label}): {VERDICT_TEXT[op.verdict]}"
                )
                if op.error:
                    lines.append(f"    Spark fails with {op.error}")
                lines.extend(f"    {r.topic}: {r.detail}" for r in op.reasons)
            lines.append("")
        return "\n".join(lines).rstrip("\n")


def _worst(verdicts: Any) -> Verdict:
    found = set(verdicts)
    for v in ("fails", "differs"):
        if v in found:
            return v  # type: ignore[return-value]
    return "resumes"


# ------------------------------------------------------------------ a query's operators


def _checkpoints(plan: Plan) -> dict[str, str]:
    return {s.relation: s.checkpoint for s in plan.sinks if s.checkpoint}


def pair_queries(old: Plan, new: Plan) -> list[tuple[str | None, str | None]]:
    """OLD's and NEW's queries paired by the checkpoint their sinks name, then by position."""
    old_cp, new_cp = _checkpoints(old), _checkpoints(new)
    by_cp = {cp: rel for rel, cp in new_cp.items()}
    pairs: list[tuple[str | None, str | None]] = []
    left_old = list(old.query_roots)
    left_new = list(new.query_roots)
    for root in old.query_roots:
        match = by_cp.get(old_cp.get(root, ""))
        if match is not None and match in left_new:
            pairs.append((root, match))
            left_old.remove(root)
            left_new.remove(match)
    for a, b in zip(left_old, left_new, strict=False):
        pairs.append((a, b))
    pairs += [(a, None) for a in left_old[len(left_new) :]]
    pairs += [(None, b) for b in left_new[len(left_old) :]]
    return pairs


# ------------------------------------------------------------------ OLD -> NEW


def diff_plans(old: Plan, new: Plan) -> SpecDiff:
    """For each query of OLD restarted from its checkpoint with NEW: resumes, fails (with
    Spark's error) or resumes but behaves differently, per stateful operator."""
    queries = []
    for old_root, new_root in pair_queries(old, new):
        queries.append(_diff_query(old, new, old_root, new_root))
    return SpecDiff(str(old.spark), str(new.spark), tuple(queries))


def _schema_error(new: Plan, part: Literal["key", "value"]) -> str:
    if new.spark.major >= 4:
        return f"STATE_STORE_{part.upper()}_SCHEMA_NOT_COMPATIBLE"
    return "StateSchemaNotCompatible"


def _pinned_setting(old: Plan, new: Plan, setting: str) -> Reason | None:
    """Why NEW's value of a setting the checkpoint pins has no effect on the restarted
    query, if it differs from what the checkpoint holds.  A spec that does not set it leaves
    it to the cluster, so the checkpoint holds the cluster's value at OLD's first start."""
    conf = SETTINGS[setting].spark_conf
    default = SETTINGS[setting].default
    was_set, now_set = setting in old.setting_spans, setting in new.setting_spans
    was, now = old.settings.value(setting), new.settings.value(setting)
    if (not was_set and not now_set) or (was_set and now_set and was == now):
        return None
    if not was_set:
        return Reason(
            "setting ignored",
            f"`{setting}` is {now} in NEW, but OLD left it to the cluster: the checkpoint "
            f"pins {conf} at the cluster's value when the query first started (Spark's "
            f"default: {default}), and the restarted query keeps it (a new checkpoint is "
            "needed to change it)",
        )
    if not now_set:
        return Reason(
            "setting ignored",
            f"NEW leaves `{setting}` to the cluster, but the checkpoint pins {conf} = {was}: "
            f"the restarted query keeps {was} (a new checkpoint takes the cluster's value)",
        )
    return Reason(
        "setting ignored",
        f"`{setting}` is {now} in NEW, but the checkpoint pins {conf} = {was}: "
        f"the restarted query keeps {was} (a new checkpoint is needed to change it)",
    )


def _diff_query(old: Plan, new: Plan, old_root: str | None, new_root: str | None) -> QueryDiff:
    checkpoint = _checkpoints(new).get(new_root or "") or _checkpoints(old).get(old_root or "")
    if old_root is None or new_root is None:
        reason = (
            Reason("new query", "NEW adds this query: it starts from its own, empty checkpoint")
            if old_root is None
            else Reason("query removed", "NEW has no such query: its checkpoint is left unused")
        )
        return QueryDiff(old_root, new_root, checkpoint, "resumes", None, (reason,), ())
    # each query as Spark optimizes it, on its own (a relation another query shares may run
    # otherwise in it: ``Plan.apart``)
    old, new = old.for_query(old_root), new.for_query(new_root)
    reasons: list[Reason] = []
    stateless = _stateless_reasons(old, new, old_root, new_root)
    old_sources, new_sources = old.sources(old_root), new.sources(new_root)
    if len(old_sources) != len(new_sources):
        reasons.append(
            Reason(
                "sources",
                f"the checkpoint records {len(old_sources)} sources "
                f"({', '.join(old_sources)}) and NEW reads {len(new_sources)} "
                f"({', '.join(new_sources)}): Spark refuses to continue",
            )
        )
        refused = (
            f"assertion failed: There are [{len(old_sources)}] sources in the checkpoint "
            f"offsets and now there are [{len(new_sources)}] sources requested by the query. "
            "Cannot continue."
        )
        reasons += stateless
        return QueryDiff(old_root, new_root, checkpoint, "fails", refused, tuple(reasons), ())
    renamed = [(a, b) for a, b in zip(old_sources, new_sources, strict=True) if a != b]
    if renamed:
        reasons.append(
            Reason(
                "sources",
                "streams are matched by position, not by name: "
                + ", ".join(f"`{a}` is now `{b}`" for a, b in renamed)
                + " (each must still read the source it read before)",
            )
        )
    pinned = [r for r in map(partial(_pinned_setting, old, new), PINNED) if r is not None]
    reasons += pinned
    reasons += stateless
    if old.spark != new.spark:
        reasons.append(
            Reason(
                "spark version",
                f"the target Spark changes from {old.spark} to {new.spark}; the verdicts "
                f"follow Spark {new.spark} (what else changes: "
                f"`sjoin diff NEW --spark {old.spark} --to {new.spark}`)",
            )
        )
    old_ops, new_ops = old.stateful_operators(old_root), new.stateful_operators(new_root)
    ops = []
    for i in range(max(len(old_ops), len(new_ops))):
        a = old_ops[i] if i < len(old_ops) else None
        b = new_ops[i] if i < len(new_ops) else None
        ops.append(_diff_operator(old, new, i, a, b))
    verdict = _worst([*(o.verdict for o in ops), "differs" if pinned or stateless else "resumes"])
    error = next((o.error for o in ops if o.error), None)
    return QueryDiff(old_root, new_root, checkpoint, verdict, error, tuple(reasons), tuple(ops))


def _paired(olds: list[Any], news: list[Any]) -> list[tuple[Any, Any]]:
    """Relations of one kind paired by name, then the rest by position (a stateless relation
    has no id in Spark's checkpoint: only what it does matters)."""
    by_name = {n.name: n for n in news}
    pairs = [(a, by_name[a.name]) for a in olds if a.name in by_name]
    taken = {b.name for _, b in pairs}
    rest_old = [a for a in olds if a.name not in taken]
    rest_new = [b for b in news if b.name not in taken]
    return pairs + list(zip(rest_old, rest_new, strict=False))


def _stateless_reasons(old: Plan, new: Plan, old_root: str, new_root: str) -> list[Reason]:
    """What changes in the relations of a query that hold no state (its views and unions):
    Spark keeps nothing of them in the checkpoint but the offsets of the sources they read,
    so a change is compatible and takes effect from the restarted query's first batch."""
    reasons: list[Reason] = []
    views = _paired(
        [n for n in old.closure(old_root) if isinstance(n, ViewNode)],
        [n for n in new.closure(new_root) if isinstance(n, ViewNode)],
    )
    for a, b in views:
        was, now = _sql(a.where), _sql(b.where)
        if _norm(a.where) != _norm(b.where):
            reasons.append(
                Reason(
                    "view",
                    f"the WHERE of view `{b.name}` changes from {was or 'none'} to "
                    f"{now or 'none'}: a view holds no state, so the restarted query filters "
                    "with the new one from its first batch on; the state above it keeps what "
                    "the old one let through",
                )
            )
        if [(o.name, _norm(o.expr)) for o in a.output] != [
            (o.name, _norm(o.expr)) for o in b.output
        ]:
            reasons.append(
                Reason(
                    "view",
                    f"the SELECT of view `{b.name}` changes: stateless, it takes effect from "
                    "the restarted query's first batch (a column that reaches a stateful "
                    "operator's state changes its schema: see the operators)",
                )
            )
    unions = _paired(
        [n for n in old.closure(old_root) if isinstance(n, UnionNode)],
        [n for n in new.closure(new_root) if isinstance(n, UnionNode)],
    )
    for a, b in unions:
        if a.relations == b.relations:
            continue
        if len(old.sources(old_root)) != len(new.sources(new_root)):
            then = (
                "the sources change in number: Spark refuses the restart (see sources), so "
                "no input reads on from this checkpoint; on a new one every source starts "
                "from its starting offsets, with empty state"
            )
        else:
            then = (
                "the sources keep their number: each input reads on from the offsets the "
                "checkpoint holds for the source at its position"
            )
        reasons.append(
            Reason(
                "union",
                f"the inputs of union `{b.name}` change from ({', '.join(a.relations)}) to "
                f"({', '.join(b.relations)}): a union holds no state; {then}",
            )
        )
    return reasons


@singledispatch
def _kind(node: OperatorNode) -> str:
    """A stateful operator's kind, as `sjoin diff` names it."""
    raise TypeError(f"a plan node of kind {type(node).__name__} is no stateful operator")


@_kind.register
def _(node: JoinNode) -> str:
    return "join"


@_kind.register
def _(node: AggregateNode) -> str:
    return "aggregate"


@_kind.register
def _(node: DedupNode) -> str:
    return "dedup"


def _types(columns: Sequence[Any]) -> str:
    return "(" + ", ".join(f"{c.name} {c.type}" for c in columns) + ")"


OPERATOR_MISMATCH = "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA"


def _diff_operator(
    old: Plan, new: Plan, i: int, a: OperatorNode | None, b: OperatorNode | None
) -> OperatorDiff:
    """From 4.0 (SPARK-46906) a restart compares the operators of the plan with those of the
    checkpoint's state metadata, id by id: an operator added, removed or of another kind
    fails it.  Up to 3.5 an operator of another kind fails the state schema check, a new one
    finds no state files to load, and a removed one's state is left unread."""
    checked = new.spark.major >= 4
    if b is None:
        assert a is not None
        gone = Reason(
            "operator removed",
            f"NEW has no operator {i}: `{a.name}`'s state is left unread, and what it held "
            "never comes out"
            + (" (Spark 4.x refuses: the checkpoint's state metadata names it)" if checked else ""),
        )
        if checked:
            return OperatorDiff(i, a.name, None, _kind(a), "fails", OPERATOR_MISMATCH, (gone,))
        return OperatorDiff(i, a.name, None, _kind(a), "differs", reasons=(gone,))
    if a is None:
        added = Reason(
            "operator added",
            f"`{b.name}` is a new operator {i}: "
            + (
                "the checkpoint's state metadata has no such operator"
                if checked
                else "the checkpoint has no state files for it to load"
            ),
        )
        error = OPERATOR_MISMATCH if checked else "CANNOT_LOAD_STATE_STORE"
        return OperatorDiff(i, None, b.name, _kind(b), "fails", error, (added,))
    if _kind(a) != _kind(b):
        return OperatorDiff(
            i, a.name, b.name, _kind(b), "fails",
            OPERATOR_MISMATCH if checked else _schema_error(new, "key"),
            (Reason("operator changed", f"operator {i} was the {_kind(a)} `{a.name}` and is "
                    f"now the {_kind(b)} `{b.name}`: it would read the other's state"),),
        )  # fmt: skip
    return _diff_same_kind(a, b, old, new, i)


@singledispatch
def _diff_same_kind(a: OperatorNode, b: OperatorNode, old: Plan, new: Plan, i: int) -> OperatorDiff:
    """Operator ``i`` restarted, ``a`` in OLD and ``b`` in NEW of the same kind (``_kind``)."""
    raise TypeError(f"a plan node of kind {type(a).__name__} is no stateful operator")


@_diff_same_kind.register
def _(a: JoinNode, b: JoinNode, old: Plan, new: Plan, i: int) -> OperatorDiff:
    return _diff_join(old, new, i, a, b)


@_diff_same_kind.register
def _(a: AggregateNode, b: AggregateNode, old: Plan, new: Plan, i: int) -> OperatorDiff:
    return _diff_aggregate(old, new, i, a, b)


@_diff_same_kind.register
def _(a: DedupNode, b: DedupNode, old: Plan, new: Plan, i: int) -> OperatorDiff:
    if new.spark.major >= 4 and a.within_watermark != b.within_watermark:
        # the state metadata names the operator: dedupe or dedupeWithinWatermark (seen on
        # Spark 4.3.0: tests/compiler/describe/diff/test_pipeline_restarts_spark.py)
        names = [_dedup_operator_name(n) for n in (a, b)]
        how = "added" if b.within_watermark else "removed"
        return OperatorDiff(
            i, a.name, b.name, "dedup", "fails", OPERATOR_MISMATCH,
            (Reason("operator changed", f"operator {i} was Spark's {names[0]} and is now "
                    f"its {names[1]} (WITHIN WATERMARK {how}): the checkpoint's state "
                    "metadata names the old one"),),
        )  # fmt: skip
    return _diff_dedup(i, new, a, b)


def _dedup_operator_name(node: DedupNode) -> str:
    """The operator's name in Spark's state metadata (``StateStoreWriter.shortName``)."""
    return "dedupeWithinWatermark" if node.within_watermark else "dedupe"


def _diff_dedup(i: int, new: Plan, a: DedupNode, b: DedupNode) -> OperatorDiff:
    """A deduplication restarted: its state key is the dedup columns' types, its value
    Spark's empty row or the within-watermark expiry."""
    if a.key_types != b.key_types:
        return OperatorDiff(
            i, a.name, b.name, "dedup", "fails", _schema_error(new, "key"),
            (Reason("state key", f"the dedup columns were {_types(a.state.key)} and are "
                    f"{_types(b.state.key)}: the state's key schema changes"),),
        )  # fmt: skip
    if a.state.value != b.state.value:
        return OperatorDiff(
            i, a.name, b.name, "dedup", "fails", _schema_error(new, "value"),
            (Reason("state value", f"the state value was {_types(a.state.value)} and is "
                    f"{_types(b.state.value)} (dropDuplicates and "
                    "dropDuplicatesWithinWatermark store different values)"),),
        )  # fmt: skip
    reasons = []
    if a.keys != b.keys:
        reasons.append(
            Reason(
                "key",
                f"the dedup columns change from ({', '.join(a.keys)}) to ({', '.join(b.keys)}) "
                "with the same types: keys stored before the restart are compared with the "
                "new columns' values",
            )
        )
    if (a.state.eviction, a.state.column, a.state.offset_ms) != (
        b.state.eviction,
        b.state.column,
        b.state.offset_ms,
    ):
        from .dedup_text import eviction_text

        reasons.append(
            Reason(
                "eviction",
                f"a key left the state at {eviction_text(a.state)}, and leaves it at "
                f"{eviction_text(b.state)}: "
                + (
                    "a key stored before the restart keeps the expiresAtMicros it was stored "
                    "with (the old delay); the new delay applies to the keys stored after it"
                    if a.state.eviction == b.state.eviction == "expiry"
                    else "the keys stored before the restart follow the new rule from its "
                    "first batch"
                ),
            )
        )
    if a.float_keys != b.float_keys and a.float_keys is not None and b.float_keys is not None:
        reasons.append(
            Reason(
                "float keys",
                f"{_float_keys_text(a)} before the restart and {_float_keys_text(b)} after "
                "(SPARK-56280, Spark 4.2): a -0.0 or 0.0 key stored under the old rule is not "
                "found by the new one, so a duplicate of its row can pass once more",
            )
        )
    return OperatorDiff(
        i, a.name, b.name, "dedup", "differs" if reasons else "resumes", None, tuple(reasons)
    )


def _sql(node: Any) -> str | None:
    return None if node is None else written_sql(node)


def _norm(node: Any) -> str | None:
    """An expression as SQL with each column qualified by its side (`left.k`), not by its
    alias, so that renaming an alias changes nothing."""
    if node is None:
        return None
    copy = node.copy()
    for col in copy.find_all(exp.Column):
        side = annotate.side(col)
        if side:
            col.set("table", exp.to_identifier(side))
    return written_sql(copy)


def _diff_join(old: Plan, new: Plan, i: int, a: JoinNode, b: JoinNode) -> OperatorDiff:
    if a.key_types != b.key_types:
        return OperatorDiff(
            i, a.name, b.name, "join", "fails", _schema_error(new, "key"),
            (Reason("state key", f"the join key's types were ({_schema_types(a.key_types)}) and "
                    f"are ({_schema_types(b.key_types)}): the state's key schema changes"),),
        )  # fmt: skip
    for sa, sb in ((a.left, b.left), (a.right, b.right)):
        if [c.type for c in sa.state_columns] != [c.type for c in sb.state_columns]:
            return OperatorDiff(
                i, a.name, b.name, "join", "fails", _schema_error(new, "value"),
                (Reason("state value", f"the {sa.name} side (`{sb.alias}`) stored "
                        f"{_types(sa.state_columns)} and would store "
                        f"{_types(sb.state_columns)}: the state's value schema changes "
                        "(Spark keeps only the columns the join and its output use)"),),
            )  # fmt: skip
    reasons: list[Reason] = []
    if a.join_type != b.join_type:
        reasons.append(_join_type_reason(a, b))
    old_keys = [(_sql(x), _sql(y)) for x, y in a.keys]
    new_keys = [(_sql(x), _sql(y)) for x, y in b.keys]
    if [(_norm(x), _norm(y)) for x, y in a.keys] != [(_norm(x), _norm(y)) for x, y in b.keys]:
        reasons.append(
            Reason(
                "key",
                f"the key changes from {_keys_text(old_keys)} to {_keys_text(new_keys)} with "
                "the same types: rows stored before the restart are found by their old key "
                "values",
            )
        )
    for sa, sb in ((a.left, b.left), (a.right, b.right)):
        reasons.extend(_side_filter_reasons(sa, sb))
    if _norm(a.post_join_filter) != _norm(b.post_join_filter):
        reasons.append(
            Reason("range or filter", f"the condition on both sides changes from "
                   f"{_sql(a.post_join_filter) or '(none)'} to "
                   f"{_sql(b.post_join_filter) or '(none)'}")
        )  # fmt: skip
    for sa, sb in ((a.left, b.left), (a.right, b.right)):
        reasons.extend(_watermark_reasons(old, new, sa, sb))
        reasons.extend(_eviction_reasons(sa, sb))
    old_out = [(o.name, _sql(o.expr)) for o in a.output]
    new_out = [(o.name, _sql(o.expr)) for o in b.output]
    if [(o.name, _norm(o.expr)) for o in a.output] != [(o.name, _norm(o.expr)) for o in b.output]:
        reasons.append(_output_reason(old_out, new_out))
    return OperatorDiff(
        i, a.name, b.name, "join", "differs" if reasons else "resumes", None, tuple(reasons)
    )


def _keys_text(keys: list[tuple[str | None, str | None]]) -> str:
    return ", ".join(f"{x} = {y}" for x, y in keys) or "(none)"


def _join_type_reason(a: JoinNode, b: JoinNode) -> Reason:
    old_kind, new_kind = a.kind.keyword, b.kind.keyword
    gained = [s for s in b.kind.preserved if s not in a.kind.preserved]
    lost = [s for s in a.kind.preserved if s not in b.kind.preserved]
    parts = [f"the join type changes from {old_kind} to {new_kind} on the same state"]
    for side in gained:
        alias = getattr(b, side).alias
        parts.append(
            f"`{alias}` rows stored before the restart that never matched come out "
            "null-padded when they are evicted"
        )
    for side in lost:
        alias = getattr(b, side).alias
        parts.append(
            f"unmatched `{alias}` rows stored before the restart are evicted without their "
            "null-padded row"
        )
    return Reason("join type", "; ".join(parts))


def _stream_delay(plan: Plan, side: Side) -> int | None:
    node = plan.node(side.relation)
    return node.delay_ms if isinstance(node, StreamNode) else None


_PUSHED = "filter pushed below the join (failing rows never reach it)"
_IN_JOIN = (
    "filter kept in the join (failing rows are not stored; a preserved side's come out "
    "null-padded at once)"
)


def _side_filter_reasons(sa: Side, sb: Side) -> list[Reason]:
    """How a side's two filters change, each named: the one Spark pushes below the join and
    the one it keeps in the join (a preserved outer side's). A filter that only moves from
    one to the other (an outer join made inner, or back) is one reason."""
    pa, pb = _norm(sa.pushed_filter), _norm(sb.pushed_filter)
    ja, jb = _norm(sa.pre_join_filter), _norm(sb.pre_join_filter)
    alias = f"`{sb.alias}`"
    if pa != pb and ja != jb and pa == jb and ja == pb:
        moved = _sql(sb.pushed_filter) or _sql(sb.pre_join_filter)
        if sa.pushed_filter is not None:
            how = "from below the join into it: rows failing it now come out null-padded at once"
        else:
            how = "from the join to below it: rows failing it are now dropped, not null-padded"
        return [
            Reason(
                "filter",
                f"{alias}'s filter {moved} moves {how} (rows stored before the restart all "
                "passed it)",
            )
        ]
    reasons = []
    for what, fa, fb in (
        (_PUSHED, sa.pushed_filter, sb.pushed_filter),
        (_IN_JOIN, sa.pre_join_filter, sb.pre_join_filter),
    ):
        if _norm(fa) != _norm(fb):
            reasons.append(
                Reason(
                    "filter",
                    f"{alias}'s {what} changes from {_sql(fa) or '(none)'} to "
                    f"{_sql(fb) or '(none)'}: rows stored before the restart passed the old one",
                )
            )
    return reasons


def _input_watermark_reason(
    relation: str, what: str, a: InputWatermark | None, b: InputWatermark | None
) -> list[Reason]:
    """A watermark defined on an operator's input (a join's or aggregate's output) that
    NEW adds, removes or changes: the global watermark moves with NEW's nodes."""
    marks = [
        None if m is None else f"watermark {m.column} delay {format_ms(m.delay_ms)}" for m in (a, b)
    ]
    if marks[0] == marks[1]:
        return []
    return [
        Reason(
            "watermark",
            f"the watermark on `{relation}`'s output changes from {marks[0] or 'none'} to "
            f"{marks[1] or 'none'}: after the restart the global watermark moves with "
            f"NEW's watermark nodes, and {what}",
        )
    ]


def _watermark_reasons(old: Plan, new: Plan, sa: Side, sb: Side) -> list[Reason]:
    marked = _input_watermark_reason(
        sb.relation,
        "the join evicts its state and drops late rows by it",
        sa.input_watermark,
        sb.input_watermark,
    )
    if not (
        isinstance(old.node(sa.relation), StreamNode)
        and isinstance(new.node(sb.relation), StreamNode)
    ):
        return marked  # a join's output: its watermark comes from the streams below
    da, db = _stream_delay(old, sa), _stream_delay(new, sb)
    if da == db or da is None or db is None:
        if (da is None) != (db is None):
            change = "loses" if db is None else "gains"
            return [Reason("watermark delay", f"`{sb.relation}` {change} its watermark")]
        return []
    later = db > da
    return [
        Reason(
            "watermark delay",
            f"`{sb.relation}`'s watermark delay changes from {format_ms(da)} to "
            f"{format_ms(db)}: "
            + (
                "the watermark stops until the data catches up (it never moves back: the "
                "checkpoint holds the old one), so state is kept longer and outer rows come "
                "out later"
                if later
                else "the watermark jumps ahead at the next batch: rows the old delay "
                "accepted may now be late and dropped, and state is evicted sooner"
            ),
        )
    ]


def _rule_text(side: Side, rule: StateRule) -> str:
    if rule.eviction == "never":
        return "never evicted"
    return f"evicted when {predicate_text(_with_rule(side, rule))}"


def _with_rule(side: Side, rule: StateRule) -> Side:
    from dataclasses import replace

    return replace(side, state=rule)


def _eviction_reasons(sa: Side, sb: Side) -> list[Reason]:
    ra, rb = sa.state, sb.state
    if (ra.eviction, ra.column, ra.offset_ms, ra.window) == (
        rb.eviction,
        rb.column,
        rb.offset_ms,
        rb.window,
    ):
        return []
    out = [
        Reason(
            "eviction",
            f"`{sb.alias}`'s state was {_rule_text(sa, ra)} and is {_rule_text(sb, rb)}",
        )
    ]
    sooner = rb.eviction != "never" and (
        ra.eviction == "never"
        or (ra.offset_ms is not None and rb.offset_ms is not None and rb.offset_ms > ra.offset_ms)
    )
    later = ra.eviction != "never" and (
        rb.eviction == "never"
        or (ra.offset_ms is not None and rb.offset_ms is not None and rb.offset_ms < ra.offset_ms)
    )
    if sooner:
        out.append(
            Reason(
                "old state",
                f"the old state keeps `{sb.alias}` rows that the new plan would have evicted "
                "already: they go at the first batch after the restart"
                + (", null-padded" if sb.preserved else ""),
            )
        )
    if later:
        out.append(
            Reason(
                "old state",
                f"`{sb.alias}` rows that the old plan evicted before the restart are gone: "
                "new rows that the new plan would match with them find nothing",
            )
        )
    if (sooner or later) and sb.preserved:
        out.append(
            Reason(
                "outer rows",
                f"unmatched `{sb.alias}` rows come out null-padded "
                + ("sooner" if sooner else "later")
                + " than before",
            )
        )
    return out


def _output_reason(
    old_out: list[tuple[str, str | None]], new_out: list[tuple[str, str | None]]
) -> Reason:
    if sorted(old_out) == sorted(new_out):
        return Reason("output", "the output's columns are reordered; the state is unchanged")
    return Reason(
        "output",
        "the output changes from "
        + ", ".join(f"{e} AS {n}" for n, e in old_out)
        + " to "
        + ", ".join(f"{e} AS {n}" for n, e in new_out)
        + "; the state is unchanged, rows come out in the new shape from the restart on",
    )


def _diff_aggregate(
    old: Plan, new: Plan, i: int, a: AggregateNode, b: AggregateNode
) -> OperatorDiff:
    if a.key_types != b.key_types:
        return OperatorDiff(
            i, a.name, b.name, "aggregate", "fails", _schema_error(new, "key"),
            (Reason("state key", f"the grouping keys' types were ({_schema_types(a.key_types)}) "
                    f"and are ({_schema_types(b.key_types)}): the state's key schema changes"),),
        )  # fmt: skip
    if a.buffer_types != b.buffer_types:
        return OperatorDiff(
            i, a.name, b.name, "aggregate", "fails", _schema_error(new, "value"),
            (Reason("state value", f"the aggregation buffers were "
                    f"({_schema_types(a.buffer_types)}) and are ({_schema_types(b.buffer_types)}): "
                    "the state's value schema changes"),),
        )  # fmt: skip
    reasons = []
    old_keys, new_keys = [_sql(g) for g in a.group_by], [_sql(g) for g in b.group_by]
    same_keys = [_norm(g) for g in a.group_by] == [_norm(g) for g in b.group_by]
    if not same_keys:
        reasons.append(
            Reason(
                "key",
                f"the grouping changes from {', '.join(map(str, old_keys))} to "
                f"{', '.join(map(str, new_keys))} with the same types: groups stored before "
                "the restart keep their old keys and come out as they were",
            )
        )
    if a.mode != b.mode:
        reasons.append(
            Reason(
                "output mode",
                f"the output mode changes from {a.mode} to {b.mode}: groups stored before "
                "the restart come out "
                + ("at every update" if b.mode == "update" else "when the watermark closes them"),
            )
        )
    reasons.extend(_aggregate_where_reason(a, b))
    reasons.extend(
        _input_watermark_reason(
            b.input,
            "the aggregate closes its windows by it",
            a.input_watermark,
            b.input_watermark,
        )
    )
    old_out = [(o.name, _sql(o.expr)) for o in a.output]
    new_out = [(o.name, _sql(o.expr)) for o in b.output]
    same_out = [(o.name, _norm(o.expr)) for o in a.output] == [
        (o.name, _norm(o.expr)) for o in b.output
    ]
    if not same_out and same_keys:
        reasons.append(_output_reason(old_out, new_out))
    return OperatorDiff(
        i, a.name, b.name, "aggregate", "differs" if reasons else "resumes", None, tuple(reasons)
    )


def _aggregate_where_reason(a: AggregateNode, b: AggregateNode) -> list[Reason]:
    """A changed WHERE of an aggregate: a Filter below it holds no state and Spark's
    checkpoint keeps nothing of it (the state's key and value schemas are the grouping keys
    and the buffers), so the query resumes and filters with the new one."""
    was = None if a.where is None else a.where.condition
    now = None if b.where is None else b.where.condition
    if _norm(was) == _norm(now):
        return []
    return [
        Reason(
            "filter",
            f"the WHERE of aggregate `{b.name}` changes from {_sql(was) or 'none'} to "
            f"{_sql(now) or 'none'}: it filters the rows before they are grouped and holds no "
            "state (the state's schema is unchanged), so the restarted query filters with the "
            "new one from its first batch on; the groups stored before it keep what the old "
            "one let through",
        )
    ]


# ------------------------------------------------------------------ Spark A -> Spark B


@dataclass(frozen=True)
class VersionDiff:
    """`sjoin diff SPEC --spark A --to B`: every behaviour of this spec that differs."""

    spec: str
    from_spark: str
    to_spark: str
    changes: tuple[Reason, ...]
    relation_changes: dict[str, tuple[Reason, ...]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": DIFF_SCHEMA,
            "kind": "upgrade",
            "spec": self.spec,
            "from_spark": self.from_spark,
            "to_spark": self.to_spark,
            "changes": [r.to_dict() for r in self.changes],
            "relations": {
                name: [r.to_dict() for r in reasons]
                for name, reasons in sorted(self.relation_changes.items())
            },
        }

    @property
    def count(self) -> int:
        return len(self.changes) + sum(len(r) for r in self.relation_changes.values())

    def text(self) -> str:
        lines = [f"{self.spec}: Spark {self.from_spark} -> {self.to_spark}"]
        if not self.count:
            lines.append("  no behaviour of this spec differs")
        for r in self.changes:
            lines.append(f"  {r.topic}: {r.detail}" + (f" [{r.issue}]" if r.issue else ""))
        for name, reasons in self.relation_changes.items():
            lines.append(f"  {name}:")
            for r in reasons:
                lines.append(f"    {r.topic}: {r.detail}" + (f" [{r.issue}]" if r.issue else ""))
        return "\n".join(lines)


def _verdicts(diagnostics: Sequence[Diagnostic]) -> dict[str, str]:
    return {f"{d.code}": d.message for d in diagnostics if d.severity == "error"}


# the Spark issues behind the analysis rules that change between versions, by sjoin's code
ANALYSIS_ISSUES = {
    "E022": "SPARK-40940 (3.4: time-interval joins), SPARK-42376 (3.5: per-operator watermarks)",
    "E023": "SPARK-56384 (4.2: Update mode for inner and semi joins)",
    "E025": "SPARK-42376 (3.5: one event-time column per join input)",
}


def diff_versions(
    spec: str,
    a: Plan | None,
    a_diagnostics: Sequence[Diagnostic],
    b: Plan | None,
    b_diagnostics: Sequence[Diagnostic],
    from_spark: str,
    to_spark: str,
) -> VersionDiff:
    """What differs for one spec planned at Spark A and at Spark B, from the two plans'
    typed per-version decisions (and their analysis verdicts)."""
    changes: list[Reason] = []
    errors_a, errors_b = _verdicts(a_diagnostics), _verdicts(b_diagnostics)
    for code in sorted(set(errors_a) | set(errors_b)):
        if code in errors_a and code not in errors_b:
            changes.append(
                Reason("analysis", f"Spark {from_spark} rejects the spec ({code}: "
                       f"{errors_a[code]}); Spark {to_spark} accepts it",
                       ANALYSIS_ISSUES.get(code))
            )  # fmt: skip
        elif code in errors_b and code not in errors_a:
            changes.append(
                Reason("analysis", f"Spark {to_spark} rejects the spec ({code}: "
                       f"{errors_b[code]}); Spark {from_spark} accepts it",
                       ANALYSIS_ISSUES.get(code))
            )  # fmt: skip
    shared = sorted(set(errors_a) & set(errors_b))
    if shared:
        changes.append(
            Reason("analysis", f"both Spark {from_spark} and Spark {to_spark} reject the spec ("
                   + "; ".join(f"{c}: {errors_b[c]}" for c in shared) + ")")
        )  # fmt: skip
    if a is None or b is None:
        return VersionDiff(spec, from_spark, to_spark, tuple(changes))
    if a.ansi != b.ansi:
        changes.append(
            Reason(
                "ANSI mode",
                f"spark.sql.ansi.enabled defaults to {str(a.ansi).lower()} on {from_spark} "
                f"and {str(b.ansi).lower()} on {to_spark}: an overflow, a bad cast or a "
                "division by zero "
                + ("fails the batch instead of giving null" if b.ansi else "gives null instead "
                   "of failing the batch"),
                "SPARK-44444",
            )
        )  # fmt: skip
    changes.extend(_shared_watermark_changes(a, b, from_spark, to_spark))
    per_relation: dict[str, tuple[Reason, ...]] = {}
    for node_a in a.nodes:
        found = _version_changes(
            node_a, b.node(node_a.name), (a.spark, b.spark), (from_spark, to_spark)
        )
        if found:
            per_relation[node_a.name] = tuple(found)
    return VersionDiff(spec, from_spark, to_spark, tuple(changes), per_relation)


def _shared_watermark_changes(a: Plan, b: Plan, from_spark: str, to_spark: str) -> list[Reason]:
    """A stream read at several places of one query whose watermark nodes are one entry of
    the tracker on one version and one each on the other (``Plan.shared_watermarks``)."""
    changes: list[Reason] = []
    for name in sorted(set(a.shared_watermarks) ^ set(b.shared_watermarks)):
        one, each = (
            (to_spark, from_spark) if name in b.shared_watermarks else (from_spark, to_spark)
        )
        changes.append(
            Reason(
                "global watermark",
                f"stream {name} is read at several places: on {one} its watermark nodes count "
                f"as one in the global watermark, at the highest of them (the tracker keys a "
                f"node by its EventTimeWatermark's nodeId, which every read keeps); on {each} "
                "each counts on its own, so with the min policy the read whose filters keep "
                "the oldest rows holds the global watermark back",
                "SPARK-50046",
            )
        )
    return changes


Versions: TypeAlias = tuple[SparkVersion, SparkVersion]


@singledispatch
def _version_changes(
    node: PlanNode, other: PlanNode | None, versions: Versions, shown: tuple[str, str]
) -> list[Reason]:
    """What differs for relation ``node`` planned at Spark A and, as ``other``, at Spark B
    (``versions``, written as ``shown``): a stateful operator's typed decisions; a relation
    without state (a stream, a view, a union, a table, a stream-static join) has none."""
    return []


@_version_changes.register
def _(
    node: JoinNode, other: PlanNode | None, versions: Versions, shown: tuple[str, str]
) -> list[Reason]:
    if not isinstance(other, JoinNode):
        return []
    return _join_version_changes(node, other, *versions)


@_version_changes.register
def _(
    node: AggregateNode, other: PlanNode | None, versions: Versions, shown: tuple[str, str]
) -> list[Reason]:
    if not isinstance(other, AggregateNode | DedupNode):
        return []
    return _use_changes(node.watermarks, other.watermarks, *shown)


@_version_changes.register
def _(
    node: DedupNode, other: PlanNode | None, versions: Versions, shown: tuple[str, str]
) -> list[Reason]:
    if not isinstance(other, AggregateNode | DedupNode):
        return []
    found = _use_changes(node.watermarks, other.watermarks, *shown)
    if isinstance(other, DedupNode):
        found += _float_keys_change(node, other, *shown)
    return found


def _float_keys_text(node: DedupNode) -> str:
    if node.float_keys == "normalized":
        return "-0.0 and 0.0 are one key"
    return "-0.0 and 0.0 are two keys"


def _float_keys_change(a: DedupNode, b: DedupNode, from_spark: str, to_spark: str) -> list[Reason]:
    """A dedup's FLOAT/DOUBLE keys compared another way (``DedupNode.float_keys``)."""
    if a.float_keys == b.float_keys or a.float_keys is None or b.float_keys is None:
        return []
    return [
        Reason(
            "float keys",
            f"{_float_keys_text(a)} on {from_spark} and {_float_keys_text(b)} on {to_spark} "
            "(4.2 normalizes a dedup's floating keys as grouping and join keys are): a row "
            "dropped as a duplicate on one passes on the other",
            "SPARK-56280",
        )
    ]


def _choice(c: WatermarkChoice) -> str:
    return watermark_text(c)


def _use_changes(ua: Any, ub: Any, from_spark: str, to_spark: str) -> list[Reason]:
    out = []
    if ua.late_rows != ub.late_rows:
        out.append(
            Reason(
                "late-row watermark",
                f"late rows are dropped against {_choice(ua.late_rows)} on {from_spark} and "
                f"against {_choice(ub.late_rows)} on {to_spark}, so a row near the watermark "
                "may be joined on one and dropped as late on the other",
                "SPARK-40925",
            )
        )
    if ua.eviction != ub.eviction:
        out.append(
            Reason(
                "eviction watermark",
                f"state is evicted against {_choice(ua.eviction)} on {from_spark} and against "
                f"{_choice(ub.eviction)} on {to_spark}",
                "SPARK-42376",
            )
        )
    if ua.output != ub.output:
        names = {
            "global": "the global watermark",
            "min_of_state_and_input": "the minimum of its state and input watermarks",
            "input": "its input watermark",
        }
        out.append(
            Reason(
                "output watermark",
                f"the operator hands {names[ua.output]} to the next one on {from_spark} and "
                f"{names[ub.output]} on {to_spark}",
                "SPARK-42376",
            )
        )  # fmt: skip
    return out


def _join_version_changes(
    a: JoinNode, b: JoinNode, va: SparkVersion, vb: SparkVersion
) -> list[Reason]:
    from_spark, to_spark = str(va), str(vb)
    out = _use_changes(a.watermarks, b.watermarks, from_spark, to_spark)
    evicts = any(s.state.eviction != "never" for s in (b.left, b.right))
    if a.quirks.append_rule != b.quirks.append_rule and evicts:
        fixed, lossy = (to_spark, from_spark) if b.quirks.append_rule else (from_spark, to_spark)
        out.append(
            Reason(
                "append rule",
                f"on {lossy} a new row is not added to state when the same batch would evict "
                f"it, which loses later matches and outer rows; {fixed} always adds it",
                "SPARK-49829",
            )
        )
    if a.quirks.semi_right_first != b.quirks.semi_right_first and b.join_type == "left_semi":
        new, old = (to_spark, from_spark) if b.quirks.semi_right_first else (from_spark, to_spark)
        out.append(
            Reason(
                "LeftSemi order",
                f"{new} processes the right input before the left and removes matched left "
                f"rows at once ({old}: left first); the output is the same, the state "
                "metrics differ",
                "SPARK-55973",
            )
        )
    if a.quirks.count_all_removals != b.quirks.count_all_removals and b.kind.outer:
        new, old = (to_spark, from_spark) if b.quirks.count_all_removals else (from_spark, to_spark)
        out.append(
            Reason(
                "numRowsRemoved",
                f"on {new} numRowsRemoved also counts the preserved side's evicted rows "
                f"(the null-padded ones); on {old} it does not",
                "no Spark issue identified (first seen in 4.3.0)",
            )
        )
    for sa, sb in ((a.left, b.left), (a.right, b.right)):
        ra, rb = sa.state, sb.state
        if (ra.eviction, ra.offset_ms, ra.column) == (rb.eviction, rb.offset_ms, rb.column):
            continue
        reason, issue = _eviction_cause(a, va, vb)
        out.append(
            Reason(
                "state eviction",
                f"`{sb.alias}`'s state is {_rule_text(sa, ra)} on {from_spark} and "
                f"{_rule_text(sb, rb)} on {to_spark}" + (f": {reason}" if reason else ""),
                issue,
            )
        )
    if a.may_emit_late_rows != b.may_emit_late_rows:
        out.append(
            Reason(
                "late output",
                f"may emit rows later than the watermark: {a.may_emit_late_rows} on "
                f"{from_spark}, {b.may_emit_late_rows} on {to_spark} ({b.late_rows_reason})",
            )
        )
    return out


def _eviction_cause(
    a: JoinNode, va: SparkVersion, vb: SparkVersion
) -> tuple[str | None, str | None]:
    """Why a side's state rule differs between Spark ``va`` and ``vb``: the version changes
    that move state rules, as the two versions and the written condition tell."""
    low, high = sorted((va.minor_version, vb.minor_version))

    def crosses(major: int, minor: int) -> bool:
        return low < (major, minor) <= high

    has_between = any(not isinstance(x.this, exp.Column) for x in a.condition.find_all(exp.Between))
    if crosses(4, 0) and has_between:
        return (
            "from 4.0 Spark turns BETWEEN on an expression into a common-expression alias, "
            "which changes the bounds its range condition gives",
            "no Spark issue identified (4.0's common-expression rewrite of BETWEEN)",
        )
    if crosses(4, 2):
        return (
            "from 4.2 Spark's solver no longer collapses equal terms of a range condition "
            "(they formed an ExpressionSet up to 4.1)",
            "no Spark issue identified (StreamingJoinHelper.collectTerms)",
        )
    return None, None


def _schema_types(kinds: Sequence[SqlType]) -> str:
    """A state schema's types as Spark SQL text, ``BIGINT, DECIMAL(10, 2)``."""
    return ", ".join(map(str, kinds))
