"""`sjoin run --report FILE`: one self-contained HTML page that shows a run batch by batch.

The progress lines are exact but hard to read over many batches; a picture shows at a glance
whether the watermark advances, whether each operator's state stays bounded and when rows
come out.  The page holds, per query, three plots (watermark, state rows per operator, output
rows per relation) and the same figures as a table.  It needs nothing but itself: the plots
are matplotlib SVG inlined into the HTML, with text kept as text (``svg.fonttype: none``), so
the page opens from ``file://`` offline and its numbers can be searched and copied.

matplotlib is an optional extra (``pip install 'sjoin[report]'``) imported only here and only
when a report is made, so ``sjoin run`` without ``--report`` does not pay for it.

The figures come from the runtime's §7 progress records as they are, plus each join's state
rows per side (``BatchOutput.state_sides``), which the progress record (like Spark's) only
gives as their sum, ``numRowsTotal``.
"""

from __future__ import annotations

import html
import io
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import singledispatch
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..compiler.describe.capacity import Capacity, human_count
from ..compiler.planning.plan import (
    AggregateNode,
    DedupNode,
    JoinNode,
    Plan,
    PlanNode,
    StaticJoinNode,
    StreamNode,
    TableNode,
    UnionNode,
    ViewNode,
)
from ..compiler.vocabulary.types import format_ms
from ..runtime import BatchOutput
from .diagnostics import count

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType
    from sqlglot import exp

INSTALL_HINT = "pip install 'sjoin[report]'"
EPOCH = "1970-01-01T00:00:00Z"
EPOCH_DT = datetime(1970, 1, 1)
MARKERS_UP_TO = 120  # batches; beyond that, markers only clutter the lines
# plot geometry in inches: fixed margins, so that the x axes of a page line up
WIDTH, HEIGHT = 9.5, 2.6  # the figure, above it the legend's rows
LEFT, RIGHT, BOTTOM = 1.3, 0.2, 0.5
LABEL_X = 0.4  # the middle of the y label, from the left edge: two lines fit, unclipped
LEGEND_COLUMNS = 4
NO_METADATA: dict[str, Any] = {"Creator": None, "Date": None, "Format": None, "Type": None}
GROUP_ID = re.compile(r' id="[A-Za-z][\w.]*_\d+"')

# matplotlib settings for every plot: text stays text, output is byte-for-byte repeatable
RC: dict[RcKeyType, Any] = {
    "svg.fonttype": "none",
    "text.usetex": False,  # a user's matplotlibrc must not hand the labels to LaTeX
    "date.epoch": "1970-01-01T00:00:00",  # a date on the axis is days since then
    "font.family": "sans-serif",
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
}


def plain(text: str) -> str:
    """``text`` as matplotlib shows it as written: the one way any text reaches a plot.

    matplotlib reads a string with an even number of unescaped ``$`` as math text (a
    relation named ``$x^2$`` would come out as x squared, one named `` $\\frac{$ `` would
    fail the whole report), and ``\\$`` as an escaped dollar.  Every ``$`` becomes ``\\$``:
    then no ``$`` is unescaped, so the string is never math, and matplotlib turns each
    ``\\$`` back into ``$`` (a backslash the user wrote is never followed by a ``$`` here,
    so it is kept).  ``Text.set_parse_math(False)`` would not do: it is a property of one
    ``Text``, and the tick labels matplotlib makes while it draws do not inherit it.
    Characters that are not printable are shown as escapes (``\\n``, ``\\x00``), so a label
    stays one visible line.
    """
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text.replace("$", "\\$")


class ReportError(Exception):
    """A report that cannot be made or written; the message is fit for the user."""


class ReportUnavailable(ReportError):
    """matplotlib is not installed here: no report can be made (not a usage error)."""


