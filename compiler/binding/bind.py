"""AST -> bound model: resolve names and aliases, type every expression, check values.

Every problem becomes a diagnostic and binding carries on: an unknown relation poisons only
the statements that use it, and an expression that failed to type gets the UNKNOWN type,
which fits anywhere, so one mistake is reported once.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, cast

from sqlglot import exp

from ..diagnostics.diagnostics import (
    Diagnostics,
    Fix,
    Related,
    closest,
    did_you_mean,
    excerpt,
    mean,
)
from ..frontend import ast, limits
from ..vocabulary import annotate, functions, javatext, settings
from ..vocabulary import types as t
from ..vocabulary.expr import copy_tree
from ..vocabulary.model import (
    DEFAULT_SPARK,
    JOIN_KINDS,
    KAFKA_RECORD_OPTIONS,
    SUPPORTED_SPARK,
    Column,
    Format,
    OutputMode,
    SparkVersion,
    valid_trigger,
)
from ..vocabulary.source import Source, Span
from ..vocabulary.types import SqlType
from .bound import (
    Aggregate,
    BoundSpec,
    Dedup,
    Input,
    Join,
    OutputItem,
    Relation,
    Setting,
    Sink,
    Stream,
    Table,
    Union,
    View,
    Watermark,
)

SOURCE_FORMATS: dict[str, tuple[tuple[str, ...], ...]] = {
    # format -> groups of options; at least one option of each group is required
    "kafka": (
        ("kafka.bootstrap.servers", "bootstrap_servers"),
        ("subscribe", "topic", "subscribePattern", "assign"),
    ),
    "json": (("path",),),
    "csv": (("path",),),
    "parquet": (("path",),),
    "orc": (("path",),),
    "delta": (("path", "table"),),
    "rate": (),
    "socket": (("host",), ("port",)),
}
# a static table's batch formats (`spark.read`), each with its path
TABLE_FORMATS: dict[str, tuple[tuple[str, ...], ...]] = {
    "parquet": (("path",),),
    "json": (("path",),),
    "csv": (("path",),),
    "orc": (("path",),),
    "delta": (("path",),),
}
SINK_FORMATS: dict[str, tuple[tuple[str, ...], ...]] = {
    "kafka": (("kafka.bootstrap.servers", "bootstrap_servers"), ("topic",)),
    "json": (("path",),),
    "csv": (("path",),),
    "parquet": (("path",),),
    "orc": (("path",),),
    "delta": (("path", "table"),),
    "console": (),
    "memory": (),
    "noop": (),
}
OUTPUT_MODES = ("append", "update", "complete")
SYMBOLS: dict[type[exp.Expression], str] = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",
}
AGGREGATES = frozenset(f.name for f in functions.FUNCTIONS.values() if f.aggregate)
# names a spec's `did you mean` hints may compare in all (Binder._suggest)
SUGGESTION_BUDGET = 200_000

# the duration units sjoin reads, spelled out, for a did-you-mean on a misspelt one
_UNIT_WORDS = ("millisecond", "milliseconds", "second", "seconds", "minute", "minutes",
               "hour", "hours", "day", "days", "week", "weeks")  # fmt: skip


def _suggest(word: str, candidates: Sequence[str]) -> str | None:
    return did_you_mean(word, candidates)


def _name_fix(node: exp.Column, name: str | None) -> Fix | None:
    """A column reference's name (after its qualifier) written as ``name``: the fix of a
    misspelt column, when the parser kept the name's own span and ``name`` needs no quotes."""
    if name is None or not name.isidentifier():
        return None
    where = annotate.name_span(node)
    if where is None:  # the name written last and unquoted: the reference's span ends with it
        whole = ast.span_of(node)
        qualifier = len(node.table) + 1 if node.table else 0
        if whole.end - whole.start != qualifier + len(node.name):
            return None
        where = Span(whole.end - len(node.name), whole.end)
    return Fix(where, name)


# The options sjoin reads itself beside the required ones (SOURCE_FORMATS, SINK_FORMATS),
# by (source or sink, format): a Kafka source's value format and record columns, a Kafka
# sink's key column
_OWN_OPTIONS: dict[tuple[str, str], tuple[str, ...]] = {
    ("source", "kafka"): ("format",),
    ("sink", "kafka"): ("key",),
}


# Spark's spellings of the options sjoin names otherwise, by (source or sink, format): one
# option to Spark's Kafka connector either way (sjoin writes `subscribe` for a source's
# `topic`), so the binder keeps sjoin's name and two spellings of one source plan alike (a
# PySpark job read back, and its .sjoin twin)
_SYNONYMS: dict[tuple[str, str], dict[str, str]] = {
    ("source", "kafka"): {"kafka.bootstrap.servers": "bootstrap_servers", "subscribe": "topic"},
    ("sink", "kafka"): {"kafka.bootstrap.servers": "bootstrap_servers"},
}


def _own_options(fmt: str, known: dict[str, tuple[tuple[str, ...], ...]], what: str) -> list[str]:
    """Every option name sjoin reads itself for ``fmt``: the required ones and its own."""
    names = [name for group in known[fmt] for name in group]
    names += _OWN_OPTIONS.get((what, fmt), ())
    if what == "source":  # E024 on any other source than Kafka, in this spelling
        names += KAFKA_RECORD_OPTIONS
    return names


def parse_timestamp(text: str) -> datetime | None:
    """An ISO-8601 / Spark timestamp literal, or None when it cannot be read."""
    candidate = text.strip().replace(" ", "T", 1)
    if candidate.endswith("Z"):
        candidate = candidate[:-1] + "+00:00"
    try:
        return datetime.fromisoformat(candidate)
    except ValueError:
        return None


class Scope:
    """The inputs visible to an expression: (side, Input) pairs, side "left"/"right" of a
    join or "input" of an aggregate."""

    def __init__(self, inputs: Sequence[tuple[str, Input]]) -> None:
        self.inputs = list(inputs)


