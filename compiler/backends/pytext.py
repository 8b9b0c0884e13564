"""The one way text from a spec reaches generated Python: ``escape``.

Names, strings, options, paths, SQL text and plan prose all pass through ``escape`` on their
way into a job, whether they become a string literal (``literal``; ``column_ref`` for a column
reference the DataFrame API parses), a comment (``comment``) or a line of the module
docstring (``docstring_line``).  After escaping, the text holds no
quote, no backslash, no line break of any kind (LF, CR, U+2028, U+2029, U+0085 ...), no
control or format character (NUL, bidi overrides: "Trojan Source"), no lone surrogate and
nothing else that is not printable: each is written as a Python escape sequence.  So a
literal can never end early, a comment is always one line, and the module always encodes
as UTF-8.  Printable non-ASCII text (``café``, ``中``) is kept as written, for readability.
"""

from __future__ import annotations

import re

_SIMPLE = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape(text: str) -> str:
    """``text`` as the inside of a double-quoted Python string literal, on one line.

    Inside a literal, Python reads the escapes back to exactly ``text``; inside a comment
    they show what the user wrote without letting it act.
    """
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return text  # the common case: nothing to escape
    out = []
    for char in text:
        simple = _SIMPLE.get(char)
        if simple is not None:
            out.append(simple)
        elif char.isprintable():  # false for Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs but " "
            out.append(char)
        else:
            code = ord(char)
            if code < 0x100:
                out.append(f"\\x{code:02x}")
            elif code < 0x10000:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
    return "".join(out)


def literal(text: str) -> str:
    """A double-quoted Python string literal whose value is ``text``."""
    return '"' + escape(text) + '"'


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def column_ref(*parts: str) -> str:
    """A string literal of a column reference as the DataFrame API parses it: ``select``,
    ``F.col``, ``F.window`` and ``withWatermark`` read ``a.b`` as field ``b`` of ``a``,
    ``*`` and ``a.*`` as every column, and a back-quote as the start of a quoted part
    (Spark's ``UnresolvedAttribute.parseAttributeName``).  Each of ``parts`` (a column name,
    or a qualifier then a name) is back-quoted, back-quotes doubled, unless it is a plain
    identifier, so the string names exactly that column.  Not for names Spark takes as
    written (``withColumn``'s, ``alias``'s, a DDL schema's): those are ``literal``."""
    quoted = (p if _PLAIN_NAME.fullmatch(p) else "`" + p.replace("`", "``") + "`" for p in parts)
    return literal(".".join(quoted))


def table_ref(name: str) -> str:
    """A string literal of a table or view name as ``spark.readStream.table`` and SDP's
    ``@dp.table(name=...)`` parse it: a multipart identifier (``a.b`` is table ``b`` of
    database ``a``), so the name is back-quoted as ``column_ref`` quotes a column, unless
    it is a plain identifier."""
    return column_ref(name)


def comment(text: str, width: int = 96) -> str:
    """``# text`` on one line, cut to ``width`` characters (never inside an escape)."""
    return "# " + _clip(text, width - 2)


def docstring_line(text: str, width: int = 96) -> str:
    """One line of a triple-quoted docstring (escapes are read back inside it)."""
    return _clip(text, width)


def _clip(text: str, width: int) -> str:
    """``text`` escaped and cut to ``width`` characters, cutting between escapes."""
    escaped = escape(text)
    if len(escaped) <= width:
        return escaped
    kept: list[str] = []
    size = 0
    for char in text:
        piece = escape(char)
        if size + len(piece) > width - 4:
            break
        kept.append(piece)
        size += len(piece)
    return "".join(kept) + " ..."