def require_matplotlib() -> None:
    """Fail early, before a run, with the one sentence that says what to install."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ReportUnavailable(
            f"--report draws its plots with matplotlib, which is not installed: {INSTALL_HINT}"
        ) from None


def check_target(path: Path) -> None:
    """Fail before a run, not after it, when the report cannot be written at ``path``.  The
    path is the user's, followed when it is a link (as ``write`` follows it); the file that
    the check makes is removed where it was made, not the link to it (``files``)."""
    from ..runtime.errors import RunError
    from ..runtime.io.files import check_writable

    if path.is_dir():
        raise ReportError(f"cannot write the report to {path}: it is a directory")
    try:
        check_writable(path, "the report to ")
    except RunError as err:
        raise ReportError(str(err)) from None


def write(path: Path, text: str) -> None:
    """Write the page; a failure is a ``ReportError`` with the reason, not a traceback."""
    from ..runtime.errors import RunError
    from ..runtime.io.files import write_named

    try:
        write_named(path, text, "the report to ")
    except RunError as err:
        raise ReportError(str(err)) from None


@dataclass(frozen=True, slots=True)
class BatchFigures:
    """What the report keeps of one executed batch: its figures, not its rows, so that a
    long run costs a few numbers per batch."""

    query: str
    batch: int
    data: bool
    watermark: str | None
    rows: dict[str, int]  # output rows per relation
    state: dict[str, int]  # numRowsTotal per stateful operator
    sides: dict[str, tuple[int, int]]  # a join's state rows (left, right)
    dropped: int  # late rows dropped by the watermark, all operators together

    @classmethod
    def of(cls, out: BatchOutput) -> BatchFigures:
        operators = out.progress.get("operators", [])
        return cls(
            query=out.query,
            batch=out.batch,
            data=out.data,
            watermark=out.watermark,
            rows=dict(out.counts),  # counted by the runtime: the row dicts are never built
            state={op["relation"]: op["numRowsTotal"] for op in operators},
            sides=dict(out.state_sides),
            dropped=sum(op.get("numRowsDroppedByWatermark", 0) for op in operators),
        )


class Report:
    """Collects the figures of each batch of a run (``add`` fits ``run_to_files``'s
    ``on_batch``) and makes the page (``html``)."""

    def __init__(
        self,
        plan: Plan,
        *,
        spec: str,
        trace: str,
        capacity: Capacity | None = None,
        span_ms: int | None = None,
        no_prediction: str | None = None,
    ) -> None:
        self.plan = plan
        self.spec = spec
        self.trace = trace
        self.capacity = capacity  # `sjoin plan --rates` at the trace's rates: drawn dotted
        self.span_ms = span_ms  # the event time the trace spans (Measured.span_ms)
        self.no_prediction = no_prediction  # why nothing is drawn dotted (text), if so
        self.batches: list[BatchFigures] = []

    @classmethod
    def for_run(cls, plan: Plan, *, spec: str, trace: Path | str) -> Report:
        """The report of a run of ``plan`` over ``trace`` (a file or folder, or a Kafka URL):
        when the trace is a JSON-lines file, with the state `sjoin plan --rates` predicts at
        its rates (drawn dotted), else with the reason nothing is predicted."""
        capacity = None
        span_ms: int | None = None
        no_prediction: str | None = "rates are measured in a JSON-lines trace file only"
        if isinstance(trace, Path) and trace.is_file():
            from ..compiler.describe.capacity import CapacityError, predict

            measured = trace_rates(plan, trace)
            no_prediction = measured if isinstance(measured, str) else None
            if not isinstance(measured, str):
                span_ms = measured.span_ms
                try:
                    capacity = predict(
                        plan,
                        measured.rates,
                        keys=measured.keys,
                        trigger_ms=measured.step_ms,
                        trigger_source="the trace's batches",
                    )
                except CapacityError as err:
                    no_prediction = f"the trace's rates predict nothing: {err}"
        shown = trace.as_posix() if isinstance(trace, Path) else trace
        return cls(
            plan,
            spec=spec,
            trace=shown,
            capacity=capacity,
            span_ms=span_ms,
            no_prediction=no_prediction,
        )

    def add(self, out: BatchOutput, total: int = 0) -> None:
        self.batches.append(BatchFigures.of(out))

    def html(self) -> str:
        import matplotlib

        order = {node.name: i for i, node in enumerate(self.plan.nodes)}
        operators = [n.name for n in self.plan.operators]
        # one colour per join or aggregate in every plot of the page; C0 is the watermark's
        colors = {name: f"C{1 + i % 9}" for i, name in enumerate(operators)}
        queries: dict[str, list[BatchFigures]] = {}
        for b in self.batches:
            queries.setdefault(b.query, []).append(b)
        with matplotlib.rc_context(RC):
            sections = [
                _Section(
                    self.plan,
                    name,
                    batches,
                    order,
                    colors,
                    index,
                    self.capacity,
                    self.span_ms,
                    self.no_prediction,
                ).html()
                for index, (name, batches) in enumerate(queries.items())
            ]
        return _page(self, list(queries), sections)


def render(plan: Plan, outputs: Iterable[BatchOutput], *, spec: str, trace: str) -> str:
    """The page for the batches of a finished run (e.g. ``runtime.run(...).batches``)."""
    report = Report(plan, spec=spec, trace=trace)
    for out in outputs:
        report.add(out)
    return report.html()


# ---------------------------------------------------------------------------- the page

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328;
       max-width: 68rem; margin: 1.5rem auto; padding: 0 1rem; line-height: 1.45; }
h1 { font-size: 1.5rem; margin-bottom: .4rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 1rem; margin-top: 1.5rem; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: .15rem 1.2rem; }
dl.facts dt { color: #59636e; } dl.facts dd { margin: 0; }
code { font-size: .92em; }
figure { margin: 1rem 0; }
figure svg { width: 100%; height: auto; display: block; }
figcaption, p.note { color: #59636e; font-size: .9rem; }
div.scroll { max-height: 28rem; overflow: auto; border: 1px solid #d0d7de; }
table { border-collapse: collapse; font-size: .85rem; font-variant-numeric: tabular-nums; }
th, td { padding: .2rem .6rem; text-align: right; white-space: nowrap; }
th { position: sticky; top: 0; background: #f6f8fa; border-bottom: 1px solid #d0d7de; }
td.text, th.text { text-align: left; }
tr.nodata td { color: #59636e; background: #fafbfc; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _page(report: Report, queries: list[str], sections: list[str]) -> str:
    batches = report.batches
    data = sum(b.data for b in batches)
    per_relation: dict[str, int] = {}
    for b in batches:
        for relation, n in b.rows.items():
            per_relation[relation] = per_relation.get(relation, 0) + n
    rows = sum(per_relation.values())
    rows_text = f"{rows}" + (
        " (" + ", ".join(f"{_e(r)} {n}" for r, n in per_relation.items()) + ")"
        if len(per_relation) > 1
        else ""
    )
    name = Path(report.spec).name
    facts = [
        ("spec", f"<code>{_e(report.spec)}</code>"),
        ("trace", f"<code>{_e(report.trace)}</code>"),
        ("Spark targeted", _e(report.plan.spark)),
        ("batches", f"{len(batches)} ({data} with data, {len(batches) - data} no-data)"),
        ("output rows", rows_text),
        ("queries", ", ".join(f"<code>{_e(q)}</code>" for q in queries) or "none"),
    ]
    body = sections or ['<p class="note">The run executed no batch: nothing to plot.</p>']
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>sjoin run report: {_e(name)}</title>",
            f"<style>{STYLE}</style>",
            "</head>",
            "<body>",
            f"<h1>sjoin run report: {_e(name)}</h1>",
            '<dl class="facts">',
            *(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts),
            "</dl>",
            *body,
            '<p class="note">Made by sjoin '
            f"{_e(__version__)} with the reference runtime; the figures are those of the "
            "progress records (<code>sjoin run --progress</code>). A join's state rows are "
            "its <code>numRowsTotal</code>, both sides together: the progress records do "
            "not give them per side.</p>",
            "</body>",
            "</html>",
            "",
        ]
    )


class _Section:
    """One query: its three plots and its table."""

    def __init__(
        self,
        plan: Plan,
        query: str,
        batches: Sequence[BatchFigures],
        order: dict[str, int],
        colors: dict[str, str],
        index: int,
        capacity: Capacity | None = None,
        span_ms: int | None = None,
        no_prediction: str | None = None,
    ) -> None:
        self.plan = plan
        self.no_prediction = no_prediction
        every = capacity.operators if capacity is not None else ()
        # an operator whose state takes longer to be steady than the trace spans is not drawn
        # dotted: the measured lines could not reach the line, which would read as a miss
        self.unsteady = {
            op.name: op.warm_up_ms
            for op in every
            if span_ms is not None and op.warm_up_ms is not None and op.warm_up_ms > span_ms
        }
        self.span_ms = span_ms
        operators = [op for op in every if op.name not in self.unsteady]
        # (operator, side) -> predicted steady state rows; an aggregate's side: "groups"
        self.predicted = {
            (op.name, s.side): s.rows for op in operators for s in op.sides if s.rows is not None
        }
        self.predicted.update(
            {
                (op.name, "groups"): op.rows
                for op in operators
                if op.kind == "aggregate" and op.rows is not None and op.rows_at is None
            }
        )
        self.capacity = capacity
        self.query = query
        self.batches = batches
        self.colors = colors
        self.index = index
        self.x = [b.batch for b in batches]
        self.nodata = [not b.data for b in batches]
        self.markers = len(batches) <= MARKERS_UP_TO
        self.operators = sorted({r for b in batches for r in b.state}, key=order.__getitem__)
        relations = {query} | {r for b in batches for r in b.rows}
        self.relations = sorted(relations, key=lambda r: order.get(r, len(order)))

    def html(self) -> str:
        first, last = self.x[0], self.x[-1]
        data = sum(not n for n in self.nodata)
        shaded = " (shaded in the plots)" if data < len(self.x) else ""
        return "\n".join(
            [
                f'<section id="query-{_e(self.query)}">',
                f"<h2>Query <code>{_e(self.query)}</code></h2>",
                f'<p class="note">Batches {first} to {last}: {len(self.x)} executed, {data} '
                f"with data, {len(self.x) - data} no-data{shaded}.</p>",
                self._watermark(),
                self._figure(
                    "State rows per operator",
                    self._state_plot(),
                    "State rows each stateful operator keeps after the batch: a join's per "
                    "side (solid: left, dashed: right; their sum is its "
                    "<code>numRowsTotal</code>), an aggregate's groups." + self._predicted(),
                ),
                self._figure(
                    "Output rows per batch",
                    self._rows_plot(),
                    "Rows each relation emitted in the batch.",
                ),
                f"<h3>Per-batch figures of <code>{_e(self.query)}</code></h3>",
                self._table(),
                "</section>",
            ]
        )

    # ------------------------------------------------------------------ plots

    def _figure(self, title: str, svg: str, caption: str) -> str:
        return (
            f"<figure>\n<h3>{_e(title)}</h3>\n{svg}\n<figcaption>{caption}</figcaption>\n</figure>"
        )

    def _axes(self, *ylabel: str) -> tuple[Figure, Axes]:
        """A figure and its axes; ``ylabel``'s arguments are the y label's lines."""
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator

        fig = Figure(figsize=(WIDTH, HEIGHT))
        ax = fig.add_subplot()
        ax.set_xlabel(plain("batch"))
        ax.set_ylabel("\n".join(plain(line) for line in ylabel))
        ax.yaxis.set_label_coords(-(LEFT - LABEL_X) / (WIDTH - LEFT - RIGHT), 0.5)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlim(self.x[0] - 0.6, self.x[-1] + 0.6)
        return fig, ax

    def _finish(self, fig: Figure, ax: Axes, legend: list[tuple[Any, str]]) -> None:
        """Shade the no-data batches (one collection, outside the data limits), put the
        legend (``legend``'s artists and their labels, then the shade's) in rows above the
        plot, where it never covers a line, and fix the margins in inches so that the plots
        of a page line up batch for batch.

        The legend gets its entries as given, never from the artists' labels, which
        matplotlib leaves out of a legend when they start with ``_`` (a relation may be
        named ``_j``)."""
        from matplotlib.collections import PolyCollection

        spans = [
            [(x - 0.5, 0.0), (x + 0.5, 0.0), (x + 0.5, 1.0), (x - 0.5, 1.0)]
            for x, nodata in zip(self.x, self.nodata, strict=True)
            if nodata
        ]
        if spans:
            shade = PolyCollection(
                spans,
                transform=ax.get_xaxis_transform(),
                facecolor="#8c959f",
                alpha=0.18,
                linewidth=0,
                zorder=0,
            )
            ax.add_collection(shade, autolim=False)
            legend = [*legend, (shade, "no-data batch")]
        columns = min(len(legend), LEGEND_COLUMNS)
        ax.legend(
            [handle for handle, _ in legend],
            [plain(label) for _, label in legend],
            loc="lower left",
            bbox_to_anchor=(0.0, 1.02),
            ncols=columns,
            frameon=False,
            fontsize=9,
            borderaxespad=0.0,
        )
        legend_rows = -(-len(legend) // columns) if legend else 0
        top = 0.15 + 0.22 * legend_rows
        fig.set_size_inches(WIDTH, HEIGHT + top)
        fig.subplots_adjust(
            left=LEFT / WIDTH,
            right=1 - RIGHT / WIDTH,
            bottom=BOTTOM / (HEIGHT + top),
            top=1 - top / (HEIGHT + top),
        )

    def _svg(self, fig: Figure, name: str) -> str:
        """The figure as an inline <svg> element (no XML prolog, ids unique in the page)."""
        import matplotlib

        buf = io.StringIO()
        with matplotlib.rc_context({"svg.hashsalt": f"sjoin-{self.index}-{name}"}):
            fig.savefig(buf, format="svg", metadata=NO_METADATA)
        text = buf.getvalue()
        # matplotlib names its groups figure_1, axes_1, ... in every figure; nothing refers
        # to them, and in one page they would be duplicate ids, so they go
        return GROUP_ID.sub("", text[text.index("<svg") :]).strip()

    def _watermark(self) -> str:
        points = [(b.batch, b.watermark, b.data) for b in self.batches if b.watermark is not None]
        if not points:
            return (
                '<p class="note">No watermark: this query reads no stream with a watermark, '
                "so its watermark plot is left out.</p>"
            )
        note = ""
        if any(w != EPOCH for _, w, _ in points):
            skipped = 0
            while points[0][1] == EPOCH:
                points.pop(0)
                skipped += 1
            if skipped:
                first = self.batches[0].batch
                which = (
                    f"Batch {first}" if skipped == 1 else f"Batches {first} to {points[0][0] - 1}"
                )
                note = (
                    f" {which} ran before any watermark was known (Spark reports "
                    f"<code>{EPOCH}</code>): not drawn."
                )
        hollow = " Hollow markers: no-data batches." if self.markers else ""
        return self._figure(
            "Watermark",
            self._watermark_plot(points),
            "The event-time watermark each batch used, in UTC." + hollow + note,
        )

    def _watermark_plot(self, points: list[tuple[int, str, bool]]) -> str:
        from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

        xs = [p[0] for p in points]
        instants = [_instant(p[1]) for p in points]
        ys = [(t - EPOCH_DT).total_seconds() / 86_400 for t in instants]
        first, last = min(instants).date(), max(instants).date()
        days = first.isoformat() + ("" if first == last else f" to {last.isoformat()}")
        fig, ax = self._axes("watermark (UTC)", days)
        (line,) = ax.plot(xs, ys, drawstyle="steps-mid", color="C0", linewidth=1.6)
        if self.markers:
            for data, face in ((True, "C0"), (False, "white")):
                sel = [(x, y) for (x, y, p) in zip(xs, ys, points, strict=True) if p[2] is data]
                if sel:
                    ax.plot(
                        [x for x, _ in sel],
                        [y for _, y in sel],
                        linestyle="none",
                        marker="o",
                        markersize=5,
                        markerfacecolor=face,
                        markeredgecolor="C0",
                    )
        if max(ys) - min(ys) < 1 / 86_400:  # a flat watermark: an hour around it, not years
            ax.set_ylim(min(ys) - 1 / 48, max(ys) + 1 / 48)
        ax.yaxis_date()
        locator = AutoDateLocator(minticks=3, maxticks=7)  # type: ignore[no-untyped-call]
        ax.yaxis.set_major_locator(locator)
        # a day is written with its month (`Jan 09`), never as a bare `09` that reads as an
        # hour; an hour or minute tick with the day where one begins
        formatter = ConciseDateFormatter(  # type: ignore[no-untyped-call]
            locator,
            formats=["%Y", "%b %Y", "%b %d", "%H:%M", "%H:%M", "%H:%M:%S"],
            zero_formats=["", "%Y", "%b %Y", "%b %d", "%H:%M", "%H:%M"],
            show_offset=False,
        )
        ax.yaxis.set_major_formatter(formatter)
        self._finish(fig, ax, [(line, "watermark")])
        return self._svg(fig, "watermark")

    def _state_plot(self) -> str:
        from matplotlib.ticker import MaxNLocator

        fig, ax = self._axes("state rows")
        style: dict[str, Any] = {
            "drawstyle": "steps-mid",
            "marker": "o" if self.markers else None,
            "markersize": 4,
            "linewidth": 1.6,
        }
        legend: list[tuple[Any, str]] = []
        for name in self.operators:
            node = self.plan.node(name)
            color = self.colors.get(name)
            if isinstance(node, JoinNode) and self._has_sides(name):
                for i, side in enumerate((node.left, node.right)):
                    (line,) = ax.plot(
                        self.x,
                        [b.sides.get(name, (0, 0))[i] for b in self.batches],
                        color=color,
                        linestyle="-" if i == 0 else "--",
                        **style,
                    )
                    legend.append((line, f"{name}: {side.name} ({side.alias})"))
                    predicted = self.predicted.get((name, side.name))
                    if predicted is not None:
                        mark = ax.axhline(
                            predicted, color=color, linestyle=":", linewidth=1.2, zorder=1
                        )
                        legend.append((mark, f"{name}: {side.name} predicted"))
                continue
            assert node is not None, name
            kind = _state_label(node)
            (line,) = ax.plot(
                self.x, [b.state.get(name, 0) for b in self.batches], color=color, **style
            )
            legend.append((line, f"{name} ({kind})"))
            predicted = self.predicted.get((name, "groups"))
            if predicted is not None:
                mark = ax.axhline(predicted, color=color, linestyle=":", linewidth=1.2, zorder=1)
                legend.append((mark, f"{name}: groups predicted"))
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        self._finish(fig, ax, legend)
        return self._svg(fig, "state")

    def _predicted(self) -> str:
        """The caption's sentence on the dotted lines: what they predict, at which rates; or
        why there are none (the trace too short to have a rate, an operator not steady within
        the trace)."""
        if self.no_prediction is not None:
            return f" No predicted (dotted) line: {_e(self.no_prediction)}."
        unsteady = "".join(
            f" No predicted line for <code>{_e(op)}</code>: its state is steady after "
            f"{_e(format_ms(round(ms)))} of event time, more than the trace spans "
            f"({_e(format_ms(self.span_ms or 0))})."
            for op, ms in sorted(self.unsteady.items())
            if op in self.operators
        )
        cap = self.capacity
        if cap is None or not self.predicted:
            return unsteady
        a = cap.assumptions
        rates = ", ".join(
            f"<code>{_e(k)}</code> {_e(human_count(v))}/s" for k, v in sorted(a.rates.items())
        )
        parts = [
            f"<code>{_e(op)}</code> {side} {_e(human_count(rows))}"
            f" {'row' if human_count(rows) == '1' else 'rows'}"
            for (op, side), rows in self.predicted.items()
            if op in self.operators
        ]
        if not parts:
            return unsteady
        keys = "" if a.keys is None else f", {a.keys:,} keys"
        return (
            " Dotted: the steady state <code>sjoin plan --rates</code> predicts "
            f"({', '.join(parts)}) at the trace's rates ({rates}{keys}, a batch every "
            f"{a.trigger_ms / 1000:g} s of event time: {_e(a.trigger_source)}); the measured "
            "lines reach it after warm-up (docs/capacity.md)." + unsteady
        )

    def _has_sides(self, name: str) -> bool:
        return any(name in b.sides for b in self.batches)

    def _rows_plot(self) -> str:
        from matplotlib.ticker import MaxNLocator

        fig, ax = self._axes("output rows")
        width = 0.8 / len(self.relations)
        legend: list[tuple[Any, str]] = []
        for i, name in enumerate(self.relations):
            counts = [b.rows.get(name, 0) for b in self.batches]
            color = self.colors.get(name)
            if not self.markers:  # thousands of bars would blur into one area
                (line,) = ax.plot(self.x, counts, drawstyle="steps-mid", color=color)
                legend.append((line, name))
                continue
            shift = (i - (len(self.relations) - 1) / 2) * width
            bars = ax.bar([x + shift for x in self.x], counts, width=width, color=color)
            legend.append((bars, name))
        if not any(b.rows for b in self.batches):
            ax.text(0.5, 0.5, plain("no output rows"), transform=ax.transAxes, ha="center")
            ax.set_ylim(0, 1)
        else:
            ax.set_ylim(bottom=0)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        self._finish(fig, ax, legend)
        return self._svg(fig, "rows")

    # ------------------------------------------------------------------ table

    def _table(self) -> str:
        head = ["batch", "kind", "watermark"]
        for r in self.operators:
            head += [f"state {r}"] + ([f"{r} left", f"{r} right"] if self._has_sides(r) else [])
        head += [f"rows {r}" for r in self.relations]
        late = any(b.dropped for b in self.batches)
        if late:
            head.append("late rows dropped")
        out = ['<div class="scroll"><table>', "<thead><tr>"]
        out += [
            f'<th class="{"text" if h in ("kind", "watermark") else ""}">{_e(h)}</th>' for h in head
        ]
        out.append("</tr></thead><tbody>")
        for b in self.batches:
            cells = [
                f"<td>{b.batch}</td>",
                f'<td class="text">{"data" if b.data else "no-data"}</td>',
                f'<td class="text">{_e(b.watermark or "none")}</td>',
            ]
            for r in self.operators:
                cells.append(f"<td>{b.state.get(r, 0)}</td>")
                if self._has_sides(r):
                    cells += [f"<td>{n}</td>" for n in b.sides.get(r, (0, 0))]
            cells += [f"<td>{b.rows.get(r, 0)}</td>" for r in self.relations]
            if late:
                cells.append(f"<td>{b.dropped}</td>")
            row_class = "" if b.data else ' class="nodata"'
            out.append(f"<tr{row_class}>{''.join(cells)}</tr>")
        out.append("</tbody></table></div>")
        return "\n".join(out)


def _instant(text: str) -> datetime:
    """A §7 watermark string as a naive UTC datetime (matplotlib's dates axis)."""
    return datetime.fromisoformat(text).astimezone(UTC).replace(tzinfo=None)


__all__ = [
    "INSTALL_HINT",
    "BatchFigures",
    "Report",
    "ReportError",
    "ReportUnavailable",
    "check_target",
    "plain",
    "render",
    "require_matplotlib",
    "write",
]


def key_columns(plan: Plan) -> dict[str, set[str]]:
    """Per stream, its columns that a join key, or the grouping of an aggregate of the
    stream, reads directly (a window's time aside): whose distinct values are the keys."""
    from sqlglot import exp

    streams = {s.name for s in plan.streams}
    columns = {s.name: {c.name for c in s.columns} for s in plan.streams}
    out: dict[str, set[str]] = {}
    for node in plan.nodes:
        for relation, expr in _keys_read(node):
            if relation in streams and isinstance(expr, exp.Column):
                out.setdefault(relation, set()).add(expr.name)
    # a name the planner made (a window's `__window_0`) is no column of the stream's rows
    return {stream: names & columns[stream] for stream, names in out.items()}


# A trace too short to have a rate predicts nothing (issue 35: 3 rows over 8 days of the demo
# trace made "rates" of 4.36e-06/s and dotted lines from them). The trigger is the median step
# of the batches' newest event time: it takes MIN_STEPS steps (MIN_STEPS + 1 batches that
# advance event time) to be a median of several. A stream's rate is its rows over their event
# time span; n rows arriving at random (Poisson) give it a relative error of about 1/sqrt(n),
# a third at 9 rows: each stream needs MIN_ROWS rows with an event time (a quarter at 16).
MIN_STEPS = 4
MIN_ROWS = 16


@dataclass(frozen=True)
class Measured:
    """A trace's rates (rows/s per stream), event time between batches, keys (None: no key
    column), and the event time it spans (first to newest row): what the prediction is at."""

    rates: dict[str, float]
    step_ms: int
    keys: int | None
    span_ms: int

    def __getitem__(self, i: int) -> Any:  # (rates, step_ms, keys), as a tuple
        return (self.rates, self.step_ms, self.keys)[i]


def trace_rates(plan: Plan, path: Path) -> Measured | str:
    """The rates of a JSON-lines trace, for the predicted lines: each stream's rows per
    second of event time (its watermark column), the event time between batches (the
    median step of the batches' newest event time) and the keys (the most distinct values
    of a column a join key or a stream aggregate's grouping reads; None: no such column);
    or, when the trace is too short to have a rate (no event time to measure by, fewer than
    MIN_STEPS steps of it between batches, a stream with fewer than MIN_ROWS rows with an
    event time), why not, as a sentence (text) for the page."""
    from ..runtime.io.trace import read_trace, schemas_of

    trace = read_trace(path, schemas_of(plan), "skip")
    times: dict[str, list[int]] = {}
    counts: dict[str, int] = {s.name: 0 for s in plan.streams}
    newest: list[int] = []
    keyed = key_columns(plan)
    values: dict[tuple[str, str], set[Any]] = {}
    for batch in trace.batches:
        top = None
        for stream in plan.streams:
            rows = batch.rows_of(stream.name)
            counts[stream.name] += len(rows)
            names = [c.name for c in stream.columns]
            for column in keyed.get(stream.name, ()):
                j = names.index(column)
                values.setdefault((stream.name, column), set()).update(
                    r[j] for r in rows if r[j] is not None
                )
            if stream.watermark_column is None or not rows:
                continue
            i = [c.name for c in stream.columns].index(stream.watermark_column)
            ts = [r[i] for r in rows if r[i] is not None]
            times.setdefault(stream.name, []).extend(ts)
            if ts:
                top = max(ts) if top is None else max(top, max(ts))
        if top is not None:
            newest.append(top)
    steps = sorted(b - a for a, b in itertools.pairwise(newest) if b > a)
    if not times:
        return "the trace has no event time to measure rates by (no row of a watermarked stream)"
    if len(steps) < MIN_STEPS:
        return (
            f"the trace has {count(len(steps) + 1, 'batch')} whose newest event time advances; "
            f"a rate and the event time between batches take at least {MIN_STEPS + 1}"
        )
    few = sorted(name for name in counts if len(times.get(name, ())) < MIN_ROWS)
    if few:
        shown = ", ".join(f"`{n}` {count(len(times.get(n, ())), 'row')}" for n in few)
        return (
            f"too few rows with an event time to measure a rate ({shown}; a rate from n rows "
            f"is off by about 1/√n: at least {MIN_ROWS} each)"
        )
    step_us = steps[len(steps) // 2]
    every = [t for ts in times.values() for t in ts]
    whole_s = (max(every) - min(every) + step_us) / 1_000_000
    rates = {}
    for name, n in counts.items():
        ts = times.get(name, [])
        span_us = max(ts) - min(ts) if len(ts) > 1 else 0
        # n evenly spaced rows span n - 1 gaps; a stream without event times: the trace's
        rates[name] = (n - 1) / (span_us / 1_000_000) if span_us else n / whole_s
    keys = max((len(v) for v in values.values() if v), default=None)
    return Measured(rates, step_us // 1000, keys, (max(every) - min(every)) // 1000)


@singledispatch
def _state_label(node: PlanNode) -> str:
    """What the state chart calls an operator's one line of state rows."""
    raise TypeError(f"no state rows of a {type(node).__name__} ({node.name})")


@_state_label.register
def _(node: AggregateNode) -> str:
    return "aggregate"


@_state_label.register
def _(node: JoinNode | DedupNode | ViewNode | UnionNode | StaticJoinNode) -> str:
    return "operator"


@singledispatch
def _keys_read(node: PlanNode) -> Iterable[tuple[str, exp.Expression]]:
    """The keys relation ``node`` reads from each of its inputs: (the input relation, the
    key expression over its rows), a join's keys and an aggregate's grouping keys (its
    window's time aside); none for any other kind (``key_columns``)."""
    raise TypeError(f"no relation of kind {type(node).__name__} ({node.name})")


@_keys_read.register(JoinNode)
def _(node: JoinNode) -> Iterable[tuple[str, exp.Expression]]:
    for pair in node.keys:
        for side, expr in zip((node.left, node.right), pair, strict=True):
            yield side.relation, expr


@_keys_read.register(AggregateNode)
def _(node: AggregateNode) -> Iterable[tuple[str, exp.Expression]]:
    for i, key in enumerate(node.group_by):
        if i != node.watermark_key_index:
            yield node.input, key


@_keys_read.register(StreamNode | DedupNode | UnionNode | ViewNode | TableNode | StaticJoinNode)
def _(
    node: StreamNode | DedupNode | UnionNode | ViewNode | TableNode | StaticJoinNode,
) -> Iterable[tuple[str, exp.Expression]]:
    return ()