class Binder:
    def __init__(
        self, source: Source, diags: Diagnostics, spark: SparkVersion | None = None
    ) -> None:
        self.source = source
        self.diags = diags
        self.relations: dict[str, Relation] = {}
        self.poisoned: set[str] = set()  # relations whose definition failed: no cascade
        self.broken_watermarks: set[str] = set()  # streams whose watermark failed to bind
        self.override = spark  # the version planned for, over the spec's `spark` statement
        # the version every statement is bound for, known before the first one (`bind`)
        self.spark: SparkVersion = spark or _default_spark()
        # spark.sql.ansi.enabled as planned (`set ansi_enabled`, else the version's), read
        # by every rule that depends on it (`bind`)
        self.ansi: bool = self.spark.major >= 4
        self.spark_span: Span | None = None
        self.settings: dict[str, Setting] = {}
        self.sinks: list[Sink] = []
        self.sunk: set[str] = set()  # relations with a sink
        self.columns = limits.ColumnBudget(diags)
        self.suggestions = SUGGESTION_BUDGET
        # the message and help of E019 for an aggregate function where none may stand; an
        # aggregate's WHERE says it as Spark's analyzer does (``_aggregate_where``)
        self.no_aggregate: tuple[str, str] | None = None

    # ------------------------------------------------------------------ statements
    def bind(self, spec: ast.SpecFile) -> BoundSpec:
        declared = {getattr(stmt, "name", None) for stmt in spec.statements}
        defined = {name.text for name in declared if name is not None and hasattr(name, "text")}
        self.poisoned.update(name for name in spec.broken if name not in defined)
        if self.override is None:
            self.spark = _declared_spark(spec) or self.spark
        self.ansi = _declared_ansi(spec, self.spark)
        for stmt in spec.statements:
            handler: Callable[[Any], None] = getattr(self, f"_bind_{type(stmt).__name__}")
            handler(stmt)
            if self.columns.refused:
                break  # E031: the spec is refused, nothing after it is checked
        return BoundSpec(
            self.source,
            self.spark,
            self.spark_span,
            dict(self.settings),
            tuple(self.relations.values()),
            tuple(self.sinks),
            frozenset(self.poisoned),
            frozenset(self.broken_watermarks),
            spec.watermark_per_read,
        )

    def _suggest(self, word: str, candidates: Callable[[], Sequence[str]]) -> str | None:
        """``did you mean ...?`` among ``candidates()``, while the spec's budget of names
        compared lasts: a large spec with thousands of unknown names, each compared with
        thousands of columns, would otherwise take minutes for its hints alone."""
        if self.suggestions <= 0:
            return None
        return mean(self._closest(word, candidates))

    def _closest(self, word: str, candidates: Callable[[], Sequence[str]]) -> str | None:
        """The candidate ``_suggest`` names (for the diagnostic's ``Fix``), or None."""
        if self.suggestions <= 0:
            return None
        names = candidates()
        self.suggestions -= len(names)
        return closest(word, names)

    def _bind_SparkDecl(self, stmt: ast.SparkDecl) -> None:
        if self.spark_span is not None:
            self.diags.add(
                "E002",
                "the target Spark version is set twice",
                stmt.span,
                "second `spark` statement",
                "keep one `spark` statement",
            )
            return
        version = SparkVersion.parse(stmt.version)
        self.spark_span = stmt.span
        supported = ", ".join(f"{a}.{b}" for a, b in SUPPORTED_SPARK)
        if version is None or version.minor_version not in SUPPORTED_SPARK:
            self.diags.add(
                "E016",
                f"unsupported Spark version `{excerpt(stmt.version)}`",
                stmt.span,
                "not a supported version",
                f"supported versions: {supported}",
            )

    def _bind_SetDecl(self, stmt: ast.SetDecl) -> None:
        name = stmt.name.text.lower()
        spec = settings.SETTINGS.get(name)
        if spec is None:
            close = closest(name, list(settings.SETTINGS))
            hint = mean(close) or ("known settings: " + ", ".join(sorted(settings.SETTINGS)))
            self.diags.add(
                "E015",
                f"unknown setting `{stmt.name.text}`",
                stmt.name.span,
                "unknown setting",
                hint,
                Fix.replace(stmt.name.span, close),
            )
            return
        if name in self.settings:
            self.diags.add(
                "E002",
                f"setting `{name}` is set twice",
                stmt.span,
                "second assignment",
                "keep one `set` per setting",
                related=(Related(self.settings[name].span, "first set here"),),
            )
            return
        value = _setting_value(spec, stmt.value)
        if value is None:
            self.diags.add(
                "E016",
                f"invalid value `{excerpt(stmt.value.text)}` for `{name}`",
                stmt.value.span,
                "not accepted here",
                _setting_help(spec),
            )
            return
        self.settings[name] = Setting(name, value, stmt.span)

    def _define(self, name: ast.Ident) -> bool:
        if name.text in self.relations or name.text in self.poisoned:
            self.diags.add(
                "E002",
                f"relation `{name.text}` is already defined",
                name.span,
                "defined again here",
                "give each stream, join and aggregate its own name",
                related=tuple(
                    Related(first.name_span, f"`{name.text}` is first defined here")
                    for first in [self.relations.get(name.text)]
                    if first is not None
                ),
            )
            return False
        return True

    def _bind_StreamDecl(self, stmt: ast.StreamDecl) -> None:
        if not self._define(stmt.name):
            return
        declared_columns = self._declared_columns(stmt)
        if declared_columns is None:
            return
        columns, ok = declared_columns
        watermark = None
        if stmt.watermark is not None:
            watermark = self._watermark(stmt, columns)
            if watermark is None:  # reported: what follows from its absence is not
                self.broken_watermarks.add(stmt.name.text)
            if watermark is not None:
                columns = [
                    Column(c.name, c.type, c.name == watermark.column, c.origin) for c in columns
                ]
        source = None
        if stmt.source is not None:
            source = self._format(stmt.source, SOURCE_FORMATS, "source")
            if source is not None:
                source = self._source_options(stmt, source, columns)
        if not ok and not columns:
            self.poisoned.add(stmt.name.text)
            return
        self.relations[stmt.name.text] = Stream(
            stmt.name.text, tuple(columns), watermark, source, stmt.span, stmt.name.span
        )

    def _declared_columns(
        self, stmt: ast.StreamDecl | ast.TableDecl
    ) -> tuple[list[Column], bool] | None:
        """The columns a `stream` or `table` statement declares, each name once and each type
        known (E002, E007), and whether all were; None when they pass the spec's column limit
        (E031, the spec refused)."""
        room = self.columns.room
        if len(stmt.columns) > room:
            self.columns.refuse(
                stmt.columns[room].name.span,
                f"column {limits.MAX_COLUMNS + 1:,} of the spec",
                "split the spec into several files, one per pipeline",
            )
            return None
        self.columns.take(len(stmt.columns))
        columns: list[Column] = []
        declared: dict[str, Span] = {}
        ok = True
        for col in stmt.columns:
            if col.name.text in declared:
                self.diags.add(
                    "E002",
                    f"column `{col.name.text}` is declared twice in `{stmt.name.text}`",
                    col.name.span,
                    "declared again here",
                    related=(Related(declared[col.name.text], "first declared here"),),
                )
                ok = False
                continue
            declared[col.name.text] = col.name.span
            sql_type = t.lookup_type(col.type.name, col.type.params)
            if sql_type is None:
                close = closest(col.type.name.lower(), list(t.TYPE_NAMES))
                self.diags.add(
                    "E007",
                    f"unknown type `{col.type.name}` for column `{col.name.text}`",
                    col.type.span,
                    "unknown type",
                    mean(close) or "use a Spark SQL type such as BIGINT, STRING, TIMESTAMP",
                    # a type with parameters keeps them: only a bare name is replaced whole
                    None if col.type.params else Fix.replace(col.type.span, close),
                )
                sql_type = t.UNKNOWN
            columns.append(
                Column(col.name.text, sql_type, False, f"{stmt.name.text}.{col.name.text}")
            )
        return columns, ok

    def _bind_TableDecl(self, stmt: ast.TableDecl) -> None:
        """A static table (``tables.py``): its columns, and its batch source, one of
        ``TABLE_FORMATS`` with its path; never a watermark."""
        if not self._define(stmt.name):
            return
        declared_columns = self._declared_columns(stmt)
        if declared_columns is None:
            return
        columns, ok = declared_columns
        source = self._format(stmt.source, TABLE_FORMATS, "table")
        if (not ok and not columns) or source is None:
            self.poisoned.add(stmt.name.text)
            return
        self.relations[stmt.name.text] = Table(
            stmt.name.text, tuple(columns), source, stmt.span, stmt.name.span
        )

    def _batch_only(self, name: ast.Ident, what: str) -> None:
        """E038: a static table is only ever one side of a join with a streaming relation."""
        self.diags.add(
            "E038",
            f"{what}: `{name.text}` is a static table, read in batch; a streaming query reads "
            "it only as one side of a join with a stream",
            name.span,
            "a static table",
            "join the table with a stream (a stream-static join), or declare it as a `stream`",
        )

    def _source_options(
        self, stmt: ast.StreamDecl, source: Format, columns: list[Column]
    ) -> Format:
        """Check the options sjoin reads itself: a Kafka source's value ``format`` and the
        columns it reads from the record (``timestamp_column``, ``key_column``: a column of
        the stream, of the field's type); elsewhere those are errors.  A
        wrong option is left out of the source, so what follows never reads it."""
        assert stmt.source is not None
        decls = {o.key.text: o for o in stmt.source.options}
        kafka = source.format == "kafka"
        wrong: set[str] = set()
        payload = source.option("format")
        if kafka and payload not in (None, "json", "csv"):
            self.diags.add(
                "E024",
                f"a Kafka source's values are read as `json` or `csv`, not `{payload}`",
                decls["format"].value.span,
                "unknown value format",
                _suggest(str(payload).lower(), ["json", "csv"])
                or "write format = 'json' (the default) or format = 'csv'",
            )
        types = {c.name: c.type for c in columns}
        wanted = {"timestamp": t.TIMESTAMP, "key": t.STRING}
        for key, field in KAFKA_RECORD_OPTIONS.items():
            given = decls.get(key)
            if given is None:
                continue
            name = given.value.text
            if not kafka:
                self.diags.add(
                    "E024",
                    f"`{key}` reads a column from a Kafka record's {field}; a "
                    f"`{source.format}` source has no Kafka records",
                    given.key.span,
                    "only for `from kafka`",
                    "remove the option, or read the stream `from kafka`",
                )
            elif name not in types:
                self.diags.add(
                    "E024",
                    f"`{key}` names `{name}`, which is not a column of `{stmt.name.text}`"
                    if name
                    else f"`{key}` is empty: it names a column of `{stmt.name.text}`",
                    given.value.span,
                    "no such column",
                    self._suggest(name, lambda: list(types))
                    or ("columns: " + ", ".join(types) if types else None),
                )
            elif types[name] not in (wanted[field], t.UNKNOWN):
                self.diags.add(
                    "E024",
                    f"`{key}` names `{name}`, which is {types[name]}: the record's {field} "
                    f"is read as {wanted[field]}",
                    given.value.span,
                    f"declared as {types[name]}",
                    f"declare `{name}` as {wanted[field]}"
                    + (", and convert it in the join" if field == "key" else ""),
                )
            else:  # the fields' types differ, so no column can take both
                continue
            wrong.add(key)
        if not wrong:
            return source
        return Format(
            source.format, tuple((k, v) for k, v in source.options if k not in wrong), source.span
        )

    def _watermark(self, stmt: ast.StreamDecl, columns: list[Column]) -> Watermark | None:
        decl = stmt.watermark
        assert decl is not None
        delay = self._duration(decl.delay)
        at = self._watermark_column(
            decl,
            columns,
            stmt.name.text,
            lambda col: f"declared as {col.type}",
            "declare the event-time column as TIMESTAMP, or convert it with "
            "timestamp_millis()/timestamp_seconds() before the stream",
        )
        if at is None or delay is None:
            return None
        return Watermark(columns[at].name, delay, decl.span)

    def _watermark_column(
        self,
        decl: ast.WatermarkDecl,
        columns: Sequence[Column],
        owner: str,
        label: Callable[[Column], str],
        help: str,
    ) -> int | None:
        """The position of a watermark's column among ``columns`` (those of ``owner``), or
        None after E004 (no such column) or E010 (not TIMESTAMP; ``label`` and ``help`` say
        where it is declared and what to do)."""
        at = next((i for i, c in enumerate(columns) if c.name == decl.column.text), None)
        if at is None:
            self.diags.add(
                "E004",
                f"watermark column `{decl.column.text}` is not a column of `{owner}`",
                decl.column.span,
                "unknown column",
                self._suggest(decl.column.text, lambda: [c.name for c in columns]),
            )
            return None
        col = columns[at]
        if col.type not in (t.TIMESTAMP, t.UNKNOWN):
            self.diags.add(
                "E010",
                f"watermark column `{col.name}` is {col.type}, not TIMESTAMP",
                decl.column.span,
                label(col),
                help,
            )
            return None
        return at

    def _duration(self, dur: ast.Duration) -> int | None:
        unit = dur.unit.text.lower()
        if unit in t.VARIABLE_UNITS:
            self.diags.add(
                "E013",
                f"a duration in {unit.rstrip('s')}s has no fixed length",
                dur.unit.span,
                "months and years vary in length",
                "write it in days or weeks, e.g. `30 days`",
            )
            return None
        if unit not in t.MS_PER_UNIT:
            self.diags.add(
                "E014",
                f"unknown duration unit `{dur.unit.text}`",
                dur.unit.span,
                "unknown unit",
                _suggest(unit, _UNIT_WORDS)
                or "use milliseconds, seconds, minutes, hours, days or weeks",
            )
            return None
        ms = t.duration_ms(dur.amount, unit)
        if ms is None:
            self.diags.add(
                "E014",
                f"duration `{excerpt(dur.amount)} {dur.unit.text}` is out of range",
                dur.span,
                "too long",
                f"a duration has at most {t.MAX_DURATION_DIGITS} digits",
            )
        return ms

    def _format(
        self, decl: ast.FormatDecl, known: dict[str, tuple[tuple[str, ...], ...]], what: str
    ) -> Format | None:
        fmt = decl.format.text.lower()
        if fmt not in known:
            self.diags.add(
                "E024",
                f"unknown {what} format `{decl.format.text}`",
                decl.format.span,
                f"not a {what} format",
                _suggest(fmt, list(known)) or ("known formats: " + ", ".join(known)),
            )
            return None
        # the option names sjoin reads itself, matched exactly; Spark matches every option
        # name in any case (a CaseInsensitiveMap), so another spelling of one of them would
        # reach Spark as an option of its own, and be ignored
        own = {name.lower(): name for name in _own_options(fmt, known, what)}
        synonyms = _SYNONYMS.get((what, fmt), {})
        options: list[tuple[str, str]] = []
        seen: dict[str, ast.OptionDecl] = {}
        answered: set[str] = set()  # own names misspelt, reported: no `needs` after them
        for opt in decl.options:
            key = opt.key.text
            canonical = synonyms.get(key, key)
            earlier = seen.get(key.lower()) or seen.get(canonical.lower())
            if earlier is not None:
                if earlier.key.text == key:
                    again = f"option `{key}` is given twice"
                elif earlier.key.text.lower() == key.lower():
                    again = (
                        f"option `{key}` is given twice: Spark reads option names in any "
                        f"case, so it is `{earlier.key.text}` again, and the last one would win"
                    )
                else:
                    again = (
                        f"option `{key}` is given twice: `{earlier.key.text}` and `{key}` "
                        f"are one option of a `{fmt}` {what}"
                    )
                first = (Related(earlier.key.span, "first given here"),)
                self.diags.add("E002", again, opt.key.span, "given again here",
                               "keep one of them", related=first)  # fmt: skip
                continue
            seen[key.lower()] = seen[canonical.lower()] = opt
            if canonical != key:
                options.append((canonical, opt.value.text))
                continue
            close = own.get(key.lower())
            if close is not None and close != key:
                self.diags.add(
                    "E024",
                    f"`{key}` is not an option of a `{fmt}` {what}",
                    opt.key.span,
                    "unknown option",
                    f"did you mean `{close}`? sjoin reads its own options only as written here",
                )
                answered.add(close)
                continue
            options.append((key, opt.value.text))
        keys = {k for k, _ in options}
        for group in known[fmt]:
            if keys.intersection(group) or answered.intersection(group):
                continue
            # an option that is a misspelling of the one needed, or the statement
            near = [
                (seen[k.lower()], close[0])
                for k, _ in options
                if k.lower() not in own
                for close in [difflib.get_close_matches(k, group, n=1, cutoff=0.75)]
                if close
            ]
            if near:
                opt, name = near[0]
                self.diags.add(
                    "E024",
                    f"`{opt.key.text}` is not an option of a `{fmt}` {what}",
                    opt.key.span,
                    "unknown option",
                    f"did you mean `{name}`? a `{fmt}` {what} needs it",
                )
                continue
            self.diags.add(
                "E024",
                f"{what} `{fmt}` needs the option `{group[0]}`",
                decl.span,
                f"no `{group[0]}` here",
                f"add `{group[0]} = '...'`",
            )
        return Format(fmt, tuple(options), decl.span)

    # ------------------------------------------------------------------ inputs
    def _input(self, ref: ast.RelRef) -> Input | None:
        rel = self.relations.get(ref.name.text)
        if rel is None:
            if ref.name.text not in self.poisoned:
                close = self._closest(ref.name.text, lambda: list(self.relations))
                self.diags.add(
                    "E003",
                    f"unknown relation `{ref.name.text}`",
                    ref.name.span,
                    "not defined before this statement",
                    mean(close) or "define the stream or join before using it",
                    Fix.replace(ref.name.span, close),
                )
            return None
        if ref.watermark is not None:
            return self._rewatermarked(ref, ref.watermark, rel)
        return Input(
            rel.name,
            ref.alias_text,
            rel.columns,
            ref.span,
            time_beside_window=ref.time_beside_window,
        )

    def _rewatermarked(self, ref: ast.RelRef, decl: ast.WatermarkDecl, rel: Relation) -> Input:
        """``j AS a watermark t delay D``: Spark's ``withWatermark`` on a join's or
        aggregate's output.  Its EventTimeWatermark marks ``t`` with the new delay and takes
        the mark off every other column (``EventTimeWatermark.output``); whether Spark runs it
        is the planner's question (hazards: E034).  An input bound without its watermark
        when the clause is wrong."""
        plain = Input(rel.name, ref.alias_text, rel.columns, ref.span)
        if isinstance(rel, Table):
            self._batch_only(ref.name, "a watermark on a read of a table")
            return plain
        if isinstance(rel, Stream):
            self.diags.add(
                "E034",
                f"a watermark on a read of the stream `{rel.name}`",
                decl.span,
                "on a stream read",
                f"declare a stream's watermark in its `stream` statement: `stream {rel.name} "
                "(...) watermark col delay ...`; a `watermark` after a relation's name is for "
                "a join's or aggregate's output",
            )
            return plain
        columns = rel.columns
        delay = self._duration(decl.delay)
        at = self._watermark_column(
            decl,
            columns,
            rel.name,
            lambda col: f"{col.type} in `{rel.name}`",
            "watermark a TIMESTAMP column of the relation",
        )
        if at is None or delay is None:
            return plain
        col = columns[at]
        marked = tuple(
            replace(c, event_time=i == at) if c.event_time or i == at else c
            for i, c in enumerate(columns)
        )
        mark = Watermark(col.name, delay, decl.span)
        return Input(rel.name, ref.alias_text, marked, ref.span, mark)

    def _bind_JoinDecl(self, stmt: ast.JoinDecl) -> None:
        defined = self._define(stmt.name)
        left, right = self._input(stmt.left), self._input(stmt.right)
        if left is not None and right is not None and left.alias == right.alias:
            self.diags.add(
                "E002",
                f"both sides of join `{stmt.name.text}` are called `{left.alias}`",
                stmt.right.span,
                "same alias as the left side",
                f"give one side an alias: `{stmt.right.name.text} AS r`",
            )
            right = None
        if (
            left is not None
            and right is not None
            and isinstance(self.relations.get(left.relation), Table)
            and isinstance(self.relations.get(right.relation), Table)
        ):
            self._batch_only(stmt.right.name, "a join of two tables")
            right = None
        if left is None or right is None or not defined:
            if defined:
                self.poisoned.add(stmt.name.text)
            return
        scope = Scope([("left", left), ("right", right)])
        inputs = {"left": left, "right": right}
        kept = [(side, inputs[side]) for side in JOIN_KINDS[stmt.how].output_sides]
        if not self._room_for(stmt.select, kept, stmt.name.span):
            return
        condition = self.expression(stmt.on, scope, allow_aggregates=False)
        ctype = annotate.sql_type(condition)
        if ctype not in (t.BOOLEAN, t.NULL, t.UNKNOWN):
            self.diags.add(
                "E012",
                f"the join condition is {ctype}, not BOOLEAN",
                ast.span_of(stmt.on),
                "not a condition",
            )
        output = self._join_output(stmt, left, right, scope)
        where = None
        if stmt.where is not None:
            # WHERE filters the join's output: only the columns of its output sides
            where = self._condition(stmt.where, Scope(kept), "the WHERE condition")
        self.relations[stmt.name.text] = Join(
            stmt.name.text,
            stmt.how,
            left,
            right,
            condition,
            tuple(output),
            stmt.span,
            stmt.name.span,
            stmt.how_span,
            where,
            *self._mode(stmt.mode),
        )

    def _condition(self, node: exp.Expression, scope: Scope, what: str) -> exp.Expression:
        """A WHERE condition bound in ``scope``: E012 unless it is BOOLEAN."""
        bound = self.expression(node, scope, allow_aggregates=False)
        ctype = annotate.sql_type(bound)
        if ctype not in (t.BOOLEAN, t.NULL, t.UNKNOWN):
            self.diags.add(
                "E012", f"{what} is {ctype}, not BOOLEAN", ast.span_of(node), "not a condition"
            )
        return bound

    def _bind_ViewDecl(self, stmt: ast.ViewDecl) -> None:
        defined = self._define(stmt.name)
        inp = self._input(stmt.input)
        if inp is None or not defined:
            if defined:
                self.poisoned.add(stmt.name.text)
            return
        sides = [("input", inp)]
        scope = Scope(sides)
        if not self._room_for(stmt.select, sides, stmt.name.span):
            return
        where = None
        if stmt.where is not None:
            where = self._condition(stmt.where, scope, "the WHERE condition")
        items: list[OutputItem] = []
        for item in stmt.select:
            items.extend(self._select_item(item, scope, sides, allow_aggregates=False))
        self.relations[stmt.name.text] = View(
            stmt.name.text, inp, where, tuple(self._unique(items)), stmt.span, stmt.name.span
        )

    def _room_for(
        self,
        select: Sequence[ast.SelectItem] | None,
        sides: Sequence[tuple[str, Input]],
        name_span: Span,
    ) -> bool:
        """Whether the output columns of a relation (its SELECT, or all columns of
        ``sides``) fit in the spec's column limit, counted before they are built; E031
        where they pass it otherwise."""
        room = self.columns.room
        if select is None:
            width = sum(len(inp.columns) for _, inp in sides)
            if width > room:
                self.columns.refuse(
                    name_span,
                    f"keeps all {width:,} columns of its sides",
                    "keep only the columns you need with SELECT",
                )
                return False
            self.columns.take(width)
            return True
        width = 0
        for item in select:
            width += _star_width(item.expr, sides) if _is_star(item.expr) else 1
            if width > room:
                self.columns.refuse(
                    item.span,
                    f"passes {limits.MAX_COLUMNS:,} columns",
                    "split the spec into several files, one per pipeline; select columns "
                    "by name instead of with *",
                )
                return False
        self.columns.take(width)
        return True

    def _join_output(
        self, stmt: ast.JoinDecl, left: Input, right: Input, scope: Scope
    ) -> list[OutputItem]:
        inputs = {"left": left, "right": right}
        sides = [(side, inputs[side]) for side in JOIN_KINDS[stmt.how].output_sides]
        if stmt.select is None:
            return _default_output(sides, stmt.span)
        items: list[OutputItem] = []
        for item in stmt.select:
            items.extend(self._select_item(item, scope, sides, allow_aggregates=False))
        return self._unique(items)

    def _select_item(
        self,
        item: ast.SelectItem,
        scope: Scope,
        sides: Sequence[tuple[str, Input]],
        allow_aggregates: bool,
    ) -> list[OutputItem]:
        node = item.expr
        if _is_star(node):
            return self._star(node, item, sides)
        bound = self.expression(node, scope, allow_aggregates=allow_aggregates)
        if item.alias is not None:
            name = item.alias.text
        elif isinstance(bound, exp.Column):
            name = bound.name
        else:
            self.diags.add(
                "E019",
                "this select item needs a name",
                item.span,
                "no name",
                f"add `AS name` after `{self.source.snippet(item.span)}`",
            )
            return []
        return [
            OutputItem(
                name,
                bound,
                annotate.sql_type(bound) or t.UNKNOWN,
                _carries_event_time(bound),
                item.span,
            )
        ]

    def _star(
        self, node: exp.Expression, item: ast.SelectItem, sides: Sequence[tuple[str, Input]]
    ) -> list[OutputItem]:
        qualifier = node.table if isinstance(node, exp.Column) else ""
        chosen = [
            (side, inp)
            for side, inp in sides
            if not qualifier or qualifier in (inp.alias, inp.relation)
        ]
        if not chosen:
            self.diags.add(
                "E005",
                f"unknown alias `{qualifier}`",
                item.span,
                "not an input here",
                _suggest(qualifier, [inp.alias for _, inp in sides]),
            )
            return []
        out = []
        for side, inp in chosen:
            for col in inp.columns:
                ref = _column_ref(inp.alias, col, side)
                out.append(OutputItem(col.name, ref, col.type, col.event_time, item.span))
        return out

    def _unique(self, items: list[OutputItem]) -> list[OutputItem]:
        seen: dict[str, OutputItem] = {}
        for item in items:
            if item.name in seen:
                self.diags.add(
                    "E002",
                    f"output column `{item.name}` is defined twice",
                    item.span,
                    "same name as an earlier item",
                    "rename one of them with `AS`",
                    related=(Related(seen[item.name].span, "first defined here"),),
                )
                continue
            seen[item.name] = item
        return list(seen.values())

    def _bind_AggregateDecl(self, stmt: ast.AggregateDecl) -> None:
        defined = self._define(stmt.name)
        inp = self._input(stmt.input)
        if inp is not None and isinstance(self.relations.get(inp.relation), Table):
            self._batch_only(stmt.input.name, "an aggregate of a table")
            inp = None
        if inp is None or not defined:
            if defined:
                self.poisoned.add(stmt.name.text)
            return
        scope = Scope([("input", inp)])
        if not self._room_for(stmt.select, [("input", inp)], stmt.name.span):
            return
        where = None if stmt.where is None else self._aggregate_where(stmt.where, scope)
        keys = tuple(self.expression(g, scope, allow_aggregates=False) for g in stmt.group_by)
        items: list[OutputItem] = []
        for item in stmt.select:
            for out in self._select_item(item, scope, [("input", inp)], allow_aggregates=True):
                if _grouped(out.expr, keys):
                    items.append(out)
                else:
                    self.diags.add(
                        "E019",
                        f"`{self.source.snippet(out.span)}` is neither a "
                        "grouping key nor an aggregate",
                        out.span,
                        "not grouped",
                        "add it to GROUP BY or wrap it in an aggregate such as max()",
                    )
        mode, mode_span = self._mode(stmt.mode)
        self.relations[stmt.name.text] = Aggregate(
            stmt.name.text,
            inp,
            keys,
            tuple(self._unique(items)),
            mode,
            mode_span,
            stmt.span,
            stmt.name.span,
            where,
        )

    def _mode(self, written: ast.Ident | None) -> tuple[OutputMode, Span | None]:
        """An aggregate's or a join's ``OUTPUT MODE``: append when not written; E016 for
        an unknown mode."""
        if written is None:
            return "append", None
        text = written.text.lower()
        if text in OUTPUT_MODES:
            return cast(OutputMode, text), written.span
        self.diags.add(
            "E016",
            f"unknown output mode `{written.text}`",
            written.span,
            "not an output mode",
            "use append, update or complete",
        )
        return "append", written.span

    def _aggregate_where(self, node: exp.Expression, scope: Scope) -> exp.Expression:
        """An aggregate's WHERE, over its input's columns: a filter of the rows before they
        are grouped (Spark's Filter below the Aggregate), BOOLEAN (E012), without aggregate
        functions (E019, as Spark's analyzer refuses them: INVALID_WHERE_CONDITION)."""
        self.no_aggregate = (
            "aggregate `{name}` in the WHERE of an aggregate: Spark refuses it "
            "(INVALID_WHERE_CONDITION: avoid aggregate functions in the WHERE clause)",
            "WHERE filters the input rows before they are grouped; to filter the groups by "
            "an aggregate, read the aggregate in a view: `view v = SELECT * FROM a WHERE "
            "n > 0`",
        )
        try:
            return self._condition(node, scope, "the WHERE condition")
        finally:
            self.no_aggregate = None

    def _bind_DedupDecl(self, stmt: ast.DedupDecl) -> None:
        defined = self._define(stmt.name)
        inp = self._input(stmt.input)
        if inp is None or not defined:
            if defined:
                self.poisoned.add(stmt.name.text)
            return
        keys: dict[str, Span] = {}
        for key in stmt.keys:
            if inp.column(key.text) is None:
                self.diags.add(
                    "E004",
                    f"`{inp.relation}` has no column `{key.text}`",
                    key.span,
                    "unknown column",
                    self._suggest(key.text, lambda: [c.name for c in inp.columns]),
                )
                self.poisoned.add(stmt.name.text)
                return
            keys.setdefault(key.text, key.span)  # Spark's dropDuplicates takes each name once
        self.relations[stmt.name.text] = Dedup(
            stmt.name.text,
            inp,
            tuple(keys),
            tuple(keys.values()),
            stmt.within,
            stmt.span,
            stmt.name.span,
        )

    def _bind_UnionDecl(self, stmt: ast.UnionDecl) -> None:
        """``union NAME = A UNION ALL B ...``: every input defined, and each with the first
        input's column names and types, position by position (docs/language.md; E035 with
        what Spark would do instead).  The output is the first input's columns, with its
        event-time marks only (Spark's ``Union.mergeChildOutputs``)."""
        defined = self._define(stmt.name)
        found: list[Relation] = []
        missing = False
        for ident in stmt.inputs:
            rel = self.relations.get(ident.text)
            if rel is None:
                missing = True
                if ident.text not in self.poisoned:
                    close = self._closest(ident.text, lambda: list(self.relations))
                    self.diags.add(
                        "E003",
                        f"unknown relation `{ident.text}`",
                        ident.span,
                        "not defined before this statement",
                        mean(close) or "define the stream or join before using it",
                        Fix.replace(ident.span, close),
                    )
                continue
            found.append(rel)
        if missing or not defined:
            if defined:
                self.poisoned.add(stmt.name.text)
            return
        first = found[0]
        matched = True
        for number, (ident, rel) in enumerate(zip(stmt.inputs[1:], found[1:], strict=True), 2):
            matched = self._union_input(stmt.inputs[0].text, first, ident, rel, number) and matched
        if not matched:
            self.poisoned.add(stmt.name.text)
            return
        self.relations[stmt.name.text] = Union(
            stmt.name.text,
            tuple(r.name for r in found),
            tuple(replace(c, origin=c.origin or f"{first.name}.{c.name}") for c in first.columns),
            stmt.span,
            stmt.name.span,
            tuple(i.span for i in stmt.inputs),
        )

    def _union_input(
        self, first_name: str, first: Relation, ident: ast.Ident, rel: Relation, number: int
    ) -> bool:
        """Whether input ``number`` (2, 3, ...) of a union has the first input's columns:
        E035 at its name for the first difference."""
        ordinal = _ordinal(number)
        if len(rel.columns) != len(first.columns):
            self.diags.add(
                "E035",
                f"the {ordinal} input of the union, `{rel.name}`, has {len(rel.columns)} "
                f"columns and the first, `{first_name}`, has {len(first.columns)}",
                ident.span,
                f"{len(rel.columns)} columns",
                "a union's inputs have the same columns; Spark refuses this too "
                "(NUM_COLUMNS_MISMATCH: UNION can only be performed on inputs with the same "
                "number of columns)",
            )
            return False
        for position, (mine, theirs) in enumerate(zip(rel.columns, first.columns, strict=True), 1):
            if mine.name != theirs.name:
                self.diags.add(
                    "E035",
                    f"column {position} of the union's {ordinal} input `{rel.name}` is "
                    f"`{mine.name}`, of the first input `{first_name}` `{theirs.name}`",
                    ident.span,
                    "another column name",
                    "a union's inputs have the same column names in the same order: Spark's "
                    "UNION ALL matches columns by position and names them after the first "
                    f"input, so `{mine.name}` would be read as `{theirs.name}`",
                )
                return False
            if mine.type != theirs.type:
                self.diags.add(
                    "E035",
                    f"column `{mine.name}` of the union's {ordinal} input `{rel.name}` is "
                    f"{mine.type}, of the first input `{first_name}` {theirs.type}",
                    ident.span,
                    "another column type",
                    "a union's inputs have the same column types: declare both with one type "
                    "(Spark would cast both to a common type where one exists, e.g. INT and "
                    "BIGINT to BIGINT, or with ANSI a STRING to BIGINT, which fails on a value "
                    "that does not cast; it refuses the rest with INCOMPATIBLE_COLUMN_TYPE)",
                )
                return False
        return True

    def _bind_SinkDecl(self, stmt: ast.SinkDecl) -> None:
        name = stmt.relation.text
        if name not in self.relations:
            if name not in self.poisoned:
                self.diags.add(
                    "E003",
                    f"unknown relation `{name}`",
                    stmt.relation.span,
                    "nothing to write",
                    mean(close := self._closest(name, lambda: list(self.relations))),
                    Fix.replace(stmt.relation.span, close),
                )
            return
        if isinstance(self.relations[name], Table):
            self._batch_only(stmt.relation, "a sink of a table")
            return
        if name in self.sunk:
            self.diags.add(
                "E024",
                f"relation `{name}` already has a sink",
                stmt.span,
                "second sink",
                "write each relation to one sink",
            )
            return
        target = self._format(stmt.target, SINK_FORMATS, "sink")
        if target is None:
            return
        for opt in stmt.target.options:
            if opt.key.text.lower() in KAFKA_RECORD_OPTIONS:
                kafka = target.format == "kafka"
                self.diags.add(
                    "E024",
                    f"`{opt.key.text}` is an option of a Kafka source, not of a "
                    f"`{target.format}` sink",
                    opt.key.span,
                    "source option",
                    (
                        "write key = 'COLUMN' for the record key"
                        if kafka and "key" in opt.key.text.lower()
                        else "Spark's Kafka sink stamps each record with the time it is "
                        "written; remove the option"
                        if kafka
                        else "remove the option"
                    ),
                )
                return
        key = target.option("key")
        names = [c.name for c in self.relations[name].columns]
        if target.format == "kafka" and key is not None and key not in names:
            opt = next(o for o in stmt.target.options if o.key.text == "key")
            self.diags.add(
                "E024",
                f"the Kafka sink's key `{key}` is not a column of `{name}`",
                opt.value.span,
                "no such column",
                _suggest(key, names) or ("columns: " + ", ".join(names)),
            )
            return
        checkpoint = stmt.checkpoint.text if stmt.checkpoint is not None else None
        self.sinks.append(Sink(name, target, checkpoint, stmt.span))
        self.sunk.add(name)

    # ------------------------------------------------------------------ expressions
    def expression(
        self, node: exp.Expression, scope: Scope, allow_aggregates: bool
    ) -> exp.Expression:
        """A typed copy of ``node``: columns qualified and annotated, ``meta['type']`` set."""
        bound = copy_tree(node)
        self._type(bound, scope, allow_aggregates)
        return bound

    def _type(self, node: exp.Expression, scope: Scope, allow_aggregates: bool) -> SqlType:
        rule = _RULES.get(type(node))
        if rule is None:  # pragma: no cover - the parser builds only nodes with rules
            raise TypeError(f"binder: no typing rule for {type(node).__name__}")
        result = rule(self, node, scope, allow_aggregates)
        annotate.set_type(node, result)
        return result

    def _kids(self, node: exp.Expression, scope: Scope, agg: bool) -> list[SqlType]:
        return [self._type(k, scope, agg) for k in node.iter_expressions()]

    def _error(
        self,
        code: str,
        message: str,
        node: exp.Expression,
        label: str = "",
        help: str | None = None,
        fix: Fix | None = None,
    ) -> SqlType:
        self.diags.add(code, message, ast.span_of(node), label, help, fix)
        return t.UNKNOWN

    def _column(self, node: exp.Column, scope: Scope, agg: bool) -> SqlType:
        name, qualifier = node.name, node.table
        found: list[tuple[str, Input, Column]] = []
        if qualifier:
            matching = [(s, i) for s, i in scope.inputs if qualifier in (i.alias, i.relation)]
            if not matching:
                return self._error(
                    "E005",
                    f"unknown alias `{qualifier}`",
                    node,
                    "unknown alias",
                    _suggest(qualifier, [i.alias for _, i in scope.inputs])
                    or "aliases here: " + ", ".join(i.alias for _, i in scope.inputs),
                )
            for side, inp in matching:
                col = inp.column(name)
                if col is not None:
                    found.append((side, inp, col))
            if not found:
                return self._error(
                    "E004",
                    f"`{qualifier}` has no column `{name}`",
                    node,
                    "unknown column",
                    mean(
                        close := self._closest(
                            name, lambda: [c.name for _, i in matching for c in i.columns]
                        )
                    ),
                    _name_fix(node, close),
                )
        else:
            for side, inp in scope.inputs:
                col = inp.column(name)
                if col is not None:
                    found.append((side, inp, col))
            if not found:
                return self._error(
                    "E004",
                    f"unknown column `{name}`",
                    node,
                    "unknown column",
                    mean(
                        close := self._closest(
                            name, lambda: [c.name for _, i in scope.inputs for c in i.columns]
                        )
                    ),
                    _name_fix(node, close),
                )
            if len(found) > 1:
                return self._error(
                    "E006",
                    f"column `{name}` is ambiguous",
                    node,
                    "on both sides of the join",
                    f"qualify it: `{found[0][1].alias}.{name}` or `{found[1][1].alias}.{name}`",
                )
        side, inp, col = found[0]
        node.set("table", exp.to_identifier(inp.alias))
        annotate.set_column(node, side=side, event_time=col.event_time, relation=inp.relation)
        return col.type

    def _literal(self, node: exp.Literal, scope: Scope, agg: bool) -> SqlType:
        if node.is_string:
            return t.STRING
        text = node.this
        whole, _, frac = text.partition(".")
        if len(whole) + len(frac) > 38:
            return self._error(
                "E012",
                "number literal out of range",
                node,
                "more than 38 digits",
                "Spark's widest number is DECIMAL(38)",
            )
        if not frac and len(whole) <= 18:
            value = int(whole)
            return (
                t.INT
                if value <= 2**31 - 1
                else t.BIGINT
                if value <= 2**63 - 1
                else (t.SqlType("decimal", (len(whole), 0)))
            )
        return t.literal_decimal(text)

    def _interval(self, node: exp.Interval, scope: Scope, agg: bool) -> SqlType:
        unit = node.unit.name.lower() if node.unit else ""
        amount = node.this.name if node.this else ""
        unit_span = annotate.unit_span(node) or ast.span_of(node)
        if unit in t.VARIABLE_UNITS:
            self.diags.add(
                "E013",
                f"an interval in {unit.rstrip('s')}s has no fixed length",
                unit_span,
                "months and years vary in length",
                "write it in days or weeks; Spark ignores month intervals when it "
                "derives join state watermarks",
            )
            return t.UNKNOWN
        if not t.is_number_text(amount):
            return self._error(
                "E014",
                f"invalid interval amount `{excerpt(amount)}`",
                node,
                "not a number",
                "write e.g. INTERVAL 10 SECONDS",
            )
        if t.MS_PER_UNIT.get(unit) is None:
            self.diags.add(
                "E014",
                f"unknown interval unit `{unit}`",
                unit_span,
                "unknown unit",
                "use milliseconds, seconds, minutes, hours, days or weeks",
            )
            return t.UNKNOWN
        whole, _, frac = amount.partition(".")
        if len(whole) > t.MAX_DURATION_DIGITS or len(frac) > 9:
            return self._error(
                "E014",
                f"interval `{excerpt(amount)} {unit}` is out of range",
                node,
                "too long",
                f"an interval has at most {t.MAX_DURATION_DIGITS} digits",
            )
        per_us = t.MS_PER_UNIT[unit] * 1000
        micros = int(whole) * per_us + (int(frac) * per_us // 10 ** len(frac) if frac else 0)
        annotate.set_micros(node, micros)
        return t.INTERVAL

    def _cast(self, node: exp.Cast, scope: Scope, agg: bool) -> SqlType:
        ref = annotate.type_ref(node)
        assert isinstance(ref, ast.TypeRef), "the parser gives every CAST its type"
        source_type = self._type(node.this, scope, agg)
        if annotate.is_typed_literal(node):
            kind = ref.name.lower()
            if kind not in ("timestamp", "date"):
                return self._error(
                    "E012",
                    f"unknown typed literal `{ref.name}`",
                    node,
                    "not a literal type",
                    "use TIMESTAMP '...' or DATE '...'",
                )
            if parse_timestamp(node.this.name) is None:
                return self._error(
                    "E012",
                    f"`{node.this.name}` is not a valid {kind.upper()}",
                    node,
                    "cannot be read",
                    "write e.g. TIMESTAMP '2026-01-01 00:00:00'",
                )
            result = t.TIMESTAMP if kind == "timestamp" else t.DATE
        else:
            found = t.lookup_type(ref.name, ref.params)
            if found is None:
                self.diags.add("E007", f"unknown type `{ref.name}`", ref.span, "unknown type")
                return t.UNKNOWN
            result = found
            if source_type == t.INTERVAL or result in (t.INTERVAL, t.WINDOW):
                return self._error("E012", f"cannot cast {source_type} to {result}", node)
        node.set("to", result.to_sqlglot())
        return result

    def _boolean_op(self, node: exp.Expression, scope: Scope, agg: bool) -> SqlType:
        for kid, kid_type in zip(
            node.iter_expressions(), self._kids(node, scope, agg), strict=True
        ):
            if kid_type not in (t.BOOLEAN, t.NULL, t.UNKNOWN):
                self._error(
                    "E012",
                    f"`{self.source.snippet(ast.span_of(kid))}` is {kid_type}, not BOOLEAN",
                    kid,
                    "not a condition",
                )
        return t.BOOLEAN

    def _compare(self, node: exp.Expression, scope: Scope, agg: bool) -> SqlType:
        kinds = self._kids(node, scope, agg)
        self._comparable(node, kinds)
        return t.BOOLEAN

    def _promote_strings(
        self, node: exp.Expression, kinds: list[SqlType], arithmetic: bool = False
    ) -> SqlType | None:
        """Spark's string promotion (``types.string_promotion``) where a STRING meets a
        number or a BOOLEAN among the operands of ``node`` (a comparison, BETWEEN, IN, or
        arithmetic): each operand not of the promoted type is put under the CAST Spark's
        analyzer inserts, a W013 said for each STRING cast; the promoted type, or None when
        no rule applies (the operands are left as they are).  Without ANSI, IN compares a
        STRING and numbers as STRINGs (TypeCoercion.InConversion: findWiderCommonType)."""
        ansi = self.ansi
        known = [k for k in kinds if k not in (t.NULL, t.UNKNOWN)]
        others = [k for k in known if k != t.STRING]
        targets: set[SqlType | None] = {
            t.string_promotion(t.STRING, other, ansi, arithmetic) for other in others
        }
        if isinstance(node, exp.In) and not ansi:
            targets = {t.STRING if all(k.is_numeric for k in others) else None}
        if t.STRING not in known or len(targets) != 1 or None in targets:
            return None
        (target,) = targets
        assert target is not None
        kids = list(node.iter_expressions())
        if arithmetic:
            kids = [node.this, node.expression]
        for kid, kind in zip(kids, kinds, strict=True):
            if kind in (t.NULL, t.UNKNOWN) or kind == target:
                continue
            _implicit_cast(kid, target)
            if target == t.STRING or (kind == t.STRING and not _casts_cleanly(kid, target)):
                self._cast_warning(kid, kind, target, ansi)
        return target

    def _boolean_equality(self, node: exp.Expression, kinds: list[SqlType]) -> bool:
        """Without ANSI, ``=`` and ``<>`` between a BOOLEAN and a number cast the BOOLEAN to
        the number's type (TypeCoercion.BooleanEquality: true is 1); True when applied."""
        equalities = (exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.NullSafeNEQ)
        if self.ansi or not isinstance(node, equalities):
            return False
        a, b = kinds
        if {a.is_numeric, b.is_numeric} != {True, False} or t.BOOLEAN not in (a, b):
            return False
        target, kid = (b, node.this) if a == t.BOOLEAN else (a, node.expression)
        _implicit_cast(kid, target)
        return True

    def _cast_warning(
        self, kid: exp.Expression, kind: SqlType, target: SqlType, ansi: bool
    ) -> None:
        """W013 for the CAST of ``kid`` (of type ``kind``) to ``target``: what a value that
        does not cast does, and which values that differ as text match."""
        text = excerpt(self.source.snippet(ast.span_of(kid)))
        mode = f"{'ANSI' if ansi else 'no ANSI'}, Spark {self.spark}"
        if target == t.STRING:
            message = (
                f"`{text}` is {kind}, cast to STRING as Spark casts the operands of IN with a "
                f"STRING ({mode}): they are compared as text, so 1 does not match '01', "
                "' 1' or '1.0'"
            )
        else:
            what = (
                "the query fails (CAST_INVALID_INPUT) on a value that does not cast"
                if ansi
                else "a value that does not cast is NULL and matches nothing"
            )
            if target == t.BOOLEAN:
                examples = "'1', 't', 'yes' and ' TRUE ' are all true"
            elif target.name in t.INTEGRAL:
                examples = "'01', '+1' and ' 1 ' equal 1" + (
                    "" if ansi else "; so do '1.0' and '1.5', the fraction dropped"
                )
            else:
                examples = "'01', ' 1 ', '1.0' and '1e0' equal 1"
            message = (
                f"`{text}` is a STRING, cast to {target} as Spark casts it ({mode}): {what}, "
                f"and strings that differ as text can match ({examples})"
            )
        self.diags.add(
            "W013",
            message,
            ast.span_of(kid),
            f"cast to {target}",
            "declare both with one type, or write the CAST where the data is known to be clean",
        )

    def _comparable(self, node: exp.Expression, kinds: list[SqlType]) -> None:
        if self._compared_types(node, kinds) and isinstance(node, _COMPARISONS):
            self._widen_numbers(node, kinds)

    def _widen_numbers(self, node: exp.Expression, kinds: list[SqlType]) -> None:
        """Spark's numeric widening where numbers of different types are compared (a
        comparison, BETWEEN, IN): an integer or a DECIMAL that meets a DOUBLE or FLOAT is
        cast to the floating type (``types.floating_common_type``), and sjoin writes the CAST
        Spark's analyzer inserts (a number literal is typed as the floating type instead),
        so that the engines compare as Spark does (2^53 + 1 equals
        2^53.0, DECIMAL 0.10 equals DOUBLE 0.1).  W013 where the cast loses exactness (a
        BIGINT or a DECIMAL of more than 15 digits to DOUBLE, an INT or BIGINT to FLOAT):
        distinct values then compare equal.  Widening between integers and DECIMALs is exact
        and left unwritten.  Recorded in tests/compiler/binding/spark_implicit_casts.json."""
        known = [k for k in kinds if k.is_numeric]
        if len(known) != len([k for k in kinds if k not in (t.NULL, t.UNKNOWN)]):
            return
        target = t.floating_common_type(known, self.ansi)
        if target is None:
            return
        for kid, kind in zip(list(node.iter_expressions()), kinds, strict=True):
            if not kind.is_numeric or kind == target or kind.name in ("double", "float"):
                continue
            if _retyped_literal(kid, target):
                continue  # a number literal: read as the floating type (Spark folds its cast)
            _implicit_cast(kid, target)
            if t.widening_loses_exactness(kind, target):
                text = excerpt(self.source.snippet(ast.span_of(kid)))
                mode = f"{'ANSI' if self.ansi else 'no ANSI'}, Spark {self.spark}"
                digits = 15 if target == t.DOUBLE else 6
                self.diags.add(
                    "W013",
                    f"`{text}` is {kind}, cast to {target} as Spark widens it to compare it "
                    f"with a {target} ({mode}): {target} keeps about {digits} digits, so "
                    "distinct values can compare equal"
                    + (" (2^53 + 1 equals 2^53)" if target == t.DOUBLE else ""),
                    ast.span_of(kid),
                    f"cast to {target}",
                    "declare both with one type, or compare after an explicit CAST to the "
                    "exact type",
                )

    def _compared_types(self, node: exp.Expression, kinds: list[SqlType]) -> bool:
        """The operands' types can be compared (True), else the error said (False)."""
        first = kinds[0]
        for other in kinds[1:]:
            if t.common_type(first, other) is None and not (
                first == t.INTERVAL and other == t.INTERVAL
            ):
                if not isinstance(node, exp.If) and (
                    self._promote_strings(node, kinds) or self._boolean_equality(node, kinds)
                ):
                    return False
                helps = None
                if {first, other} == {t.TIMESTAMP, t.STRING}:
                    helps = "write a timestamp literal: TIMESTAMP '2026-01-01 00:00:00'"
                elif isinstance(node, exp.Binary) and len(kinds) == 2:
                    left, right = (side.sql(dialect="spark") for side in (node.left, node.right))
                    helps = (
                        f"declare both with one type, or cast one side, e.g. `{left} = "
                        f"CAST({right} AS {first})` (under ANSI a value that does not convert "
                        "then fails the query)"
                    )
                self._error(
                    "E011",
                    f"cannot compare {first} with {other}",
                    node,
                    f"{first} vs {other}",
                    helps,
                )
                return False
        return True

    def _is(self, node: exp.Expression, scope: Scope, agg: bool) -> SqlType:
        self._kids(node, scope, agg)
        return t.BOOLEAN

    def _like(self, node: exp.Expression, scope: Scope, agg: bool) -> SqlType:
        for kid, kind in zip(node.iter_expressions(), self._kids(node, scope, agg), strict=True):
            if kind not in (t.STRING, t.NULL, t.UNKNOWN):
                self._error("E012", f"LIKE needs strings, not {kind}", kid)
        pattern = node.expression
        if isinstance(pattern, exp.Literal) and pattern.is_string:
            try:
                javatext.like_matcher(str(pattern.this))
            except javatext.LikeError as err:
                self._error(
                    "E012",
                    f"LIKE pattern: {err} (Spark fails with {err.error_class})",
                    pattern,
                    "bad escape",
                    "a backslash escapes `_`, `%` or a backslash; write `\\\\` for one",
                )
        return t.BOOLEAN

    def _arith(self, node: exp.Expression, scope: Scope, agg: bool) -> SqlType:
        a, b = self._kids(node, scope, agg)
        if t.UNKNOWN in (a, b):
            return t.UNKNOWN
        if t.NULL in (a, b):
            return b if a == t.NULL else a
        op = type(node)
        result: SqlType | None = None
        if a.is_numeric and b.is_numeric:
            result = t.arith_type(
                SYMBOLS[op], a, b, _literal_digits(node.this), _literal_digits(node.expression)
            )
        elif op in (exp.Add, exp.Sub):
            if (a.is_temporal and b == t.INTERVAL) or (
                op is exp.Add and a == t.INTERVAL and b.is_temporal
            ):
                result = t.TIMESTAMP
            elif a == b == t.INTERVAL or (op is exp.Sub and a.is_temporal and b.is_temporal):
                result = t.INTERVAL
        elif (op in (exp.Mul, exp.Div) and a == t.INTERVAL and b.is_numeric) or (
            op is exp.Mul and a.is_numeric and b == t.INTERVAL
        ):
            result = t.INTERVAL
        if result is None and t.string_promotion(a, b, self.ansi, True):
            target = self._promote_strings(node, [a, b], arithmetic=True)
            if target is not None:
                result = t.arith_type(SYMBOLS[op], target, target)
        if result is None:
            symbol = SYMBOLS[op]
            helps = None
            if (a.is_temporal and b.is_numeric) or (b.is_temporal and a.is_numeric):
                helps = "add an interval to a timestamp, e.g. `t + INTERVAL 5 MINUTES`"
            return self._error(
                "E012", f"cannot compute {a} {symbol} {b}", node, "incompatible operands", helps
            )
        return result

    def _neg(self, node: exp.Expression, scope: Scope, agg: bool) -> SqlType:
        (kind,) = self._kids(node, scope, agg)
        if kind.is_numeric or kind in (t.INTERVAL, t.NULL, t.UNKNOWN):
            return kind
        if kind == t.STRING:
            # Spark's ImplicitTypeCasts casts a STRING operand of unary minus to DOUBLE, with
            # ANSI on and off (-'5' is -5.0; 'x' fails with CAST_INVALID_INPUT, or is NULL);
            # recorded in tests/compiler/binding/spark_implicit_casts.json ("negate")
            kid = node.this
            _implicit_cast(kid, t.DOUBLE)
            if not _casts_cleanly(kid, t.DOUBLE):
                text = excerpt(self.source.snippet(ast.span_of(kid)))
                what = (
                    "the query fails (CAST_INVALID_INPUT) on a value that does not cast"
                    if self.ansi
                    else "a value that does not cast is NULL"
                )
                mode = f"{'ANSI' if self.ansi else 'no ANSI'}, Spark {self.spark}"
                self.diags.add(
                    "W013",
                    f"`{text}` is a STRING, cast to DOUBLE as Spark casts the operand of `-` "
                    f"({mode}): {what}",
                    ast.span_of(kid),
                    "cast to DOUBLE",
                    "declare it as a number, or write the CAST where the data is known to be clean",
                )
            return t.DOUBLE
        return self._error("E012", f"cannot negate {kind}", node)

    def _paren(self, node: exp.Expression, scope: Scope, agg: bool) -> SqlType:
        (kind,) = self._kids(node, scope, agg)
        return kind

    def _in(self, node: exp.Expression, scope: Scope, agg: bool) -> SqlType:
        self._comparable(node, self._kids(node, scope, agg))
        return t.BOOLEAN

    def _case(self, node: exp.Case, scope: Scope, agg: bool) -> SqlType:
        operand = self._type(node.this, scope, agg) if node.this else None
        results: list[SqlType] = []
        for when in node.args.get("ifs") or []:
            cond = self._type(when.this, scope, agg)
            if operand is not None:
                self._comparable(when, [operand, cond])
            elif cond not in (t.BOOLEAN, t.NULL, t.UNKNOWN):
                self._error("E012", f"a WHEN condition is {cond}, not BOOLEAN", when.this)
            results.append(self._type(when.args["true"], scope, agg))
            annotate.set_type(when, results[-1])
        if node.args.get("default") is not None:
            results.append(self._type(node.args["default"], scope, agg))
        kind: SqlType = t.NULL
        for r in results:
            joined = t.common_type(kind, r)
            if joined is None:
                return self._error("E012", f"CASE branches mix {kind} and {r}", node)
            kind = joined
        return kind

    def _function(self, node: exp.Anonymous, scope: Scope, agg: bool) -> SqlType:
        name = str(node.this)
        span = annotate.name_span(node) or ast.span_of(node)
        fn = functions.lookup(name)
        args = list(node.expressions)
        if fn is None:
            fix: Fix | None = None
            known = ", ".join(sorted(f for f in functions.FUNCTIONS if f != "window"))
            reason = functions.NOT_SUPPORTED.get(name.lower())
            if reason is not None:
                message = f"Spark's `{name}` is not supported by sjoin"
                help = f"{reason}; supported: window, {known}"
            else:
                message = f"unknown function `{name}`"
                close = closest(name, list(functions.FUNCTIONS))
                help = mean(close) or f"supported: window, {known}"
                if annotate.name_span(node) is not None:
                    fix = Fix.replace(span, close)
            self.diags.add("E017", message, span, "unknown function", help, fix)
            for arg in args:
                if not isinstance(arg, exp.Star):
                    self._type(arg, scope, agg)
            return t.UNKNOWN
        if fn.aggregate and not agg:
            message, help = self.no_aggregate or (
                "aggregate `{name}` is not allowed here",
                "aggregate in an `aggregate` statement downstream of the join",
            )
            message = message.replace("{name}", name)
            self.diags.add("E019", message, span, "aggregate function", help)
        if len(args) < fn.min_args or (fn.max_args is not None and len(args) > fn.max_args):
            arity = (
                str(fn.min_args)
                if fn.min_args == fn.max_args
                else (
                    f"{fn.min_args} to {fn.max_args}"
                    if fn.max_args is not None
                    else f"at least {fn.min_args}"
                )
            )
            self.diags.add(
                "E018",
                f"`{name}` takes {arity} argument(s), not {len(args)}",
                span,
                "wrong number of arguments",
                fn.doc or None,
            )
            return t.UNKNOWN
        if fn.name == "count" and args and isinstance(args[0], exp.Star):
            return t.BIGINT
        kinds = [self._type(a, scope, agg and not fn.aggregate) for a in args]
        if fn.name == "window":
            self._window_args(node, args)
        result = fn.result(kinds)
        if isinstance(result, str):
            return self._error("E012", f"`{name}`: {result}", node, "wrong argument type")
        if fn.name in _PATTERN_FUNCTIONS and not self._pattern_args(name, fn.name, args):
            return t.UNKNOWN
        if fn.name in ("lpad", "rpad", "round") and not self._size_args(name, fn.name, args):
            return t.UNKNOWN
        annotate.set_function(node, fn.name)
        return result

    def _pattern_args(self, name: str, function: str, args: list[exp.Expression]) -> bool:
        """The pattern of date_format, split and regexp_* is a literal that Spark and the
        runtime read the same way (javatext); regexp_extract's group and regexp_replace's
        replacement must fit it."""
        texts: list[str | None] = []
        for position in _PATTERN_FUNCTIONS[function]:
            arg = args[position]
            if isinstance(arg, exp.Null):
                texts.append(None)
                continue
            if not (isinstance(arg, exp.Literal) and arg.is_string):
                self._error(
                    "E012",
                    f"`{name}`: argument {position + 1} must be a string literal",
                    arg,
                    "not a literal",
                    "sjoin checks patterns when it reads the spec, so write the text in quotes",
                )
                return False
            texts.append(str(arg.this))
        pattern, replacement = texts[0], (texts[1] if len(texts) > 1 else None)
        if pattern is None:
            return True
        try:
            if function == "date_format":
                javatext.date_pattern(pattern)
                return True
            groups = javatext.group_count(pattern)
        except javatext.PatternError as err:
            self._error("E012", f"`{name}`: {err}", args[1], "cannot be read as Spark reads it")
            return False
        if replacement is not None:
            try:
                javatext.java_replacement(replacement, groups)
            except javatext.PatternError as err:
                self._error("E012", f"`{name}`: {err}", args[2], "bad replacement")
                return False
        if function == "regexp_extract" and len(args) > 2:
            group = args[2]
            literal = isinstance(group, exp.Literal) and not group.is_string
            if literal and not 0 <= int(group.this) <= groups:
                self._error(
                    "E012",
                    f"`{name}`: the pattern has {groups} group(s), so the group index "
                    f"must be between 0 and {groups}",
                    group,
                    "no such group",
                )
                return False
        return True

    def _size_args(self, name: str, function: str, args: list[exp.Expression]) -> bool:
        """The INT argument of lpad/rpad (a length) and round (a scale): Spark casts a
        BIGINT to INT (with ANSI on, a value outside INT fails with CAST_OVERFLOW), round's
        scale must be a constant, and a padded string must fit Spark's string size."""
        if len(args) < 2:
            return True
        arg = args[1]
        value = _integer_literal(arg)
        if function == "round" and value is None and not isinstance(arg, exp.Null):
            self._error(
                "E012",
                f"`{name}`: the scale must be a constant integer",
                arg,
                "not a constant",
                "Spark rejects a scale that is not constant (NON_FOLDABLE_INPUT)",
            )
            return False
        if value is None:
            return True
        ansi = self.ansi
        if not -(2**31) <= value < 2**31:
            if ansi:
                what = "length" if function != "round" else "scale"
                self._error(
                    "E012",
                    f"`{name}`: the {what} {value} does not fit INT: Spark fails with "
                    "CAST_OVERFLOW",
                    arg,
                    "outside INT",
                    f"a {what} is between -2147483648 and 2147483647",
                )
                return False
            value = (value + 2**31) % 2**32 - 2**31  # Spark 3.5 casts without a check
        if function == "round":
            return True
        fill = args[2] if len(args) > 2 else exp.Literal.string(" ")
        if isinstance(fill, exp.Literal) and fill.is_string and fill.this:
            least = value * min(len(c.encode("utf-8", "surrogatepass")) for c in fill.this)
            if least > MAX_STRING_BYTES:
                self._error(
                    "E012",
                    f"`{name}` to {value} characters of `{fill.this}` makes a string of at "
                    f"least {least:,} bytes, more than a Spark string holds "
                    f"({MAX_STRING_BYTES:,}): Spark fails on every shorter value",
                    arg,
                    "too long",
                )
                return False
        return True

    def _field(self, node: exp.Dot, scope: Scope, agg: bool) -> SqlType:
        """``window(t, ...).start`` / ``.end``: the TIMESTAMP bounds of a tumbling window.
        Spark gives the field no watermark metadata (an Alias of a GetStructField takes the
        struct field's, which is empty), so it is never an event-time column."""
        kind = self._type(node.this, scope, agg)
        field = node.expression.name.lower()
        if kind == t.UNKNOWN:
            return t.UNKNOWN
        if kind != t.WINDOW or field not in ("start", "end"):
            return self._error(
                "E012",
                f"`.{node.expression.name}` is not a field of {kind}",
                node,
                "no such field",
                "only a window has fields: window(t, INTERVAL 1 MINUTE).start and .end",
            )
        call = node.this
        if len(call.expressions) > 2 and annotate.micros(call.expressions[2]) not in (
            None,
            annotate.micros(call.expressions[1]),
        ):
            return self._error(
                "E012",
                f"a sliding window has several windows per row, so it has no one `.{field}`",
                node,
                "sliding window",
                "take the field of a tumbling window: window(t, INTERVAL 1 MINUTE)",
            )
        return t.TIMESTAMP

    def _window_args(self, node: exp.Anonymous, args: list[exp.Expression]) -> None:
        """window()'s durations must be constant, positive and fixed-length."""
        for arg in args[1:]:
            if isinstance(arg, exp.Interval) and annotate.micros(arg):
                continue
            if isinstance(arg, exp.Literal) and arg.is_string:
                amount, _, unit = arg.this.strip().partition(" ")
                if t.duration_ms(amount, unit.strip()):
                    annotate.set_micros(arg, (t.duration_ms(amount, unit.strip()) or 0) * 1000)
                    continue
            if annotate.sql_type(arg) != t.UNKNOWN:
                self._error(
                    "E012",
                    "a window duration must be a positive constant interval",
                    arg,
                    "not a constant duration",
                    "write e.g. INTERVAL 10 SECONDS",
                )
        if len(args) < 3:
            return
        duration, slide = annotate.micros(args[1]), annotate.micros(args[2])
        if not duration or not slide or slide >= duration:
            return
        count = -(-duration // slide)  # Spark's TimeWindowing: ceil(duration / slide)
        if count > MAX_WINDOWS_PER_ROW:
            self._error(
                "E014",
                f"a window of {_format_micros(duration)} sliding every "
                f"{_format_micros(slide)} puts each row in {count:,} windows, more than "
                f"sjoin's limit of {MAX_WINDOWS_PER_ROW:,}",
                args[2],
                f"{count:,} windows per row",
                "Spark expands each row into that many rows (TimeWindowing's Expand); slide by "
                f"at least 1/{MAX_WINDOWS_PER_ROW:,} of the window's length",
            )


# A sliding window puts each row in ceil(duration / slide) windows, each one a row that
# Spark builds (and sjoin's runtime too); past this many, `check` refuses it (E014).
MAX_WINDOWS_PER_ROW = 10_000

# the argument positions that must be string literals: patterns, then replacements
_PATTERN_FUNCTIONS: dict[str, tuple[int, ...]] = {
    "date_format": (1,),
    "split": (1,),
    "regexp_extract": (1,),
    "regexp_replace": (1, 2),
}


# The most bytes a Spark string holds (runtime/engine/eval.py has the same limit at run time)
MAX_STRING_BYTES = 2**31 - 1 - 15


def _ordinal(number: int) -> str:
    """``2`` -> ``second``: how Spark's messages number a union's inputs."""
    words = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
    return words[number - 1] if number <= len(words) else f"{number}th"


def _integer_literal(node: exp.Expression) -> int | None:
    """The value of an integer literal, also negated or in parentheses."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Neg):
        inner = _integer_literal(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        return int(node.this)
    return None


_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.In, exp.Between)


def _retyped_literal(node: exp.Expression, target: SqlType) -> bool:
    """When ``node`` is a number literal (also negated, in parentheses), type it as
    ``target`` (DOUBLE or FLOAT) in place of Spark's CAST of it, which Spark's optimizer folds
    into the constant: the plan keeps the literal's text, and the engines read it as that
    floating value (``runtime.eval``); True when done."""
    chain = [node]
    while isinstance(chain[-1], (exp.Paren, exp.Neg)):
        chain.append(chain[-1].this)
    if not (isinstance(chain[-1], exp.Literal) and not chain[-1].is_string):
        return False
    for part in chain:
        annotate.set_type(part, target)
    return True


def _literal_digits(node: exp.Expression) -> int | None:
    """The digits of an integer literal operand (also negated or in parentheses), which Spark
    types by its digits beside a DECIMAL (``DecimalType.fromLiteral``); None for another."""
    value = _integer_literal(node)
    return None if value is None else len(str(abs(value)))


def _implicit_cast(node: exp.Expression, target: SqlType) -> None:
    """Put ``node`` (bound) under the CAST to ``target`` that Spark's type coercion inserts,
    in its place in the tree: typed, spanning ``node``."""
    cast = exp.Cast(to=target.to_sqlglot())
    node.replace(cast)
    cast.set("this", node)
    annotate.set_type(cast, target)
    annotate.set_span(cast, ast.span_of(node))


_INTEGRAL_TEXT = re.compile(r"[+-]?[0-9]{1,18}")
_FRACTIONAL_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _casts_cleanly(node: exp.Expression, target: SqlType) -> bool:
    """``node`` is a string literal whose text is the value it casts to ``target`` (digits,
    a number, `true`/`false`): a cast that can neither fail nor match text that differs."""
    while isinstance(node, exp.Paren):
        node = node.this
    if not (isinstance(node, exp.Literal) and node.is_string):
        return False
    text = str(node.this)
    if target.name in t.INTEGRAL:
        bits = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}[target.name]
        return _INTEGRAL_TEXT.fullmatch(text) is not None and -(2 ** (bits - 1)) <= int(
            text
        ) < 2 ** (bits - 1)
    if target.is_numeric:
        return _FRACTIONAL_TEXT.fullmatch(text) is not None
    return text.lower() in ("true", "false")


def _constant(kind: SqlType) -> Callable[[Binder, Any, Scope, bool], SqlType]:
    return lambda self, node, scope, agg: kind


_RULES: dict[type[exp.Expression], Callable[[Binder, Any, Scope, bool], SqlType]] = {
    exp.Column: Binder._column,
    exp.Literal: Binder._literal,
    exp.Boolean: _constant(t.BOOLEAN),
    exp.Null: _constant(t.NULL),
    exp.Interval: Binder._interval,
    exp.Cast: Binder._cast,
    exp.TryCast: Binder._cast,
    exp.And: Binder._boolean_op,
    exp.Or: Binder._boolean_op,
    exp.Not: Binder._boolean_op,
    exp.EQ: Binder._compare,
    exp.NEQ: Binder._compare,
    exp.NullSafeEQ: Binder._compare,
    exp.NullSafeNEQ: Binder._compare,
    exp.LT: Binder._compare,
    exp.LTE: Binder._compare,
    exp.GT: Binder._compare,
    exp.GTE: Binder._compare,
    exp.Between: Binder._compare,
    exp.Is: Binder._is,
    exp.In: Binder._in,
    exp.Like: Binder._like,
    exp.Add: Binder._arith,
    exp.Sub: Binder._arith,
    exp.Mul: Binder._arith,
    exp.Div: Binder._arith,
    exp.Mod: Binder._arith,
    exp.Neg: Binder._neg,
    exp.Paren: Binder._paren,
    exp.Case: Binder._case,
    exp.Anonymous: Binder._function,
    exp.Dot: Binder._field,
}


# ---------------------------------------------------------------------- helpers


def _is_star(node: exp.Expression) -> bool:
    """``*`` or ``a.*`` in a SELECT."""
    return isinstance(node, exp.Star) or (
        isinstance(node, exp.Column) and isinstance(node.this, exp.Star)
    )


def _star_width(node: exp.Expression, sides: Sequence[tuple[str, Input]]) -> int:
    """How many columns a star expands to (as ``Binder._star`` expands it)."""
    qualifier = node.table if isinstance(node, exp.Column) else ""
    return sum(
        len(inp.columns)
        for _, inp in sides
        if not qualifier or qualifier in (inp.alias, inp.relation)
    )


def _column_ref(alias: str, col: Column, side: str) -> exp.Column:
    ref = exp.Column(this=exp.to_identifier(col.name), table=exp.to_identifier(alias))
    annotate.set_column(ref, side=side, event_time=col.event_time, kind=col.type)
    return ref


def _default_output(sides: Sequence[tuple[str, Input]], span: Span) -> list[OutputItem]:
    """Left columns then right columns; a name on both sides becomes ALIAS_name on both."""
    counts: dict[str, int] = {}
    for _, inp in sides:
        for col in inp.columns:
            counts[col.name] = counts.get(col.name, 0) + 1
    out = []
    for side, inp in sides:
        for col in inp.columns:
            name = f"{inp.alias}_{col.name}" if counts[col.name] > 1 else col.name
            out.append(
                OutputItem(name, _column_ref(inp.alias, col, side), col.type, col.event_time, span)
            )
    return out


def _carries_event_time(node: exp.Expression) -> bool:
    """Spark keeps watermark metadata through a plain column reference (and its alias) and
    gives it to a window over an event-time column."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Column):
        return annotate.is_event_time(node)
    if annotate.is_call(node, "window"):
        return _carries_event_time(node.expressions[0])
    return False


def _grouped(node: exp.Expression, keys: Sequence[exp.Expression]) -> bool:
    """True when ``node`` only uses grouping keys outside aggregate calls."""
    if any(node == k for k in keys):
        return True
    if isinstance(node, exp.Anonymous) and annotate.function(node) in AGGREGATES:
        return True
    if isinstance(node, exp.Column):
        return False
    return all(_grouped(k, keys) for k in node.iter_expressions())


def _setting_value(spec: settings.SettingSpec, value: ast.Value) -> str | int | bool | None:
    text = value.text.lower()
    if spec.kind == "choice":
        return text if text in spec.choices else None
    if spec.kind == "bool":
        return {"true": True, "false": False}.get(text)
    if spec.kind == "positive_int":
        return int(text) if t.is_digits(text) and len(text) <= 5 and int(text) > 0 else None
    if spec.kind == "string":
        if spec.name == "trigger":
            return text if text and valid_trigger(text) else None
        return value.text if value.kind in ("string", "name") else None
    return None  # pragma: no cover


def _setting_help(spec: settings.SettingSpec) -> str:
    if spec.kind == "choice":
        return f"`{spec.name}` is one of: " + ", ".join(spec.choices)
    if spec.kind == "bool":
        return f"`{spec.name}` is true or false"
    if spec.kind == "positive_int":
        return f"`{spec.name}` is a positive whole number"
    return f"`{spec.name}`: {spec.doc}"


def bind(
    spec: ast.SpecFile, source: Source, diags: Diagnostics, spark: SparkVersion | None = None
) -> BoundSpec:
    """The bound model of ``spec``, for the Spark version ``spark`` when given (it wins over
    the spec's `spark` statement, which is still checked as written), else the one the
    statement names (wherever it stands in the file), else DEFAULT_SPARK."""
    return Binder(source, diags, spark).bind(spec)


def _default_spark() -> SparkVersion:
    version = SparkVersion.parse(DEFAULT_SPARK)
    assert version is not None
    return version


def _declared_spark(spec: ast.SpecFile) -> SparkVersion | None:
    """The version of the spec's first `spark` statement when sjoin models it (a second one
    is E002, an unsupported one E016: the default stands for both), read before any other
    statement is bound, since binding some of them depends on it (ANSI casts)."""
    first = next((s for s in spec.statements if isinstance(s, ast.SparkDecl)), None)
    version = SparkVersion.parse(first.version) if first is not None else None
    if version is None or version.minor_version not in SUPPORTED_SPARK:
        return None
    return version


def _declared_ansi(spec: ast.SpecFile, spark: SparkVersion) -> bool:
    """spark.sql.ansi.enabled for the spec: its first `set ansi_enabled` with a value sjoin
    takes (a second one is E002, a bad value E016: the version's default stands for both),
    else the version's default; read before any other statement is bound, since how an
    expression binds depends on it (implicit casts, what fails)."""
    for stmt in spec.statements:
        if isinstance(stmt, ast.SetDecl) and stmt.name.text.lower() == "ansi_enabled":
            value = _setting_value(settings.SETTINGS["ansi_enabled"], stmt.value)
            if isinstance(value, bool):
                return value
            break
    value = settings.version_default("ansi_enabled", spark)
    assert isinstance(value, bool)
    return value


def _format_micros(us: int) -> str:
    return t.format_ms(us // 1000) if us % 1000 == 0 else f"{us} µs"
