"""The groups an aggregate keeps, for `sjoin plan --rates` (``capacity.py`` builds the
``Arrivals`` from the plan; this module is the arithmetic, and knows nothing of plans).

Times are milliseconds of event time, on the axis where windows and batch ends are aligned
to the epoch (0 is a window start and a batch end).  Rows arrive in order and evenly, each
in the batch whose end ``T`` is the first at or after its event time; a group exists once an
output row of it has reached the aggregate, which is at the end of the batch that makes it:

* a stream's rows reach it as they arrive;
* a join's matched row comes out in the batch where the later of its two rows arrives; a
  preserved row without a match comes out null-padded in the batch whose eviction watermark
  passes it (``null_ms`` behind the batch's newest event time; a window key: when that passes
  the row's window's end), an anti join's unmatched row likewise.

Per key (``--keys`` keys, uniformly drawn), each side is a Poisson process of ``lam_x`` /
``lam_y`` rows per millisecond.  The side ``x`` is the one whose time column the aggregate
groups by; a row ``x`` meets the rows ``y`` whose event time is in ``I(x)`` (the time range,
or ``x``'s join window).  That a key has a pair in a window is not a product of independent
rows (two ``x`` rows of a key share the ``y`` rows in between), so it is computed from the
expected length ``E|U|`` of the union ``U`` of the intervals ``I(x)`` of the window's ``x``
rows, given there is one: ``P(no pair) = P(no x) + P(some x) exp(-lam_y E|U| / P(some x))``,
exact when every ``x`` of the window meets the same ``y`` rows (a window key) and in the
limits of few or many rows per key and window; in between it is a close approximation (it
takes ``|U|`` at its mean).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

EPS_MS = 0.5  # a batch's newest row is just before its end: a watermark just below a lattice
STEPS = 48  # midpoint steps of a numeric integral
PHASES = 48  # at most this many batch ends are averaged over
Emit = Literal["matched", "preserved", "unmatched"]


def integrate(f: Callable[[float], float], a: float, b: float, steps: int = STEPS) -> float:
    """The midpoint rule of ``f`` over ``[a, b]`` (0 when empty)."""
    if b <= a:
        return 0.0
    h = (b - a) / steps
    return h * sum(f(a + (i + 0.5) * h) for i in range(steps))


def _overlap(a: float, b: float, c: float, d: float) -> float:
    return max(0.0, min(b, d) - max(a, c))


@dataclass(frozen=True, slots=True)
class Arrivals:
    """How the output rows of one key reach the aggregate (see the module's docstring).

    ``kind`` ``stream``: rows of a stream, ``lam_x`` per ms per key.  ``pair``: a join's
    rows, ``lam_x`` and ``lam_y`` per ms per key of its two sides, ``x`` meeting the ``y``
    rows in ``range_ms`` (``(lo, hi)`` relative to ``x``'s time) or, for a window key, in
    ``x``'s window of ``window_ms``; ``emit`` what of ``x`` comes out: its matches, its
    matches or a null-padded row (a preserved side), or only the null-padded row of an ``x``
    without a match (LEFT ANTI); ``null_ms``: how far the join's eviction watermark is behind
    a batch's newest event time, less the side's eviction offset."""

    kind: Literal["stream", "pair"]
    lam_x: float
    lam_y: float = 0.0
    range_ms: tuple[float, float] | None = None
    window_ms: float | None = None
    emit: Emit = "matched"
    null_ms: float = 0.0

    # ---------------------------------------------------------------- the join's geometry

    def interval(self, x: float) -> tuple[float, float]:
        """``I(x)``: the event times of the ``y`` rows a row ``x`` meets."""
        if self.window_ms is not None:
            start = math.floor(x / self.window_ms) * self.window_ms
            return start, start + self.window_ms
        lo, hi = self.range_ms or (-math.inf, math.inf)
        return x + lo, x + hi

    def null_boundary(self, t: float) -> float:
        """The ``x`` rows below this time have their null-padded row out by batch end ``t``."""
        c = t - self.null_ms - EPS_MS
        if self.window_ms is not None:
            return math.floor(c / self.window_ms) * self.window_ms
        return c

    def horizon(self) -> float:
        """How long after its event time a row can still make output."""
        extra = self.window_ms or 0.0
        hi = max(0.0, (self.range_ms or (0.0, 0.0))[1])
        nulls = self.null_ms if self.emit != "matched" else 0.0
        return hi + extra + nulls + 1.0

    def _y_by(self, x: float, t: float) -> float:
        a, b = self.interval(x)
        return max(0.0, min(b, t) - a)

    # ---------------------------------------------------------------- one row x

    def emitted(self, x: float, t: float) -> float:
        """The probability that the row ``x`` (arrived by ``t``) has made output by ``t``."""
        if self.kind == "stream":
            return 1.0
        out = x < self.null_boundary(t)
        if self.emit == "unmatched":
            a, b = self.interval(x)
            return math.exp(-self.lam_y * (b - a)) if out else 0.0
        if self.emit == "preserved" and out:
            return 1.0
        return -math.expm1(-self.lam_y * self._y_by(x, t))

    # ---------------------------------------------------------------- one key's group

    def exists(self, lo: float, hi: float, t: float) -> float:
        """The probability that one key's group of the window ``[lo, hi)`` holds a row by
        batch end ``t``."""
        end = min(hi, t)
        if end <= lo:
            return 0.0
        if self.kind == "stream":
            return -math.expm1(-self.lam_x * (end - lo))
        if self.emit == "unmatched":
            nulls = integrate(
                lambda x: math.exp(-self.lam_y * self._width(x)),
                lo,
                min(end, self.null_boundary(t)),
            )
            return -math.expm1(-self.lam_x * nulls)
        if self.emit == "preserved":
            b = min(max(self.null_boundary(t), lo), end)
            return 1.0 - math.exp(-self.lam_x * (b - lo)) * self._no_pair(b, end, t)
        return 1.0 - self._no_pair(lo, end, t)

    def _width(self, x: float) -> float:
        a, b = self.interval(x)
        return b - a

    def _no_pair(self, a: float, b: float, t: float, after: float = -math.inf) -> float:
        """P(no row ``x`` of ``[a, b]`` has met a ``y`` arrived in ``(after, t]``)."""
        if b <= a:
            return 1.0
        some = -math.expm1(-self.lam_x * (b - a))
        if some <= 1e-15:
            return 1.0
        union = self._union(a, b, t, after)
        return 1.0 - some + some * math.exp(-self.lam_y * union / some)

    def _union(self, a: float, b: float, t: float, after: float = -math.inf) -> float:
        """``E|U|``: the expected length, inside ``(after, t]``, of the union of ``I(x)``
        over the ``x`` rows of ``[a, b]``."""
        lam = self.lam_x
        if self.window_ms is not None:
            w = self.window_ms
            first = math.floor(a / w) * w
            last = math.ceil(b / w) * w - w  # the last window that starts before b
            total = 0.0
            for start in {first, last}:  # the two ends may hold part of a window
                inside = _overlap(start, start + w, a, b)
                total += _overlap(start, start + w, after, t) * -math.expm1(-lam * inside)
            if last - first > w / 2:  # the windows in between lie wholly inside [a, b]
                covered = _overlap(first + w, last, after, t)
                total += covered * -math.expm1(-lam * w)
            return total
        if self.range_ms is None:  # no time bound: every older y
            return _overlap(a, t, after, t)
        lo, hi = self.range_ms
        return integrate(
            lambda y: -math.expm1(-lam * _overlap(y - hi, y - lo, a, b)),
            max(a + lo, after),
            min(b + hi, t),
        )

    def fresh(self, lo: float, hi: float, t: float, tau: float) -> float:
        """The probability that one key's group of ``[lo, hi)`` gets a row in the batch
        that ends at ``t`` (its rows arrived in ``(t - tau, t]``)."""
        end = min(hi, t)
        if end <= lo:
            return 0.0
        start = t - tau
        if self.kind == "stream":
            return -math.expm1(-self.lam_x * _overlap(lo, end, start, t))
        none = 1.0
        if self.emit != "unmatched":
            cut = min(max(start, lo), end)
            # a new x meets an older y; any x meets a y of this batch
            none *= self._no_pair(cut, end, start) * self._no_pair(lo, end, t, start)
        if self.emit != "matched":
            a, b = max(lo, self.null_boundary(start)), min(end, self.null_boundary(t))
            unmatched = integrate(lambda x: math.exp(-self.lam_y * self._width(x)), a, b)
            none *= math.exp(-self.lam_x * unmatched)
        return 1.0 - none

    def drawn(self, lo: float, hi: float, t: float) -> float:
        """The expected rows ``x`` of ``[lo, hi)`` (one key) that have made output by ``t``."""
        return self.lam_x * integrate(lambda x: self.emitted(x, t), lo, min(hi, t))


# ---------------------------------------------------------------- many keys


@dataclass(frozen=True, slots=True)
class Groups:
    """An aggregate's groups over ``Arrivals`` of ``keys`` join (or stream) keys.

    ``by``: ``key`` (the grouping is the join key, with or without a time: a group per key
    that has a row), ``none`` (a time alone: one group if any key has a row), ``rows`` (other
    columns: each row ``x`` draws its group among ``groups`` values, None: a group of its
    own)."""

    arrivals: Arrivals
    keys: float
    by: Literal["key", "none", "rows"]
    groups: float | None = None

    def count(self, lo: float, hi: float, t: float) -> float:
        """Expected groups of the window ``[lo, hi)`` by batch end ``t``."""
        a = self.arrivals
        if self.by == "key":
            return self.keys * a.exists(lo, hi, t)
        if self.by == "none":
            p = a.exists(lo, hi, t)
            return -math.expm1(self.keys * math.log1p(-min(p, 1.0 - 1e-16)))
        return self._draws(self.keys * a.drawn(lo, hi, t))

    def touched(self, lo: float, hi: float, t: float, tau: float) -> float:
        """Expected groups of ``[lo, hi)`` updated in the batch ending at ``t``."""
        a = self.arrivals
        if self.by == "rows":
            now = self.keys * a.drawn(lo, hi, t)
            before = self.keys * a.drawn(lo, min(hi, t - tau), t - tau)
            return self._draws(max(now - before, 0.0))
        p = a.fresh(lo, hi, t, tau)
        if self.by == "key":
            return self.keys * p
        return -math.expm1(self.keys * math.log1p(-min(p, 1.0 - 1e-16)))

    def _draws(self, d: float) -> float:
        if self.groups is None:
            return d
        return self.groups * -math.expm1(-d / self.groups)


@dataclass(frozen=True, slots=True)
class WindowState:
    rows: float  # groups in state after a batch, on average over the batch ends
    touched: float | None  # groups updated per batch (None: batches back to back)
    full: float  # groups of a window once every row of it has come out (by time: 1 a row)
    per_second: float  # groups completed per second of event time


def phases(trigger_ms: int, period_ms: int) -> list[float]:
    """The batch ends to average over: the multiples of the trigger modulo ``period_ms``
    (evenly sampled when there are many); batches back to back: evenly spread."""
    if trigger_ms <= 0:
        return [period_ms * (i + 0.5) / PHASES for i in range(PHASES)]
    count = period_ms * trigger_ms // math.gcd(period_ms, trigger_ms) // trigger_ms
    if count <= PHASES:
        return [float(i * trigger_ms) for i in range(count)]
    return [float((i * count // PHASES) * trigger_ms) for i in range(PHASES)]


def window_state(
    groups: Groups, length_ms: float, slide_ms: float, lag_ms: float | None, trigger_ms: int
) -> WindowState:
    """The groups of a windowed aggregate that evicts a window once its eviction watermark,
    ``lag_ms`` behind a batch's newest event time, passes the window's end (None: never; its
    rows are then not averaged, only the groups a batch updates)."""
    horizon = groups.arrivals.horizon()
    period = max(int(slide_ms), 1)
    join_window = groups.arrivals.window_ms
    if join_window is not None and join_window >= 1:
        period = period * int(join_window) // math.gcd(period, int(join_window))
    residues = max(1, round(period / slide_ms))
    settled: dict[int, float] = {}

    def full(j: int) -> float:
        """A window whose rows have all come out: its groups depend on its place only."""
        r = j % residues
        if r not in settled:
            lo = r * slide_ms
            settled[r] = groups.count(lo, lo + length_ms, lo + length_ms + horizon)
        return settled[r]

    rows = touched = 0.0
    ends = phases(trigger_ms, period)
    for t in ends:
        last = math.floor(t / slide_ms)
        # the windows no row of this batch reaches any more: counted by their places
        done = math.ceil((t - trigger_ms - horizon - length_ms) / slide_ms) - 1
        first = done + 1
        if lag_ms is not None:
            first = math.floor((t - lag_ms - EPS_MS - length_ms) / slide_ms) + 1
            for r in range(residues):
                a, b = first, min(done, last)
                if b >= a:
                    rows += full(r) * ((b - r) // residues - (a - 1 - r) // residues)
            first = max(first, done + 1)
        for j in range(first, last + 1):
            lo = j * slide_ms
            if lag_ms is not None and lo + length_ms <= t - lag_ms - EPS_MS:
                continue
            rows += groups.count(lo, lo + length_ms, t)
            if trigger_ms > 0:
                touched += groups.touched(lo, lo + length_ms, t, trigger_ms)
    n = len(ends)
    mean = sum(full(r) for r in range(min(residues, PHASES))) / min(residues, PHASES)
    return WindowState(
        rows / n, touched / n if trigger_ms > 0 else None, mean, mean * 1000 / slide_ms
    )


def point_state(groups: Groups, lag_ms: float, trigger_ms: int) -> WindowState:
    """Groups keyed by an event time itself (each row's time its own group): a row's group
    stays while the eviction watermark, ``lag_ms`` behind, has not passed its time."""
    a = groups.arrivals
    ends = phases(trigger_ms, max(trigger_ms, 1))
    rows = touched = 0.0
    for t in ends:
        lo = t - lag_ms - EPS_MS
        rows += groups.keys * a.drawn(lo, t, t)
        if trigger_ms > 0:
            before = groups.keys * a.drawn(lo, t - trigger_ms, t - trigger_ms)
            touched += max(0.0, groups.keys * a.drawn(lo, t, t) - before)
    n = len(ends)
    per_second = groups.keys * a.drawn(0.0, 1000.0, 1000.0 + a.horizon())
    return WindowState(rows / n, touched / n if trigger_ms > 0 else None, 1.0, per_second)


def seen_by(groups: Groups, elapsed_ms: float) -> float:
    """Groups an aggregate that never evicts holds ``elapsed_ms`` of event time after its
    first row (its grouping has no time: every group seen so far)."""
    return groups.count(0.0, elapsed_ms, elapsed_ms)
