"""The .sjoin grammar and its parser.

One cached LALR parser: deterministic and linear in the input, so large or hostile specs
cannot make parsing blow up.  ``strict=True`` turns any grammar conflict into an error when
the parser is built.  Building the tables takes a few hundred milliseconds, most of a cold
`sjoin check`, so Lark keeps them in a cache file (in the temp directory, keyed by a hash of
the grammar, the options and Lark's version; a stale or unwritable cache just means a
rebuild).
"""

from __future__ import annotations

from functools import lru_cache

from lark import Lark


@lru_cache(maxsize=1)
def parser() -> Lark:
    return Lark.open_from_package(
        __name__,
        "sjoin.lark",
        parser="lalr",
        propagate_positions=True,
        maybe_placeholders=True,
        strict=True,
        cache=True,
    )
