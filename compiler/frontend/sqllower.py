"""A pipeline's SQL (``compiler/frontend/sqlast.py``) -> the .sjoin AST
(``compiler/frontend/ast.py``).

The one binder then binds it, so the planner and everything after it see the same bound
model whichever syntax the pipeline was written in.  What each part of a pipeline becomes
(docs/pipelines.md, "Reading a pipeline"):

- a stream: a ``CREATE STREAMING TABLE name (col TYPE, ...)`` without a query (its rows come
  from flows sjoin does not model), or with declared columns and a query that keeps no
  state, and a dataset the pipeline defines in Python, declared in the schema file
  (``sjoin-schemas.sql``); its watermark is the ``WATERMARK`` clause of the queries that
  read it (every read of one stream must give the same one: sjoin models a watermark per
  stream), its source a ``-- sjoin: from ...`` line;
- a static table: ``CREATE MATERIALIZED VIEW d (col TYPE, ...) AS SELECT * FROM
  parquet.`path```, files read in batch, the .sjoin ``table``; a read of it without
  ``STREAM`` in a join with a stream is a stream-static join (the planner's tables.py judges
  the join type, E038);
- a join: a streaming table, temporary view or flow whose query joins two reads
  (``STREAM(a) [WATERMARK ...] [AS x] <join type> JOIN STREAM(b) ... ON ...``); its
  ``WHERE`` is the .sjoin join's WHERE (the planner does what Spark's optimizer does with a
  Filter above a join), but ``LEFT OUTER JOIN ... WHERE y.k IS NULL`` on a right key or on a
  marker column of the right side (``TRUE AS m``) is the left anti join Spark cannot run on
  two streams;
- a view: a query of one relation that filters and projects it (a temporary view, a
  streaming table without declared columns, or a flow into one), the .sjoin ``view``;
- a union: ``q1 UNION ALL q2 ...``; a branch ``SELECT * FROM STREAM(s)`` is ``s``, any other
  a relation of its own (``<table>_<n>``) that the union reads;
- an aggregate: a query with GROUP BY over one read (its WHERE the aggregate's WHERE, a
  Filter below it), or over a join (then the join is a relation of its own, named
  ``<table>_join``, that keeps the columns the aggregate reads); ``SELECT DISTINCT`` is the
  aggregate Spark's optimizer makes of it, grouping by every column
  (ReplaceDistinctWithAggregate);
- a chain: a join or aggregate reading a temporary view, which SDP inlines into the flow
  that reads it, so the chain is one streaming query as a .sjoin chain is; a WATERMARK
  clause on that read is the .sjoin ``v AS x watermark t delay ...`` (withWatermark on the
  view's output; the planner judges it, E034).

A read of a subquery that only projects a stream's columns, windows of its time column
(``window(t, '10 minutes') AS w``), the time column recomputed beside its window
(``timestamp_micros(unix_micros(t)) AS t``) or a marker (``TRUE AS m``), as sjoin's own
pipeline target writes them, is the stream itself: a reference to ``x.w`` is the window
call it stands for.  A subquery that keeps the time column itself beside its window keeps
two event-time columns: the read records it (``RelRef.time_beside_window``) and the
planner's checks judge it for the Spark the plan is made for (E025); the lowering decides
no Spark rule.

What cannot be modelled is refused at its place (E033), never dropped; a part of the
pipeline outside sjoin's model that changes nothing sjoin checks is a warning (W011).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from typing import cast

from sqlglot import exp

from ..diagnostics.diagnostics import Diagnostics
from ..vocabulary import annotate, settings
from ..vocabulary.expr import conjuncts, copy_tree
from ..vocabulary.model import JoinType
from ..vocabulary.source import Span
from . import ast, sqlast
from .sqlparse import single_unit

SCHEMA_FILE = "sjoin-schemas.sql"


@dataclass(frozen=True, slots=True)
class PythonDedup:
    """A ``.dropDuplicates([...])`` or ``.dropDuplicatesWithinWatermark([...])`` call in the
    function of a Python dataset (sjoin runs no Python: it compares the call with the dedup
    sjoin-schemas.sql declares)."""

    within: bool
    keys: tuple[str, ...] | None  # None: not one list of string literals
    span: Span


@dataclass(frozen=True, slots=True)
class PythonDataset:
    """A dataset a Python file of the pipeline defines (``@dp.table``, ...)."""

    name: str
    kind: str  # table, materialized_view, temporary_view, streaming_table, sink, flow
    span: Span
    dedups: tuple[PythonDedup, ...] = ()  # its function's dedup calls, in the file's order


@dataclass(frozen=True, slots=True)
class Conf:
    """A Spark conf of the pipeline: `configuration` of spark-pipeline.yml or a SET."""

    key: str
    value: str
    key_span: Span
    value_span: Span
    span: Span


@dataclass
class PipelineInput:
    """What the lowering reads: the SQL files, the schema file, the Python datasets, the
    confs, and the streams whose columns were inferred from a trace (by the caller)."""

    sql: list[sqlast.SqlFile] = field(default_factory=list)
    schemas: list[sqlast.SqlFile] = field(default_factory=list)
    python: list[PythonDataset] = field(default_factory=list)
    confs: list[Conf] = field(default_factory=list)
    inferred: dict[str, tuple[ast.ColumnDecl, ...]] = field(default_factory=dict)
    span: Span = field(default_factory=lambda: Span(0, 0))


# ------------------------------------------------------------------ datasets


@dataclass
class _Dataset:
    name: str
    kind: str  # stream, join, aggregate, stateless, batch, python, declared
    span: Span  # its name where it is defined
    columns: tuple[ast.ColumnDecl, ...] | None = None
    query: sqlast.Query | None = None
    view: bool = False  # a temporary view: inlined into the flows that read it
    statement: sqlast.CreateDataset | sqlast.CreateFlow | None = None
    decl_span: Span | None = None
    source: ast.FormatDecl | None = None
    flows: list[sqlast.CreateFlow] = field(default_factory=list)
    what: str = ""  # for messages: "a materialized view", ...
    dedup: sqlast.DedupClause | None = None  # a dedup a Python flow runs (sjoin-schemas.sql)
    python: PythonDataset | None = None  # the Python definition of a `python` dataset


@dataclass
class _Watermark:
    column: ast.Ident
    delay: ast.Duration
    clause: sqlast.WatermarkClause


class Lowering:
    def __init__(self, given: PipelineInput, diags: Diagnostics) -> None:
        self.given = given
        self.diags = diags
        self.datasets: dict[str, _Dataset] = {}
        self.broken: set[str] = set()
        self.watermarks: dict[str, _Watermark | None] = {}
        self.first_read: dict[str, Span] = {}
        self.statements: list[ast.Statement] = []
        self.relations: list[tuple[str, list[ast.Statement], set[str]]] = []
        self.taken: set[str] = set()

    # -------------------------------------------------------------- the whole pipeline
    def lower(self) -> ast.SpecFile:
        head: list[ast.Statement] = []
        sinks: list[ast.Statement] = []
        for file in [*self.given.sql, *self.given.schemas]:
            self.broken.update(file.broken)
            for ann in file.annotations:
                if isinstance(ann.statement, ast.SinkDecl):
                    sinks.append(ann.statement)
                elif isinstance(ann.statement, (ast.SparkDecl, ast.SetDecl)):
                    head.append(ann.statement)
        self._collect()
        head.extend(self._settings())
        streams = self._streams_and_relations()
        statements = [*head, *streams, *self._ordered(), *sinks]
        return ast.SpecFile(
            tuple(statements), self.given.span, tuple(sorted(self.broken)), watermark_per_read=True
        )

    def _error(self, message: str, span: Span, label: str, help: str | None = None) -> None:
        self.diags.add("E033", message, span, label, help)

    def _warn(self, message: str, span: Span, label: str, help: str | None = None) -> None:
        self.diags.add("W011", message, span, label, help)

    # -------------------------------------------------------------- settings
    def _settings(self) -> list[ast.SetDecl]:
        by_conf = {s.spark_conf: s for s in settings.SETTINGS.values() if s.spark_conf}
        chosen: dict[str, tuple[str, Conf]] = {}
        out = []
        for conf in self.given.confs:
            spec = by_conf.get(conf.key)
            if spec is None:
                self._warn(
                    f"sjoin does not model the conf `{conf.key}`: it plans with Spark's default",
                    conf.key_span,
                    "not modelled",
                    "sjoin models the confs of its `set` statements (docs/language.md)",
                )
                continue
            value = _setting_text(spec.name, conf.value)
            earlier = chosen.get(spec.name)
            if earlier is not None:
                if earlier[0] != value:
                    self._error(
                        f"`{conf.key}` is set to two values in the pipeline",
                        conf.value_span,
                        "another value",
                        "sjoin models one value per conf for the whole pipeline; set it once",
                    )
                continue
            chosen[spec.name] = (value, conf)
            kind = "number" if re.fullmatch(r"[0-9]+", value) else "string"
            if spec.kind == "bool" and value in ("true", "false"):
                kind = "bool"
            if spec.kind == "choice":
                kind = "name"
            out.append(
                ast.SetDecl(
                    ast.Ident(spec.name, conf.key_span),
                    ast.Value(value, kind, conf.value_span),  # type: ignore[arg-type]
                    conf.span,
                )
            )
        return out

    # -------------------------------------------------------------- definitions
    def _define(self, dataset: _Dataset) -> None:
        earlier = self.datasets.get(dataset.name)
        if earlier is not None or dataset.name in self.broken:
            self.diags.add(
                "E002",
                f"dataset `{dataset.name}` is defined twice in the pipeline",
                dataset.span,
                "defined again here",
                "give each table, view and flow target one definition (a table's columns for "
                f"sjoin go in {SCHEMA_FILE} only when Python defines the table)",
            )
            return
        self.datasets[dataset.name] = dataset

    def _collect(self) -> None:
        for file in self.given.sql:
            for index, stmt in enumerate(file.statements):
                if isinstance(stmt, sqlast.CreateDataset):
                    self._define(self._dataset(stmt, file.sources.get(index)))
                elif isinstance(stmt, sqlast.SetConf):
                    self.given.confs.append(
                        Conf(stmt.key, stmt.value, stmt.key_span, stmt.value_span, stmt.span)
                    )
        for file in self.given.sql:
            for stmt in file.statements:
                if isinstance(stmt, sqlast.CreateFlow):
                    self._flow(stmt)
        for file in self.given.schemas:
            for index, stmt in enumerate(file.statements):
                self._schema(stmt, file.sources.get(index))
        for py in self.given.python:
            if py.kind in ("sink", "flow"):
                continue
            if py.name in self.datasets and self.datasets[py.name].kind == "table":
                continue  # declared in the schema file as the static table Python reads
            if py.name in self.datasets and self.datasets[py.name].kind == "dedup":
                self._python_dedup(self.datasets[py.name], py)
                continue
            if py.name in self.datasets and self.datasets[py.name].kind == "declared":
                declared = self.datasets[py.name]
                declared.kind = "stream"
                declared.what = "a dataset the pipeline defines in Python"
                continue
            if py.name in self.datasets:
                self._define(_Dataset(py.name, "python", py.span))
                continue
            self.datasets[py.name] = _Dataset(
                py.name, "python", py.span, what="a dataset the pipeline defines in Python"
            )
            self.datasets[py.name].python = py
            self._undeclared_dedup(py)
            if py.kind in ("materialized_view",):
                self.datasets[py.name].what = "a materialized view defined in Python"
        for name, columns in self.given.inferred.items():
            found = self.datasets.get(name)
            if found is not None and found.kind == "python" and found.columns is None:
                found.kind, found.columns = "stream", columns
        for dataset in self.datasets.values():
            if dataset.kind == "declared":  # in the schema file, defined nowhere else
                dataset.kind = "stream"
                dataset.what = "a table the pipeline reads"

    def _dataset(self, stmt: sqlast.CreateDataset, source: sqlast.Annotation | None) -> _Dataset:
        name = stmt.name.text
        view = stmt.kind in ("temporary_view", "view")
        found = _Dataset(name, "stream", stmt.name.span, stmt.columns, stmt.query, view, stmt)
        found.decl_span = stmt.span
        if source is not None and isinstance(source.statement, sqlast.DedupClause):
            self._error(
                "a `-- sjoin: dedup` line in a file that SDP runs",
                source.span,
                "SDP runs the view without a dedup",
                f"declare the dedup of a Python flow in {SCHEMA_FILE}; SDP's SQL has no "
                "dropDuplicates",
            )
        elif source is not None:
            assert isinstance(source.statement, ast.FormatDecl)
            found.source = source.statement
        if stmt.kind == "materialized_view" and _table_source(stmt) is not None:
            found.kind, found.what = "table", "a static table"  # a batch read of files
            found.source = _table_source(stmt)
            return found
        if stmt.kind == "materialized_view":
            found.kind, found.what = "batch", "a materialized view"
            self._warn(
                f"sjoin does not check the materialized view `{name}`: it is recomputed in "
                "batch, with no streaming state",
                stmt.name.span,
                "not checked",
            )
            return found
        if stmt.kind == "view":
            found.kind, found.what = "batch", "a persisted view"
            self._warn(
                f"sjoin does not check the persisted view `{name}`",
                stmt.name.span,
                "not checked",
                "a temporary view (CREATE TEMPORARY VIEW) is inlined into the flows that "
                "read it, and sjoin checks it there",
            )
            return found
        if stmt.query is None:
            found.what = "a streaming table"
            return found
        found.kind = _query_kind(stmt.query)
        found.what = "a temporary view" if view else "a streaming table"
        return found

    def _flow(self, flow: sqlast.CreateFlow) -> None:
        target = self.datasets.get(flow.target.text)
        if target is None:
            if flow.target.text not in self.broken:
                self.diags.add(
                    "E003",
                    f"the flow `{flow.name.text}` writes `{flow.target.text}`, which the "
                    "pipeline's SQL does not define",
                    flow.target.span,
                    "unknown table",
                    f"define it: CREATE STREAMING TABLE {flow.target.text}",
                )
            return
        if target.kind == "batch" or target.view:
            self._error(
                f"the flow `{flow.name.text}` writes {target.what}",
                flow.target.span,
                "not a streaming table",
                "a flow writes a streaming table",
            )
            return
        if isinstance(target.statement, sqlast.CreateDataset) and target.statement.query:
            self._error(
                f"the flow `{flow.name.text}` writes `{target.name}`, which has a query of its own",
                flow.target.span,
                "second query",
                "sjoin models one query per table: write the flow's query as the table's",
            )
            return
        target.flows.append(flow)
        kind = _query_kind(flow.query)
        stateful = [
            f for f in target.flows if _query_kind(f.query) in ("join", "aggregate", "union")
        ]
        if len(target.flows) > 1 and stateful:
            self._error(
                f"`{target.name}` is written by {len(target.flows)} flows, and one of them "
                "joins or aggregates",
                flow.name.span,
                "another flow into the same table",
                "sjoin models one query per table (the flows' union is not modelled)",
            )
            return
        if len(target.flows) > 1 and target.kind == "stateless":
            # several flows into one table: each its own streaming query, none modelled
            target.kind, target.query, target.statement = "stream", None, None
            return
        if len(target.flows) == 1 and (
            kind in ("join", "aggregate", "union")
            or (kind == "stateless" and target.columns is None)
        ):
            target.kind = kind
            target.query = _as_target(self, flow, target)
            target.statement = flow

    def _schema(self, stmt: sqlast.SqlStatement, source: sqlast.Annotation | None) -> None:
        if source is not None and isinstance(source.statement, sqlast.DedupClause):
            self._dedup_declaration(stmt, source.statement)
            return
        table = (
            isinstance(stmt, sqlast.CreateDataset)
            and stmt.kind == "materialized_view"
            and _table_source(stmt) is not None
        )  # a static table the pipeline defines in Python (or its catalog holds), read in batch
        if not table and not (
            isinstance(stmt, sqlast.CreateDataset)
            and stmt.kind == "streaming_table"
            and stmt.query is None
            and stmt.columns is not None
        ):
            span = stmt.span
            self._error(
                f"{SCHEMA_FILE} declares streams and static tables only",
                span,
                "not a declaration",
                "write CREATE STREAMING TABLE name (col TYPE, ...) for each stream the "
                "pipeline defines in Python, and CREATE MATERIALIZED VIEW name (col TYPE, ...) "
                "AS SELECT * FROM parquet.`path` for each table it reads in batch",
            )
            return
        assert isinstance(stmt, sqlast.CreateDataset)
        name = stmt.name.text
        if name in self.datasets:
            self.diags.add(
                "E002",
                f"`{name}` is declared in {SCHEMA_FILE} and defined in the pipeline's SQL",
                stmt.name.span,
                "declared again",
                f"{SCHEMA_FILE} declares the columns of the streams the pipeline defines in "
                "Python; a table of the SQL files is declared there",
            )
            return
        found = _Dataset(name, "declared", stmt.name.span, stmt.columns, None, False, stmt)
        found.decl_span = stmt.span
        if table:
            found.kind, found.what = "table", "a static table"
            found.source = _table_source(stmt)
            self.datasets[name] = found
            return
        if source is not None:
            assert isinstance(source.statement, ast.FormatDecl)
            found.source = source.statement
        self.datasets[name] = found

    # -------------------------------------------------------------- dedups
    def _dedup_declaration(self, stmt: sqlast.SqlStatement, clause: sqlast.DedupClause) -> None:
        """``-- sjoin: dedup ON (keys) [WITHIN WATERMARK]`` and then ``CREATE TEMPORARY VIEW d
        AS SELECT * FROM STREAM(input) [WATERMARK ...] [AS alias]`` in the schema file (a
        STREAMING TABLE for a dedup no relation reads): the dedup a Python flow of the
        pipeline runs (SDP's SQL has no dropDuplicates), of its one read, as sjoin's pipeline
        target declares it; the read is one more read of its input (the stream's watermark,
        or a watermark on a view's output, as in any query)."""
        if not (
            isinstance(stmt, sqlast.CreateDataset)
            and stmt.kind in ("temporary_view", "streaming_table")
            and stmt.query is not None
            and stmt.columns is None
            and _dedup_read(stmt.query) is not None
        ):
            self._error(
                "a dedup is declared by a query of its one input",
                stmt.span,
                "not a dedup's declaration",
                "after `-- sjoin: dedup ON (col, ...)`, write CREATE TEMPORARY VIEW name AS "
                "SELECT * FROM STREAM(input) [WATERMARK col DELAY OF INTERVAL ...] [AS alias] "
                "(a STREAMING TABLE when no relation of the pipeline reads it)",
            )
            return
        name = stmt.name.text
        if name in self.datasets:
            self.diags.add(
                "E002",
                f"`{name}` is declared in {SCHEMA_FILE} and defined in the pipeline's SQL",
                stmt.name.span,
                "declared again",
                f"{SCHEMA_FILE} declares the dedups the pipeline runs in Python",
            )
            return
        view = stmt.kind == "temporary_view"
        found = _Dataset(name, "dedup", stmt.name.span, None, stmt.query, view, stmt)
        found.decl_span, found.dedup, found.what = stmt.span, clause, "a dedup of a Python flow"
        self.datasets[name] = found

    def _python_dedup(self, dataset: _Dataset, py: PythonDataset) -> None:
        """The Python definition of a declared dedup: a temporary view where the declaration
        is one (a streaming table elsewhere), whose last dedup call is the declared one."""
        clause = dataset.dedup
        assert clause is not None
        declared = "a temporary view" if dataset.view else "a streaming table"
        if (py.kind == "temporary_view") != dataset.view:
            self._error(
                f"`{py.name}` is declared as {declared} in {SCHEMA_FILE}, and Python defines "
                f"it with @dp.{py.kind}",
                py.span,
                f"not {declared}",
                "declare it as Python defines it: a temporary view is inlined into the flows "
                "that read it, a table is a query of its own",
            )
        keys = tuple(k.text for k in clause.keys)
        within = clause.within is not None
        wanted = "dropDuplicatesWithinWatermark" if within else "dropDuplicates"
        shown = f"{wanted}([{', '.join(repr(k) for k in keys)}])"
        if not py.dedups:
            self._error(
                f"the Python flow of `{py.name}` calls no dropDuplicates, and {SCHEMA_FILE} "
                f"declares it a dedup ({shown})",
                py.span,
                "no dedup here",
                "sjoin models the dedup the declaration says: make the flow run it, or remove "
                "the declaration",
            )
            return
        last = py.dedups[-1]
        if last.within == within and last.keys == keys:
            return
        method = "dropDuplicatesWithinWatermark" if last.within else "dropDuplicates"
        called = (
            f"{method}([{', '.join(repr(k) for k in last.keys)}])"
            if last.keys is not None
            else f"{method} on columns sjoin cannot read (not one list of string literals)"
        )
        self._error(
            f"the Python flow of `{py.name}` calls {called}, and {SCHEMA_FILE} declares {shown}",
            last.span,
            "not the declared dedup",
            "make the two agree: sjoin models the dedup the declaration says, SDP runs the flow",
        )

    def _undeclared_dedup(self, py: PythonDataset) -> None:
        """W011 at the dedup call of a Python dataset the schema file does not declare: sjoin
        runs no Python, so it checks no such dedup."""
        if not py.dedups:
            return
        self._warn(
            f"sjoin does not check the dedup of the Python flow `{py.name}`: {SCHEMA_FILE} "
            "does not declare it",
            py.dedups[-1].span,
            "not checked",
            f"declare it in {SCHEMA_FILE}: -- sjoin: dedup ON (col, ...) [WITHIN WATERMARK], "
            f"then CREATE TEMPORARY VIEW {py.name} AS SELECT * FROM STREAM(input) "
            "[WATERMARK ...] (a STREAMING TABLE when no relation reads it)",
        )

    def _dedup(self, dataset: _Dataset) -> None:
        """A declared dedup lowered: the .sjoin ``dedup d = input [AS a] ON (keys) [WITHIN
        WATERMARK]`` of its declaration's one read."""
        assert dataset.query is not None and dataset.dedup is not None
        read = _dedup_read(dataset.query)
        assert read is not None  # checked when declared
        side = self._read(read)
        if side is None:
            self.broken.add(dataset.name)
            return
        clause = dataset.dedup
        statement = ast.DedupDecl(
            ast.Ident(dataset.name, dataset.span),
            side.ref,
            clause.keys,
            clause.within,
            dataset.decl_span or dataset.span,
        )
        self.relations.append((dataset.name, [statement], {side.ref.name.text}))

    # -------------------------------------------------------------- streams and relations
    def _streams_and_relations(self) -> list[ast.Statement]:
        """Each query sjoin models, lowered (in ``self.relations``), then the streams they
        read with their watermarks."""
        self.taken = set(self.datasets) | self.broken
        for dataset in self.datasets.values():
            if dataset.kind in ("join", "aggregate", "union") and dataset.query is not None:
                self._relation(dataset)
            elif dataset.kind == "dedup":
                self._dedup(dataset)
            elif dataset.kind == "stateless" and dataset.query is not None:
                if dataset.columns is None or dataset.view:
                    self._relation(dataset)  # a filter and projection: a view
                else:
                    dataset.kind = "stream"  # a stream of its own: its columns are declared
        out: list[ast.Statement] = []
        for dataset in self.datasets.values():
            if dataset.kind == "table" and dataset.columns and dataset.source is not None:
                out.append(
                    ast.TableDecl(
                        ast.Ident(dataset.name, dataset.span),
                        dataset.columns,
                        dataset.source,
                        dataset.decl_span or dataset.span,
                    )
                )
                continue
            if dataset.kind != "stream" or dataset.columns is None:
                continue
            mark = self.watermarks.get(dataset.name)
            watermark = None
            if mark is not None:
                watermark = ast.WatermarkDecl(mark.column, mark.delay, mark.clause.span)
            out.append(
                ast.StreamDecl(
                    ast.Ident(dataset.name, dataset.span),
                    dataset.columns,
                    watermark,
                    dataset.source,
                    dataset.decl_span or dataset.span,
                )
            )
        return out

    def _ordered(self) -> list[ast.Statement]:
        """The relations, each after the relations it reads (SQL files may define them in
        any order); a cycle is refused."""
        pending = list(self.relations)
        running = {name for name, _, _ in self._run_views_only_read()}
        done: set[str] = {d.name for d in self.datasets.values() if d.kind in ("stream", "table")}
        out: list[ast.Statement] = []
        while pending:
            ready = [r for r in pending if r[2] <= done | {r[0]}]
            if not ready:
                for name, statements, _ in pending:
                    self._error(
                        f"`{name}` reads itself through the datasets it reads",
                        _span_of(statements[-1]),
                        "a cycle",
                    )
                break
            for item in ready:
                pending.remove(item)
                if item[0] in running:
                    out.extend(item[1])
                done.add(item[0])
        return out

    def _run_views_only_read(self) -> list[tuple[str, list[ast.Statement], set[str]]]:
        """The relations that run: SDP runs a temporary view only inlined into a flow that
        reads it, so a view that no table or flow reads (through other views) runs nowhere:
        W011, and it is left out (its errors would be no error of the pipeline's)."""
        reads = {name: depends for name, _, depends in self.relations}
        views = {n for n in reads if self.datasets.get(n) is not None and self.datasets[n].view}
        running: set[str] = set()
        todo = [n for n in reads if n not in views]
        # a dataset left out by its own error still reads what it names: SDP would run the
        # views it reads inlined there, so they run (no W011 cascading from that error)
        for name in sorted(self.broken):
            dataset = self.datasets.get(name)
            if dataset is not None and not dataset.view:
                queries = [dataset.query, *(f.query for f in dataset.flows)]
                todo += [n for q in queries if q is not None for n in _read_names(q)]
        while todo:
            name = todo.pop()
            if name in running:
                continue
            running.add(name)
            todo.extend(d for d in reads.get(name, ()) if d in reads)
        if any(name not in self.datasets for name in self.broken):
            return [r for r in self.relations if r[0] in running]  # unknown readers: no W011
        for name in sorted(views - running):
            self._warn(
                f"the temporary view `{name}` runs nowhere: no table or flow reads it",
                self.datasets[name].span,
                "not checked",
                "SDP runs a view inlined into the flows that read it; read it, or make it a "
                "streaming table",
            )
        return [r for r in self.relations if r[0] in running]

    def _fresh(self, base: str) -> str:
        name = base
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        return name

    def _relation(self, dataset: _Dataset) -> None:
        query = dataset.query
        assert query is not None
        name = ast.Ident(dataset.name, dataset.span)
        statement_span = dataset.statement.span if dataset.statement else dataset.span
        if query.union_all:
            found = self._union(name, query, statement_span)
        else:
            found = self._query(name, query, statement_span)
        if found is None:
            self.broken.add(dataset.name)
            return
        statements, depends = found
        self.relations.append((dataset.name, statements, depends))

    def _union(
        self, name: ast.Ident, query: sqlast.Query, statement_span: Span
    ) -> tuple[list[ast.Statement], set[str]] | None:
        """``q1 UNION ALL q2 ...``: Spark's Union of the branches, each keeping its own
        watermark.  A branch that is ``SELECT * FROM STREAM(r)`` is ``r`` itself; any other
        is a relation of its own (a view, join or aggregate named ``<name>_<n>``) that the
        union reads."""
        statements: list[ast.Statement] = []
        depends: set[str] = set()
        inputs: list[ast.Ident] = []
        ok = True
        for number, branch in enumerate((query, *query.union_all), 1):
            plain = self._plain_read(branch)
            if plain is not None:
                side = self._read(plain)
                if side is None:
                    ok = False
                    continue
                inputs.append(ast.Ident(side.ref.name.text, branch.span))
                depends.add(side.ref.name.text)
                continue
            part = ast.Ident(self._fresh(f"{name.text}_{number}"), branch.span)
            found = self._query(part, branch, branch.span)
            if found is None:
                ok = False
                continue
            statements.extend(found[0])
            depends |= found[1]
            inputs.append(part)
        if not ok:
            return None
        statements.append(ast.UnionDecl(name, tuple(inputs), statement_span))
        return statements, depends

    def _plain_read(self, query: sqlast.Query) -> sqlast.TableRead | None:
        """The read of a union's branch that is a whole relation as it is (``SELECT * FROM
        STREAM(r) [WATERMARK ...]``, the watermark on a stream): the union reads ``r``."""
        if (
            query.joins
            or query.where is not None
            or query.group_by is not None
            or query.distinct is not None
            or not isinstance(query.source, sqlast.TableRead)
            or len(query.select) != 1
            or not isinstance(query.select[0].expr, exp.Star)
        ):
            return None
        read = query.source
        dataset = self.datasets.get(read.name.text)
        if read.watermark is not None and (dataset is None or dataset.kind != "stream"):
            return None  # a watermark on a derived relation's read: a view that holds it
        return read

    def _query(
        self, name: ast.Ident, query: sqlast.Query, statement_span: Span
    ) -> tuple[list[ast.Statement], set[str]] | None:
        """The statements of one query (no UNION ALL), and the relations it reads."""
        reads = [query.source, *(j.read for j in query.joins)]
        sides = []
        for read in reads:
            side = self._read(read)
            if side is None:
                return None
            sides.append(side)
        depends = {s.ref.name.text for s in sides}
        if query.distinct is not None and query.group_by is not None:
            self._error(
                "SELECT DISTINCT with GROUP BY",
                query.distinct,
                "not modelled",
                "Spark runs it as two aggregates, one over the other: write the GROUP BY in a "
                "temporary view, and SELECT DISTINCT from it",
            )
            return None
        if len(query.joins) > 1:
            self._error(
                "more than one join in one query",
                query.joins[1].how_span,
                "second join",
                "sjoin models a join of two relations per query: define the first join as a "
                "temporary view (CREATE TEMPORARY VIEW v AS ...) and join `STREAM(v)`",
            )
            return None
        if not self._subquery_columns(query, sides):
            return None
        substitute = _substitution([s for s in sides])
        # `*` of a subquery that adds columns (windows) is not the stream's `*`
        projected = {
            s.alias
            for s in sides
            if s.columns is not None
            and (not s.star or any(not isinstance(e, exp.Column) for e in s.columns.values()))
        }
        for item in query.select:
            if (
                projected
                and _is_star(item.expr)
                and (not isinstance(item.expr, exp.Column) or item.expr.table in projected)
            ):
                self._error(
                    "`*` over a subquery's columns",
                    item.span,
                    "not modelled",
                    "name the columns: sjoin expands `*` to the stream's own columns",
                )
                return None
        group_by = query.group_by
        if query.distinct is not None:
            expanded = self._distinct_items(query, sides)
            if expanded is None:
                return None
            query = dc_replace(query, select=expanded)
            group_by = tuple(i.expr for i in expanded)
        select = tuple(_item(i, substitute) for i in query.select)
        statements: list[ast.Statement] = []
        if query.joins:
            step = query.joins[0]
            how = cast(JoinType, step.how)  # a CROSS JOIN is refused when parsed
            assert step.on is not None  # a join without ON is refused when parsed
            window = next(
                (c for c in step.on.find_all(exp.Anonymous) if c.name.lower() == "window"), None
            )
            if window is not None:
                self._error(
                    "window() in a join's ON",
                    _span_of_expr(window),
                    "Spark cannot resolve it here",
                    "Spark resolves window() only in an operator of one input (a join's ON "
                    "fails with INTERNAL_ERROR): project it in a subquery, "
                    "(SELECT *, window(t, '10 minutes') AS w FROM STREAM(a) WATERMARK ...) AS "
                    "x, and join on x.w = y.w",
                )
                return None
            on = _rewrite(step.on, substitute)
            left, right = sides
            where = None
            if query.where is not None:
                found = self._where(step, right, query.where, substitute, on)
                if found is None:
                    return None
                how, where = found
            if how == "left_anti" and step.how == "left_anti":
                self._error(
                    "Spark has no LEFT ANTI join of two streams",
                    step.how_span,
                    "not a streaming join",
                    "Spark refuses it (UnsupportedOperationChecker: left anti joins with a "
                    "streaming right side). Write the anti join as Spark runs it: LEFT OUTER "
                    "JOIN, then WHERE y.k IS NULL on a key column of the right side",
                )
                return None
            for side in (left, right):
                if side.marker is not None and side is not right:
                    self._error("a marker column on the left side", side.span, "not modelled")
            if group_by is None:
                statements.append(
                    ast.JoinDecl(
                        name, left.ref, how, right.ref, on, select or None,
                        statement_span, step.how_span, where,
                    )
                )  # fmt: skip
            else:
                join_name = ast.Ident(self._fresh(f"{name.text}_join"), query.from_span)
                items, rename = _join_items(query, group_by, substitute)
                statements.append(
                    ast.JoinDecl(
                        join_name, left.ref, how, right.ref, on, tuple(items),
                        query.from_span, step.how_span, where,
                    )
                )  # fmt: skip
                group = tuple(_rename(g, substitute, rename, join_name.text) for g in group_by)
                join_text = join_name.text

                def renamed(node: exp.Expression) -> exp.Expression:
                    return _rename(node, substitute, rename, join_text)

                agg_select = tuple(_item(i, renamed) for i in query.select)
                statements.append(
                    ast.AggregateDecl(
                        name,
                        ast.RelRef(join_name, None, query.from_span),
                        group,
                        agg_select,
                        None,
                        statement_span,
                    )
                )
        elif group_by is not None:
            side = sides[0]
            # a Filter below the aggregate: the aggregate's WHERE, as Spark plans it
            where = _rewrite(query.where, substitute) if query.where is not None else None
            group = tuple(_rewrite(g, substitute) for g in group_by)
            statements.append(
                ast.AggregateDecl(name, side.ref, group, select, None, statement_span, where)
            )
        else:  # a filter and projection of one relation: a view
            side = sides[0]
            where = _rewrite(query.where, substitute) if query.where is not None else None
            statements.append(ast.ViewDecl(name, select, side.ref, where, statement_span))
        return statements, depends

    def _distinct_items(
        self, query: sqlast.Query, sides: list[_Side]
    ) -> tuple[ast.SelectItem, ...] | None:
        """``SELECT DISTINCT``'s items, each a grouping key: Spark's optimizer runs it as an
        Aggregate grouping by every output column (ReplaceDistinctWithAggregate), a streaming
        aggregate.  A `*` is the stream's declared columns; of any other relation the lowering
        does not know them (E033: name them)."""
        items: list[ast.SelectItem] = []
        for item in query.select:
            if not _is_star(item.expr):
                items.append(item)
                continue
            qualifier = item.expr.table if isinstance(item.expr, exp.Column) else ""
            for side in sides:
                if qualifier and qualifier not in (side.alias, side.ref.name.text):
                    continue
                dataset = self.datasets.get(side.ref.name.text)
                columns = dataset.columns if dataset is not None else None
                if (
                    side.columns is not None
                    or dataset is None
                    or columns is None
                    or (dataset.kind != "stream")
                ):
                    self._error(
                        "SELECT DISTINCT * of a relation whose columns sjoin does not know here",
                        item.span,
                        "name the columns",
                        "Spark runs SELECT DISTINCT as an aggregate grouping by every column: "
                        "name them (SELECT DISTINCT x.a, x.b ...)",
                    )
                    return None
                for column in columns:
                    ref = exp.column(column.name.text, table=side.alias if len(sides) > 1
                                     or qualifier else None)  # fmt: skip
                    for part in ref.walk():
                        annotate.set_span(part, item.span)
                    items.append(ast.SelectItem(ref, None, item.span))
        return tuple(items)

    def _where(
        self,
        step: sqlast.JoinStep,
        right: _Side,
        written: exp.Expression,
        substitute: Substitute,
        on: exp.Expression,
    ) -> tuple[JoinType, exp.Expression | None]:
        """A join's WHERE: a Filter above the join, the .sjoin join's ``WHERE`` (the planner
        does with it what Spark's optimizer does: EliminateOuterJoin, PushPredicateThroughJoin);
        but ``LEFT OUTER JOIN ... WHERE y.k IS NULL`` (a right key, or the right side's
        marker), as sjoin's pipeline target writes a LEFT ANTI join, is that anti join."""
        how = cast(JoinType, step.how)
        if how == "left_outer" and _anti_filter(written, on, right):
            return "left_anti", None
        return how, _rewrite(written, substitute)

    # -------------------------------------------------------------- reads
    def _read(self, read: sqlast.Read) -> _Side | None:
        if isinstance(read, sqlast.SubqueryRead):
            return self._subquery(read)
        if isinstance(read.name, sqlast.PathName):
            self._error(
                f"`{read.name.format}.`...`` read in a query: files read in batch, whose "
                "columns sjoin does not know",
                read.span,
                "a batch read of files",
                "define the files as a static table with its columns, and join that: CREATE "
                f"MATERIALIZED VIEW dim (col TYPE, ...) AS SELECT * FROM {read.name.format}."
                "`path`",
            )
            return None
        dataset = self.datasets.get(read.name.text)
        if dataset is None:
            if read.name.text not in self.broken:
                self.diags.add(
                    "E003",
                    f"unknown dataset `{read.name.text}`",
                    read.name.span,
                    "not defined in the pipeline",
                    "define it in the pipeline's SQL, or declare the columns of a table the "
                    f"pipeline defines in Python in {SCHEMA_FILE}: CREATE STREAMING TABLE "
                    f"{read.name.text} (col TYPE, ...)",
                )
            return None
        if dataset.kind in ("join", "aggregate", "union", "dedup") or (
            dataset.kind == "stateless" and dataset.view
        ):
            if not dataset.view:
                self._error(
                    f"`{dataset.name}` is a streaming table: reading it starts a second "
                    "streaming query, and no watermark crosses a table",
                    read.name.span,
                    "a second query",
                    f"make `{dataset.name}` a temporary view (CREATE TEMPORARY VIEW "
                    f"{dataset.name} AS ...): SDP inlines a view into the flow that reads it, "
                    "so the chain is one streaming query, as sjoin models it",
                )
                return None
            mark = None
            if read.watermark is not None:
                mark = self._view_watermark(dataset.name, read.watermark, read.alias)
                if mark is None:
                    return None
            return _Side(ast.RelRef(read.name, read.alias, read.span, mark), read.span)
        if dataset.kind == "table":
            if read.stream:
                self._error(
                    f"`{dataset.name}` is a static table (a materialized view of files) read "
                    "with STREAM",
                    read.span,
                    "not a stream",
                    f"read it in batch, without STREAM: `JOIN {dataset.name} AS t ON ...` (a "
                    "stream-static join)",
                )
                return None
            if read.watermark is not None:
                self.diags.add(
                    "E038",
                    f"a watermark on a read of a table: `{dataset.name}` is a static table, "
                    "read in batch; a streaming query reads it only as one side of a join with "
                    "a stream",
                    read.watermark.span,
                    "a static table",
                    "remove the WATERMARK clause: a static table has no event time",
                )
                return None
            return _Side(ast.RelRef(read.name, read.alias, read.span), read.span)
        if dataset.kind == "batch":
            self._error(
                f"`{dataset.name}` is {dataset.what}: a streaming join reads streams",
                read.name.span,
                "not a stream",
            )
            return None
        if dataset.kind == "stateless" and dataset.columns is None:
            self._error(
                f"the columns of `{dataset.name}` are not known",
                read.name.span,
                "columns unknown",
                f"declare them: CREATE STREAMING TABLE {dataset.name} (col TYPE, ...) AS ...",
            )
            return None
        if dataset.kind == "python" and dataset.columns is None:
            if dataset.python is not None and dataset.python.dedups:
                self._error(
                    f"`{dataset.name}` is a dedup of a Python flow that {SCHEMA_FILE} does "
                    "not declare",
                    read.name.span,
                    "not declared",
                    f"declare it in {SCHEMA_FILE} next to spark-pipeline.yml: -- sjoin: dedup "
                    f"ON (col, ...) [WITHIN WATERMARK], then CREATE TEMPORARY VIEW {dataset.name} "
                    "AS SELECT * FROM STREAM(input) [WATERMARK ...]",
                )
                return None
            self._error(
                f"the columns of `{dataset.name}`, {dataset.what}, are not known",
                read.name.span,
                "columns unknown",
                f"declare them in {SCHEMA_FILE} next to spark-pipeline.yml: CREATE STREAMING "
                f"TABLE {dataset.name} (col TYPE, ...); or run with --trace to infer them",
            )
            return None
        if dataset.kind == "python":
            dataset.kind = "stream"
        if dataset.columns is None:
            self._error(
                f"the columns of `{dataset.name}` are not known",
                read.name.span,
                "columns unknown",
                f"declare them: CREATE STREAMING TABLE {dataset.name} (col TYPE, ...)",
            )
            return None
        if dataset.view:
            self._error(
                f"`{dataset.name}` is a view that keeps no state",
                read.name.span,
                "not modelled",
                "sjoin joins streams and joins' and aggregates' views: put the view's filter "
                "in the join's ON",
            )
            return None
        if not read.stream:
            self._error(
                f"`{dataset.name}` is read without STREAM: a batch read of a table",
                read.name.span,
                "a batch read",
                f"a stream-stream join reads both sides as streams: STREAM({dataset.name}); a "
                "stream-static join reads a static table, in sjoin a materialized view of "
                "files: CREATE MATERIALIZED VIEW name (col TYPE, ...) AS SELECT * FROM "
                "parquet.`path`",
            )
            return None
        if not self._watermark(dataset.name, read.watermark, read.name, read.alias):
            return None
        return _Side(ast.RelRef(read.name, read.alias, read.span), read.span)

    def _view_watermark(
        self, view: str, clause: sqlast.WatermarkClause, alias: ast.Ident | None
    ) -> ast.WatermarkDecl | None:
        """``STREAM(v) WATERMARK t DELAY OF ...`` on a view of a join or aggregate: Spark's
        withWatermark on its output, the .sjoin ``v watermark t delay ...`` (whether Spark
        runs it is the planner's question: E034)."""
        column = clause.column
        qualifiers = {view} | ({alias.text} if alias else set())
        if (
            not isinstance(column, exp.Column)
            or (column.table and column.table not in qualifiers)
            or (clause.alias is not None and clause.alias.text != column.name)
        ):
            self._error(
                "a watermark on an expression, or under another name",
                _span_of_expr(column),
                "not modelled",
                f"sjoin models a watermark on a TIMESTAMP column of `{view}`: "
                "WATERMARK col DELAY OF INTERVAL ...",
            )
            return None
        if clause.delay is None:
            return None  # its interval was refused
        span = annotate.span(column.this) or _span_of_expr(column)
        return ast.WatermarkDecl(ast.Ident(column.name, span), clause.delay, clause.span)

    def _watermark(
        self,
        stream: str,
        clause: sqlast.WatermarkClause | None,
        name: ast.Ident,
        alias: ast.Ident | None,
        columns: dict[str, exp.Expression] | None = None,
    ) -> bool:
        """Record the watermark a read of ``stream`` gives; every read gives the same one."""
        mark = None
        if clause is not None:
            column = clause.column
            qualifiers = {stream, name.text} | ({alias.text} if alias else set())
            if (
                not isinstance(column, exp.Column)
                or (column.table and column.table not in qualifiers)
                or (clause.alias is not None and clause.alias.text != column.name)
            ):
                self._error(
                    "a watermark on an expression, or under another name",
                    _span_of_expr(column),
                    "not modelled",
                    "sjoin models a watermark on a TIMESTAMP column of the stream: "
                    "WATERMARK col DELAY OF INTERVAL ...",
                )
                return False
            if clause.delay is None:
                return False  # its interval was refused
            col_name = column.name
            if columns is not None and col_name in columns:
                inner = columns[col_name]
                if isinstance(inner, exp.Column):
                    col_name = inner.name
            span = annotate.span(column.this) or _span_of_expr(column)
            mark = _Watermark(ast.Ident(col_name, span), clause.delay, clause)
        if stream not in self.watermarks:
            self.watermarks[stream] = mark
            self.first_read[stream] = clause.span if clause is not None else name.span
            return True
        earlier = self.watermarks[stream]
        same = (earlier is None and mark is None) or (
            earlier is not None
            and mark is not None
            and earlier.column.text == mark.column.text
            and _delay(earlier.delay) == _delay(mark.delay)
        )
        if same:
            return True
        shown = "no watermark" if earlier is None else (
            f"WATERMARK {earlier.column.text} DELAY OF {earlier.delay.amount} "
            f"{earlier.delay.unit.text}"
        )  # fmt: skip
        self._error(
            f"`{stream}` is read with another watermark than before ({shown})",
            clause.span if clause is not None else name.span,
            "another watermark",
            "sjoin models one watermark per stream: read it with the same WATERMARK clause "
            "in every query",
        )
        return False

    def _subquery(self, read: sqlast.SubqueryRead) -> _Side | None:
        inner = read.query
        refuse = None
        if inner.joins or inner.group_by is not None or inner.distinct is not None:
            refuse = "a subquery that joins or aggregates"
        elif inner.union_all:
            refuse = "a subquery of a UNION ALL"
        elif inner.where is not None:
            refuse = "a subquery with WHERE"
        elif not isinstance(inner.source, sqlast.TableRead):
            refuse = "a subquery of a subquery"
        if refuse is not None:
            self._error(
                refuse,
                read.span,
                "not modelled",
                "sjoin reads a subquery that only projects a stream's columns and windows; "
                "define the rest as a temporary view",
            )
            return None
        assert isinstance(inner.source, sqlast.TableRead)
        source = inner.source
        alias = read.alias or ast.Ident(source.name.text, source.name.span)
        columns: dict[str, exp.Expression] = {}
        marker = None
        star = False
        recomputed: set[str] = set()
        windows: set[str] = set()
        for item in inner.select:
            node = item.expr
            if isinstance(node, exp.Star) or (
                isinstance(node, exp.Column) and isinstance(node.this, exp.Star)
            ):
                star = True
                continue
            out_name = item.alias.text if item.alias else (
                node.name if isinstance(node, exp.Column) else None
            )  # fmt: skip
            if out_name is None:
                self._error("a subquery column without a name", item.span, "no name")
                return None
            if isinstance(node, exp.Column):
                columns[out_name] = exp.column(node.name)
            elif _is_recomputed(node) and item.alias is not None:
                time = node.expressions[0].expressions[0].name
                if time != out_name:
                    self._error("a recomputed time column under another name", item.span,
                                "not modelled")  # fmt: skip
                    return None
                recomputed.add(time)
                columns[out_name] = exp.column(time)
            elif isinstance(node, exp.Anonymous) and node.name.lower() == "window":
                windows.update(a.name for a in node.expressions[:1] if isinstance(a, exp.Column))
                columns[out_name] = node
            elif isinstance(node, exp.Boolean) and node.this is True:
                marker = out_name  # read only by `WHERE y.m IS NULL`: a left anti join
            else:
                self._error(
                    "a computed column in a subquery",
                    item.span,
                    "not modelled",
                    "sjoin reads a subquery that projects a stream's columns, windows of its "
                    "time (window(t, '10 minutes') AS w) and a marker (TRUE AS m); compute the "
                    "rest in the join's SELECT",
                )
                return None
        if recomputed - windows:
            self._error(
                "a time column recomputed without its window",
                read.span,
                "not modelled",
                "timestamp_micros(unix_micros(t)) drops t's watermark mark; sjoin reads it "
                "only beside a window of t",
            )
            return None
        side = self._read(
            sqlast.TableRead(source.name, source.stream, source.watermark, alias, source.span)
        )
        if side is None:
            return None
        if read.watermark is not None:
            dataset = self.datasets.get(source.name.text)
            if dataset is None or dataset.kind != "stream":
                self._error("a WATERMARK clause on a subquery of a join", read.watermark.span,
                            "not modelled")  # fmt: skip
                return None
            if source.watermark is not None:
                self._error("two WATERMARK clauses on one read", read.watermark.span,
                            "second watermark")  # fmt: skip
                return None
            del self.watermarks[source.name.text]
            if not self._watermark(source.name.text, read.watermark, source.name, alias, columns):
                return None
        mark = self.watermarks.get(source.name.text)
        time = mark.column.text if mark is not None else None
        kept = star or any(
            isinstance(e, exp.Column) and e.name == time and time not in recomputed
            for e in columns.values()
        )
        beside = None
        if time in windows and kept:  # two event-time columns: hazards judges it (E025)
            shown = [n for n, e in columns.items() if not isinstance(e, exp.Column)]
            beside = (time, shown[0])
        ref = ast.RelRef(source.name, alias, read.span, time_beside_window=beside)
        return _Side(ref, read.span, columns, marker, alias.text, star)

    def _subquery_columns(self, query: sqlast.Query, sides: list[_Side]) -> bool:
        """Each column of a subquery the query names is one the subquery projects (E004)."""
        projected = {s.alias: s for s in sides if s.columns is not None and not s.star}
        if not projected:
            return True
        nodes = [i.expr for i in query.select]
        nodes += [j.on for j in query.joins if j.on is not None]
        nodes += [n for n in (query.where, *(query.group_by or ())) if n is not None]
        for node in nodes:
            for column in node.find_all(exp.Column):
                side = projected.get(column.table)
                if side is None or isinstance(column.this, exp.Star):
                    continue
                assert side.columns is not None
                if column.name in side.columns or column.name == side.marker:
                    continue
                self.diags.add(
                    "E004",
                    f"`{side.alias}` has no column `{column.name}`: its subquery projects "
                    + ", ".join(f"`{n}`" for n in side.columns),
                    _span_of_expr(column),
                    "unknown column",
                )
                return False
        return True


# ------------------------------------------------------------------ helpers


@dataclass
class _Side:
    ref: ast.RelRef
    span: Span
    columns: dict[str, exp.Expression] | None = None  # a subquery's: name -> expression
    marker: str | None = None
    alias: str = ""
    star: bool = False  # a subquery's `*`: every column of its stream besides ``columns``

    def __post_init__(self) -> None:
        self.alias = self.alias or self.ref.alias_text


def _table_source(stmt: sqlast.CreateDataset) -> ast.FormatDecl | None:
    """The source of a static table: ``CREATE MATERIALIZED VIEW name (col TYPE, ...) AS
    SELECT * FROM parquet.`path` [WITH ('option' = 'value', ...)]``, files read in batch
    with the columns it declares (the .sjoin ``table name (...) from parquet (path = '...',
    option = 'value')``: the path first, then the read's options).  The SELECT is ``*``, or
    the declared columns in order, each ``col`` or ``CAST(col AS TYPE) AS col`` of its
    declared type: sjoin's pipeline target writes the casts (SDP refuses a materialized view
    whose query's types are not its declared ones, backends/pipeline.py ``table_sql``)."""
    query = stmt.query
    if stmt.columns is None or query is None:
        return None
    read = query.source
    if (
        not isinstance(read, sqlast.TableRead)
        or not isinstance(read.name, sqlast.PathName)
        or read.stream
        or read.options is None
        or query.joins
        or query.union_all
        or query.where is not None
        or query.group_by is not None
        or query.distinct is not None
        or not _table_items(query.select, stmt.columns)
    ):
        return None
    span = read.name.span
    path = ast.OptionDecl(ast.Ident("path", span), ast.Value(read.name.text, "string", span), span)
    return ast.FormatDecl(ast.Ident(read.name.format, span), (path, *read.options), read.span)


def _table_items(items: tuple[ast.SelectItem, ...], columns: tuple[ast.ColumnDecl, ...]) -> bool:
    """Whether a static table's SELECT is ``*``, or its declared columns in order, each the
    column itself or cast to its declared type, under its own name."""
    if [type(i.expr) for i in items] == [exp.Star]:
        return True
    if len(items) != len(columns):
        return False
    for item, column in zip(items, columns, strict=True):
        name = column.name.text
        expr = item.expr
        if type(expr) is exp.Cast and not annotate.is_typed_literal(expr):
            ref = annotate.type_ref(expr)
            declared = column.type
            if not (
                isinstance(ref, ast.TypeRef)
                and ref.name.lower() == declared.name.lower()
                and ref.params == declared.params
            ):
                return False
            expr = expr.this
        if not (isinstance(expr, exp.Column) and not expr.table and expr.name == name):
            return False
        if item.alias is not None and item.alias.text != name:
            return False
    return True


def _dedup_read(query: sqlast.Query) -> sqlast.TableRead | None:
    """The one read of a dedup's declaration, ``SELECT * FROM read`` (None: another query)."""
    if (
        query.joins
        or query.union_all
        or query.where is not None
        or query.group_by is not None
        or query.distinct is not None
        or not isinstance(query.source, sqlast.TableRead)
        or len(query.select) != 1
        or not isinstance(query.select[0].expr, exp.Star)
    ):
        return None
    return query.source


def _query_kind(query: sqlast.Query) -> str:
    if query.union_all:
        return "union"
    if query.joins:
        return "join"
    if query.group_by is not None or query.distinct is not None:
        return "aggregate"
    return "stateless"


def _as_target(lowering: Lowering, flow: sqlast.CreateFlow, target: _Dataset) -> sqlast.Query:
    """A flow's query as its table's: with BY NAME its columns must be the table's (when
    the table declares them); without, they take the table's names in order."""
    query = flow.query
    if target.columns is None:
        return query
    names = [c.name.text for c in target.columns]
    if any(_is_star(i.expr) for i in query.select):
        if not flow.by_name:
            lowering._error(
                "INSERT INTO a table with declared columns from SELECT *",
                flow.query.span,
                "not modelled",
                "name the columns, or write INSERT INTO ... BY NAME",
            )
        return query
    if flow.by_name:
        given = [_item_name(i) for i in query.select]
        if sorted(n for n in given if n) != sorted(names):
            lowering._error(
                f"the flow's columns ({', '.join(n or '?' for n in given)}) are not the "
                f"columns of `{target.name}` ({', '.join(names)})",
                flow.query.span,
                "other columns",
            )
        return query
    if len(query.select) != len(names):
        lowering._error(
            f"the flow writes {len(query.select)} columns into `{target.name}`, which has "
            f"{len(names)}",
            flow.query.span,
            "other columns",
        )
        return query
    items = tuple(
        ast.SelectItem(i.expr, ast.Ident(n, i.alias.span if i.alias else i.span), i.span)
        for i, n in zip(query.select, names, strict=True)
    )
    return dc_replace(query, select=items)  # a union's first branch names its columns


def _is_star(node: exp.Expression) -> bool:
    return isinstance(node, exp.Star) or (
        isinstance(node, exp.Column) and isinstance(node.this, exp.Star)
    )


def _item_name(item: ast.SelectItem) -> str | None:
    if item.alias is not None:
        return item.alias.text
    return item.expr.name if isinstance(item.expr, exp.Column) else None


def _setting_text(name: str, value: str) -> str:
    """A conf's value as the `set` statement's value."""
    text = value  # as Spark has it: YAML's scalar, or SET's value (sqlparse.set_value)
    if name == "state_store":
        for short, provider in settings.STATE_STORE_PROVIDERS.items():
            if text == provider:
                return short
        return text
    spec = settings.SETTINGS[name]
    if spec.kind in ("bool", "positive_int"):
        text = text.strip()  # Spark trims a boolean's and a number's text
    if spec.kind in ("bool", "choice"):
        return text.lower()
    return text


def _read_names(query: sqlast.Query) -> set[str]:
    """The datasets ``query`` reads by name, in its subqueries too."""
    found: set[str] = set()
    todo = [query]
    while todo:
        q = todo.pop()
        todo.extend(q.union_all)
        for read in (q.source, *(j.read for j in q.joins)):
            if isinstance(read, sqlast.TableRead):
                found.add(read.name.text)
            else:
                todo.append(read.query)
    return found


def _delay(duration: ast.Duration) -> tuple[str, str]:
    found = single_unit([(duration.amount, duration.unit.text)])
    return found if isinstance(found, tuple) else (duration.amount, duration.unit.text.upper())


def _spanned(node: exp.Expression, span: Span) -> exp.Expression:
    annotate.set_span(node, span)
    return node


def _span_of(statement: ast.Statement) -> Span:
    return statement.span


def _span_of_expr(node: exp.Expression) -> Span:
    return ast.span_of(node)


def _is_recomputed(node: exp.Expression) -> bool:
    """``timestamp_micros(unix_micros(t))``: t without its watermark mark."""
    return (
        isinstance(node, exp.Anonymous)
        and node.name.lower() == "timestamp_micros"
        and len(node.expressions) == 1
        and isinstance(node.expressions[0], exp.Anonymous)
        and node.expressions[0].name.lower() == "unix_micros"
        and len(node.expressions[0].expressions) == 1
        and isinstance(node.expressions[0].expressions[0], exp.Column)
    )


Substitute = Callable[[exp.Expression], exp.Expression]


def _substitution(sides: list[_Side]) -> Substitute:
    """What a reference to a subquery's column stands for (``x.w`` -> ``window(x.t, ...)``),
    and window durations written as text (``'10 minutes'``) as intervals."""
    by_alias = {s.alias: s for s in sides if s.columns is not None}

    def fix(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
            side = by_alias.get(node.table) if node.table else None
            if side is None and not node.table:  # unqualified: when no other side may hold it
                owners = [s for s in by_alias.values() if node.name in (s.columns or {})]
                known = all(s.columns is not None and not s.star for s in sides)
                side = owners[0] if len(owners) == 1 and known else None
            if side is not None and side.columns is not None and node.name in side.columns:
                inner = side.columns[node.name]
                span = annotate.span(node) or Span(0, 0)
                found = _qualified(copy_tree(inner), side.alias, span)
                if isinstance(found, exp.Anonymous):  # a window the subquery computes
                    annotate.set_computed_below(found, node.name)
                return found
        if isinstance(node, exp.Anonymous) and node.name.lower() == "window":
            return _window_intervals(node)
        return node

    return lambda node: node.transform(fix)


def _qualified(node: exp.Expression, alias: str, span: Span) -> exp.Expression:
    """A subquery's column expression as the outer query reads it: its columns qualified
    by the subquery's alias, every node at the place of the reference."""
    for sub in node.walk():
        if isinstance(sub, exp.Column) and not sub.table:
            sub.set("table", exp.to_identifier(alias))
        annotate.set_span(sub, span)
    return _window_intervals(node) if isinstance(node, exp.Anonymous) else node


def _window_intervals(node: exp.Expression) -> exp.Expression:
    """``window(t, '10 minutes')``'s durations as intervals, as a .sjoin spec writes them."""
    if not isinstance(node, exp.Anonymous) or node.name.lower() != "window":
        return node
    args = list(node.expressions)
    changed = False
    for i, arg in enumerate(args[1:], start=1):
        if isinstance(arg, exp.Literal) and arg.is_string:
            parts = re.fullmatch(r"\s*(?:interval\s+)?([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)\s*",
                                 arg.this, re.IGNORECASE)  # fmt: skip
            if parts is None:
                continue
            found = single_unit([(parts[1], parts[2])])
            if isinstance(found, str):
                continue
            interval = exp.Interval(this=exp.Literal.string(found[0]), unit=exp.Var(this=found[1]))
            span = annotate.span(arg) or Span(0, 0)
            annotate.set_span(interval, span)
            annotate.set_unit_span(interval, span)
            args[i] = interval
            changed = True
    if not changed:
        return node
    out = exp.Anonymous(this=node.this, expressions=args)
    call_span, name_span = annotate.span(node), annotate.name_span(node)
    if call_span is not None:
        annotate.set_span(out, call_span)
    if name_span is not None:
        annotate.set_name_span(out, name_span)
    return out


def _rewrite(node: exp.Expression, substitute: Substitute) -> exp.Expression:
    return substitute(copy_tree(node))


def _item(item: ast.SelectItem, substitute: Substitute) -> ast.SelectItem:
    if _is_star(item.expr):
        return item
    expr = _rewrite(item.expr, substitute)
    alias = item.alias
    written = item.expr
    if (
        alias is None
        and isinstance(written, exp.Column)
        and (not isinstance(expr, exp.Column) or expr.name != written.name)
    ):  # x.w -> window(...) AS w; x.k -> join.x_k AS k: the column keeps its name
        alias = ast.Ident(written.name, _span_of_expr(written))
    return ast.SelectItem(expr, alias, item.span)


def _anti_filter(where: exp.Expression, on: exp.Expression, right: _Side) -> bool:
    """``y.k IS NULL`` for a column k of the right side that is never NULL in a matched row:
    its marker, or a column of an equality of ON (`x.a = y.k`)."""
    if not isinstance(where, exp.Is) or not isinstance(where.expression, exp.Null):
        return False
    column = where.this
    if not isinstance(column, exp.Column):
        return False
    if column.table not in ("", right.alias, right.ref.name.text):
        return False
    if right.marker is not None and column.name == right.marker:
        return True
    for part in conjuncts(on):
        if isinstance(part, exp.EQ):
            for a, b in ((part.this, part.expression), (part.expression, part.this)):
                if (
                    isinstance(a, exp.Column)
                    and a.name == column.name
                    and a.table in (right.alias, right.ref.name.text)
                    and isinstance(b, exp.Column)
                    and b.table not in (right.alias, right.ref.name.text, "")
                ):
                    return True
    return False


def _join_items(
    query: sqlast.Query, group_by: tuple[exp.Expression, ...], substitute: Substitute
) -> tuple[list[ast.SelectItem], dict[tuple[str, str], str]]:
    """The columns an aggregate over a join reads, as the join's SELECT: ``alias.col`` named
    ``col`` where the name is unique, else ``alias_col``."""
    found: dict[tuple[str, str], exp.Column] = {}
    for node in _aggregate_nodes(query, group_by):
        for column in _rewrite(node, substitute).find_all(exp.Column):
            if isinstance(column.this, exp.Star):
                continue
            found.setdefault((column.table, column.name), column)
    counts: dict[str, int] = {}
    for _table, name in found:
        counts[name] = counts.get(name, 0) + 1
    rename: dict[tuple[str, str], str] = {}
    items = []
    for (table, name), column in found.items():
        out = name if counts[name] == 1 or not table else f"{table}_{name}"
        rename[(table, name)] = out
        span = annotate.span(column) or query.from_span
        ref = copy_tree(column)
        items.append(ast.SelectItem(ref, ast.Ident(out, span), span))
    return items, rename


def _aggregate_nodes(
    query: sqlast.Query, group_by: tuple[exp.Expression, ...]
) -> Iterable[exp.Expression]:
    yield from (i.expr for i in query.select if not _is_star(i.expr))
    yield from group_by


def _rename(
    node: exp.Expression,
    substitute: Substitute,
    rename: dict[tuple[str, str], str],
    join: str,
) -> exp.Expression:
    def fix(sub: exp.Expression) -> exp.Expression:
        if isinstance(sub, exp.Column) and not isinstance(sub.this, exp.Star):
            out = rename.get((sub.table, sub.name))
            if out is not None:
                new = exp.column(out, table=join)
                span = annotate.span(sub) or Span(0, 0)
                for part in new.walk():
                    annotate.set_span(part, span)
                return new
        return sub

    return _rewrite(node, substitute).transform(fix)


def lower(given: PipelineInput, diags: Diagnostics) -> ast.SpecFile:
    """The .sjoin AST of a pipeline: every statement's spans point into its files."""
    return Lowering(given, diags).lower()


_SJOIN_HELP = (
    (
        re.compile(r"declare a watermark on ((?:`(?:[^`]|``)*`(?: and )?)+)"),
        lambda m: (
            "read "
            + m[1]
            + " with a WATERMARK clause: STREAM("
            + (m[1][1:-1] if m[1].count("`") == 2 else "name")
            + ") WATERMARK col DELAY OF INTERVAL ..."
        ),
    ),
    (
        re.compile(r"`set ([a-z_]+) = ([^`]*)`"),
        lambda m: f"a `-- sjoin: set {m[1]} = {m[2]}` line",
    ),
)


def sql_help(text: str | None) -> str | None:
    """A help that tells what to write in .sjoin terms, told in a pipeline's SQL: where the
    watermark goes, how a setting without a Spark conf is set."""
    if text is None:
        return None
    for pattern, replace in _SJOIN_HELP:
        text = pattern.sub(replace, text)
    return text
