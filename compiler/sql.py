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
from sqlglot.errors import SqlglotError

from . import annotate

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# words of Spark's expression syntax, quoted even where sqlglot would read them back
_RESERVED_WORDS = (
    "all and any as between both by case cast distinct else end escape false from in interval "
    "is like not null on or rlike select some then to true when where"
)
_RESERVED = frozenset(_RESERVED_WORDS.split())


@lru_cache(maxsize=4096)
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


def spark_sql(node: exp.Expression) -> str:
    if any(not i.quoted and needs_quotes(i.this) for i in node.find_all(exp.Identifier)):
        node = node.copy()
        for ident in node.find_all(exp.Identifier):
            if not ident.quoted and needs_quotes(ident.this):
                ident.set("quoted", True)
    return node.sql(dialect="spark", normalize_functions="lower")


def written_sql(node: exp.Expression) -> str:
    """Spark SQL of an expression as the user wrote it: a column the planner projected for
    the join (a window) shows as the window() call it stands for."""

    def restore(sub: exp.Expression) -> exp.Expression:
        written = annotate.written(sub) if isinstance(sub, exp.Column) else None
        return written.copy() if isinstance(written, exp.Expression) else sub

    return spark_sql(node.transform(restore))
