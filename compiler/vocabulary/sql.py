"""The one way a bound expression becomes Spark SQL text (plans, messages, generated code).

sqlglot's Spark generator, with function names in lower case as Spark users write them.  A
name is back-quoted when it is not a plain identifier or when, written bare, it would not
read back as that name (`select`, `and`, ...), so that no name can change what the SQL text
means; the
generator doubles back-quotes inside names and escapes quotes and backslashes in strings.
"""

from __future__ import annotations

import re
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import SqlglotError
from sqlglot.generators.spark import SparkGenerator

from . import annotate
from .expr import copy_tree, find_all
from .types import exact_duration, spark_unit


class SparkText(Spark):
    """sqlglot's Spark dialect, writing the null-safe equality as Spark users write it:
    ``a <=> b``, and ``NOT (a <=> b)`` for IS DISTINCT FROM (sqlglot writes IS [NOT]
    DISTINCT FROM, a predicate that binds looser than a comparison in Spark's grammar)."""

    class Generator(SparkGenerator):
        TRANSFORMS = {  # noqa: RUF012 - sqlglot reads the class attribute
            **SparkGenerator.TRANSFORMS,
            exp.NullSafeEQ: lambda self, e: self.binary(e, "<=>"),
            exp.NullSafeNEQ: lambda self, e: f"NOT ({self.binary(e, '<=>')})",
        }


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# words of Spark's expression syntax, quoted even where sqlglot would read them back
_RESERVED_WORDS = (
    "all and any as between both by case cast distinct else end escape false from in interval "
    "is like not null on or rlike select some then to true when where"
)
_RESERVED = frozenset(_RESERVED_WORDS.split())


@lru_cache(maxsize=1 << 15)  # more than the columns of a spec (compiler/frontend/limits.py)
def needs_quotes(name: str) -> bool:
    """Whether a name must be back-quoted in Spark SQL text: it is not a plain identifier,
    or, written bare, it would not read back as that name (a keyword such as `select`)."""
    if not _PLAIN.fullmatch(name) or name.lower() in _RESERVED:
        return True
    try:
        back = sqlglot.parse_one(f"{name}.{name} = {name}", dialect="spark")
    except SqlglotError:
        return True
    expected = exp.EQ(this=exp.column(name, table=name), expression=exp.column(name))
    return back != expected or any(i.this != name for i in back.find_all(exp.Identifier))


def spark_interval(node: exp.Interval) -> None:
    """``node`` (an interval of a copy) written as Spark's parser reads it: sjoin's short unit
    words spelt out (``INTERVAL 30 MINS`` is ``INTERVAL '30' MINUTES``: Spark's grammar has
    no `MINS`), and a fraction of a unit other than seconds (``1.5 HOURS``, which Spark
    refuses: only seconds take a fraction) as the whole number of the largest unit that holds
    the bound length exactly (``90 MINUTES``)."""
    unit = node.unit.name if node.unit is not None else ""
    amount = node.this.name if node.this is not None else ""
    micros = annotate.micros(node)
    if "." in amount and spark_unit(unit) not in ("SECOND", "SECONDS") and micros is not None:
        n, unit = exact_duration(micros)
        amount = str(n)
    node.set("this", exp.Literal.string(amount))
    node.set("unit", exp.Var(this=spark_unit(unit)))


def spark_sql(node: exp.Expression) -> str:
    # sqlglot's generator may change the tree it prints: it prints a copy of its own
    copy = copy_tree(node)
    for sub in find_all(copy, exp.Identifier, exp.Interval):  # one walk of the tree
        if isinstance(sub, exp.Interval):
            spark_interval(sub)
        elif isinstance(sub, exp.Identifier) and not sub.quoted and needs_quotes(sub.this):
            sub.set("quoted", True)
    return copy.sql(dialect=SparkText, normalize_functions="lower", copy=False)


def written_sql(node: exp.Expression) -> str:
    """Spark SQL of an expression as the user wrote it: a column the planner projected for
    the join (a window) shows as the window() call it stands for."""

    def restore(sub: exp.Expression) -> exp.Expression:
        written = annotate.written(sub) if isinstance(sub, exp.Column) else None
        return written.copy() if isinstance(written, exp.Expression) else sub

    if all(annotate.written(c) is None for c in find_all(node, exp.Column)):
        return spark_sql(node)  # nothing to restore: no copy of the whole tree
    return spark_sql(node.transform(restore))
