"""Java regular expressions, as Spark reads them, run in linear time.

Spark's ``split``, ``regexp_extract`` and ``regexp_replace`` use ``java.util.regex``, a
backtracking matcher: ``(a+)+$`` takes minutes on thirty characters.  sjoin parses the
pattern as Java does (``parse``) and runs it on RE2 (the ``google-re2`` package), whose time
is linear in the text, with the same leftmost-first choice among alternatives and
quantifiers as Java, so the same match and the same groups.  What RE2 cannot run
(back-references, look-around, atomic groups, possessive quantifiers) is refused when the
spec is read (``PatternError``), with what to write instead.

The pattern is not handed to RE2 as text: it is parsed into a tree whose every character
test is an explicit set of code points, and rendered in RE2's syntax from that, so that
Java's meaning is kept where RE2's syntax means something else (``.`` excludes Java's five
line terminators, ``\\s`` includes ``\\x0B``, ``(?i)`` folds ASCII letters only, ``$``
also matches before a final line terminator).

Java's ``$`` (and ``\\Z``) matches at the end and before a line terminator that ends the
text (``\\n``, ``\\r\\n``, ``\\r``, ``\\u0085``, ``\\u2028``, ``\\u2029``).  RE2 has no
look-ahead, so for a text that ends with a terminator the text is given to RE2 with that
terminator's first character written as ``\\n`` and every other ``\\n`` as a character the
text lacks, and ``$`` becomes RE2's multi-line ``$`` (before a ``\\n`` or at the end); each
character set of the pattern is rewritten to match the stand-ins exactly where it matched
the characters they stand for.  Offsets are unchanged: one character stands for one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, TypeAlias

import re2

MAX_CODE: Final = 0x10FFFF
MAX_REPEAT: Final = 1000  # RE2's limit on a counted repetition {n,m}
TERMINATORS: Final = "\n\r\u0085\u2028\u2029"  # Java's line terminators (without UNIX_LINES)

Ranges: TypeAlias = tuple[tuple[int, int], ...]  # sorted, disjoint, not adjacent
Span: TypeAlias = tuple[int, int]  # (-1, -1): the group took no part in the match


class PatternError(ValueError):
    """A regex Spark would reject, or that sjoin cannot run exactly as Spark does
    (``javatext.java_regex`` gives it on as the text formats' own ``PatternError``)."""


# ------------------------------------------------------------------ sets of code points


def _ranges(*pairs: tuple[int, int]) -> Ranges:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(p for p in pairs if p[0] <= p[1]):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def _union(*sets: Ranges) -> Ranges:
    return _ranges(*(p for s in sets for p in s))


def _negate(s: Ranges) -> Ranges:
    out: list[tuple[int, int]] = []
    low = 0
    for lo, hi in s:
        if lo > low:
            out.append((low, lo - 1))
        low = hi + 1
    if low <= MAX_CODE:
        out.append((low, MAX_CODE))
    return tuple(out)


def _contains(s: Ranges, code: int) -> bool:
    return any(lo <= code <= hi for lo, hi in s)


def _fold(s: Ranges) -> Ranges:
    """``s`` with the other case of each ASCII letter in it (Java's CASE_INSENSITIVE
    without UNICODE_CASE folds ASCII letters only)."""
    extra: list[tuple[int, int]] = []
    for lo, hi in s:
        for first, last, shift in ((0x61, 0x7A, -0x20), (0x41, 0x5A, 0x20)):
            a, b = max(lo, first), min(hi, last)
            if a <= b:
                extra.append((a + shift, b + shift))
    return _ranges(*s, *extra)


def _chars(text: str) -> Ranges:
    return _ranges(*((ord(c), ord(c)) for c in text))


_DIGIT: Final = _ranges((0x30, 0x39))
_WORD: Final = _ranges((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
_SPACE: Final = _ranges((0x09, 0x0D), (0x20, 0x20))  # [ \t\n\x0B\f\r]
_HSPACE: Final = _union(_chars(" \t\xa0\u1680\u180e\u202f\u205f\u3000"), _ranges((0x2000, 0x200A)))
_VSPACE: Final = _chars("\n\x0b\f\r\x85\u2028\u2029")
_CLASSES: Final[dict[str, Ranges]] = {
    "d": _DIGIT,
    "w": _WORD,
    "s": _SPACE,
    "h": _HSPACE,
    "v": _VSPACE,
}
_ANY: Final = _ranges((0, MAX_CODE))
_DOT: Final = _negate(_chars(TERMINATORS))


# ------------------------------------------------------------------ the tree


@dataclass(frozen=True, slots=True)
class Chars:
    """One character from ``ranges``."""

    ranges: Ranges


@dataclass(frozen=True, slots=True)
class Assert:
    """A zero-width test: ``start`` (``^``, ``\\A``), ``end`` (``$``, ``\\Z``: Java's, see
    the module doc), ``end_text`` (``\\z``), ``word`` (``\\b``), ``not_word`` (``\\B``)."""

    kind: str


@dataclass(frozen=True, slots=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Alt:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Group:
    index: int | None  # None: a non-capturing group
    body: Node


@dataclass(frozen=True, slots=True)
class Repeat:
    body: Node
    low: int
    high: int | None  # None: no upper bound
    lazy: bool


Node: TypeAlias = Chars | Assert | Seq | Alt | Group | Repeat

_CASE_INSENSITIVE: Final = "i"
_DOTALL: Final = "s"
# inline flags sjoin does not run, and why
_FLAGS_REFUSED: Final = {
    "m": "multi-line mode `(?m)` is not supported; match line by line with `split`",
    "x": "comments mode `(?x)` is not supported; write the pattern without spaces",
    "u": "Unicode case folding `(?u)` is not supported",
    "U": "Unicode character classes `(?U)` are not supported",
    "d": "UNIX_LINES mode `(?d)` is not supported",
}
_NEEDS_BACKTRACKING: Final = (
    "sjoin runs regular expressions in linear time (RE2), which has no {what}; "
    "Spark's backtracking matcher can take minutes on one short text with them"
)


class _Parser:
    """Java's Pattern syntax (java.util.regex.Pattern, JDK 17) into the tree."""

    def __init__(self, text: str) -> None:
        self.text = self._unquote(text)
        self.i = 0
        self.flags: frozenset[str] = frozenset()
        self.groups = 0

    @staticmethod
    def _unquote(text: str) -> str:
        """Java removes ``\\Q...\\E`` quoting first: the quoted text becomes literals."""
        if "\\Q" not in text:
            return text
        out: list[str] = []
        i = 0
        while i < len(text):
            if text.startswith("\\Q", i):
                end = text.find("\\E", i + 2)
                quoted = text[i + 2 :] if end < 0 else text[i + 2 : end]
                out.extend(c if c.isalnum() and c.isascii() else "\\" + c for c in quoted)
                i = len(text) if end < 0 else end + 2
            elif text[i] == "\\" and i + 1 < len(text):
                out.append(text[i : i + 2])
                i += 2
            else:
                out.append(text[i])
                i += 1
        return "".join(out)

    def error(self, message: str, invalid: bool = True) -> PatternError:
        """``invalid``: Java rejects the pattern too; else only sjoin does."""
        where = f"(at position {min(self.i, len(self.text)) + 1})"
        if invalid:
            return PatternError(f"invalid regular expression: {message} {where}")
        return PatternError(f"{message} {where}")

    def peek(self) -> str:
        return self.text[self.i] if self.i < len(self.text) else ""

    def parse(self) -> Node:
        node = self.alternation()
        if self.i < len(self.text):  # only an unmatched ')' stops an alternation
            raise self.error("unmatched closing `)`")
        return node

    def alternation(self) -> Node:
        items = [self.sequence()]
        while self.peek() == "|":
            self.i += 1
            items.append(self.sequence())
        return items[0] if len(items) == 1 else Alt(tuple(items))

    def sequence(self) -> Node:
        items: list[Node] = []
        while self.i < len(self.text) and self.peek() not in "|)":
            atom = self.atom()
            if atom is None:  # an inline flag group such as (?i)
                continue
            items.append(self.quantified(atom))
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def atom(self) -> Node | None:
        c = self.peek()
        if c in "*+?{":
            raise self.error(f"dangling meta character `{c}`")
        self.i += 1
        if c == "(":
            return self.group()
        if c == "[":
            return Chars(self.klass())
        if c == ".":
            return Chars(_ANY if _DOTALL in self.flags else _DOT)
        if c == "^":
            return Assert("start")
        if c == "$":
            return Assert("end")
        if c == "\\":
            return self.escape()
        return self.literal(ord(c))

    def literal(self, code: int) -> Chars:
        one = _ranges((code, code))
        return Chars(_fold(one) if _CASE_INSENSITIVE in self.flags else one)

    def group(self) -> Node | None:
        saved = self.flags
        index: int | None = None
        if self.peek() != "?":
            self.groups += 1
            index = self.groups
        else:
            self.i += 1
            c = self.peek()
            if c == ":":
                self.i += 1
            elif c in "=!":
                raise self.error(
                    _NEEDS_BACKTRACKING.format(what="look-ahead `(?=...)`"), invalid=False
                )
            elif c == ">":
                raise self.error(
                    _NEEDS_BACKTRACKING.format(what="atomic group `(?>...)`"), invalid=False
                )
            elif c == "<":
                self.i += 1
                if self.peek() in ("=", "!"):
                    raise self.error(
                        _NEEDS_BACKTRACKING.format(what="look-behind `(?<=...)`"), invalid=False
                    )
                start = self.i
                while self.peek().isascii() and self.peek().isalnum():
                    self.i += 1
                name = self.text[start : self.i]
                if not name or not name[0].isalpha() or self.peek() != ">":
                    raise self.error("a group name is a letter, then letters and digits")
                self.i += 1
                self.groups += 1
                index = self.groups
            else:
                if self.flag_group():
                    return None
        body = self.alternation()
        if self.peek() != ")":
            raise self.error("unclosed group")
        self.i += 1
        self.flags = saved
        return Group(index, body)

    def flag_group(self) -> bool:
        """``(?idmsuxU-idmsuxU)`` (True: flags only) or ``(?i:`` (False: a group follows)."""
        on = True
        flags = set(self.flags)
        while True:
            c = self.peek()
            self.i += 1
            if c == "-":
                on = False
            elif c in (_CASE_INSENSITIVE, _DOTALL):
                (flags.add if on else flags.discard)(c)
            elif c in _FLAGS_REFUSED:
                raise self.error(_FLAGS_REFUSED[c], invalid=False)
            elif c == ")":
                self.flags = frozenset(flags)
                return True
            elif c == ":":
                self.flags = frozenset(flags)
                return False
            else:
                raise self.error("unknown inline modifier")

    def quantified(self, atom: Node) -> Node:
        c = self.peek()
        if c not in ("*", "+", "?", "{"):
            return atom
        self.i += 1
        low: int
        high: int | None
        if c == "*":
            low, high = 0, None
        elif c == "+":
            low, high = 1, None
        elif c == "?":
            low, high = 0, 1
        else:
            if not self.peek().isdigit():
                raise self.error("illegal repetition `{`")
            low = self.number()
            high = low
            if self.peek() == ",":
                self.i += 1
                high = None if self.peek() == "}" else self.number()
            if self.peek() != "}":
                raise self.error("unclosed counted repetition")
            self.i += 1
            if high is not None and high < low:
                raise self.error("illegal repetition range")
            if max(low, high or 0) > MAX_REPEAT:
                raise self.error(
                    f"a counted repetition above {MAX_REPEAT} is not supported "
                    "(RE2's limit); use `*` or `+`",
                    invalid=False,
                )
        lazy = False
        if self.peek() == "?":
            self.i += 1
            lazy = True
        elif self.peek() == "+":
            raise self.error(
                _NEEDS_BACKTRACKING.format(what="possessive quantifier `*+`"), invalid=False
            )
        if isinstance(atom, Assert):
            raise self.error("a quantifier on an anchor is not supported", invalid=False)
        if (low, high) not in ((0, None), (0, 1)) and _empty(atom) is not None:
            raise self.error(
                "a repetition other than `*` or `?` of a group that can match the empty "
                "string is not supported (Java ends it at the first empty iteration, which "
                "sjoin does not reproduce); make the group match at least one character",
                invalid=False,
            )
        if high is None and not lazy and not _fixed(atom) and not _empty_last(atom):
            raise self.error(
                "`*` on a group that prefers an empty match to a longer one (an empty "
                "alternative before others, a lazy quantifier, an anchor as an alternative) "
                "is not supported: Java ends the loop there, RE2 goes on; reorder the "
                "alternatives so that the empty one comes last",
                invalid=False,
            )
        return Repeat(atom, low, high, lazy)

    def number(self) -> int:
        start = self.i
        while self.peek().isdigit() and self.peek().isascii():
            self.i += 1
        digits = self.text[start : self.i]
        if not digits:
            raise self.error("a number is missing in a counted repetition")
        if len(digits) > 10 or int(digits) > 2**31 - 1:
            raise self.error("a repetition count overflows")
        return int(digits)

    # ------------------------------------------------------------------ escapes

    def escape(self, in_class: bool = False) -> Node:
        """After a backslash: a set of characters, or (outside a class) an anchor."""
        if self.i >= len(self.text):
            raise self.error("the pattern ends with a backslash")
        c = self.text[self.i]
        self.i += 1
        lower = c.lower()
        if c.isascii() and lower in _CLASSES:
            found = _CLASSES[lower]
            return Chars(_negate(found) if c.isupper() else found)
        if not in_class:
            anchors = {"A": "start", "z": "end_text", "Z": "end", "b": "word", "B": "not_word"}
            if c in anchors:
                if c == "b" and self.peek() == "{":
                    raise self.error("`\\b{g}` is not supported", invalid=False)
                return Assert(anchors[c])
            if c.isdigit() and c != "0":
                raise self.error(
                    _NEEDS_BACKTRACKING.format(what=f"back-reference `\\{c}`"), invalid=False
                )
            if c == "k":
                raise self.error(
                    _NEEDS_BACKTRACKING.format(what="back-reference `\\k<name>`"), invalid=False
                )
        code = self.escaped_code(c)
        one = _ranges((code, code))
        return Chars(_fold(one) if _CASE_INSENSITIVE in self.flags else one)

    def escaped_code(self, c: str) -> int:
        simple = {"t": 9, "n": 10, "f": 12, "r": 13, "a": 7, "e": 27}
        if c in simple:
            return simple[c]
        if c == "0":
            return self.octal()
        if c == "x":
            return self.hex_escape()
        if c == "u":
            return self.unicode_escape()
        if c == "c":
            if self.i >= len(self.text):
                raise self.error("illegal control escape `\\c`")
            self.i += 1
            return ord(self.text[self.i - 1]) ^ 64
        if c.isascii() and c.isalnum():
            unsupported = {
                "p": "Unicode classes `\\p{...}`",
                "P": "Unicode classes `\\P{...}`",
                "G": "`\\G`",
                "R": "`\\R`",
                "X": "`\\X`",
                "N": "`\\N{...}`",
            }
            if c in unsupported:
                raise self.error(f"{unsupported[c]} is not supported by sjoin", invalid=False)
            raise self.error(f"illegal or unsupported escape sequence `\\{c}`")
        return ord(c)

    def octal(self) -> int:
        digits = ""
        while len(digits) < 3 and self.peek() in "01234567" and self.peek():
            digits += self.peek()
            self.i += 1
        if not digits:
            raise self.error("illegal octal escape sequence")
        if len(digits) == 3 and digits[0] > "3":  # \0mnn needs m <= 3
            digits = digits[:2]
            self.i -= 1
        return int(digits, 8)

    def hex_escape(self) -> int:
        if self.peek() == "{":
            end = self.text.find("}", self.i)
            digits = self.text[self.i + 1 : end] if end > 0 else ""
            if not digits or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise self.error("illegal hexadecimal escape sequence")
            if len(digits) > 8 or int(digits, 16) > MAX_CODE:
                raise self.error("hexadecimal code point is too big")
            self.i = end + 1
            return int(digits, 16)
        digits = self.text[self.i : self.i + 2]
        if len(digits) < 2 or any(d not in "0123456789abcdefABCDEF" for d in digits):
            raise self.error("illegal hexadecimal escape sequence")
        self.i += 2
        return int(digits, 16)

    def unicode_escape(self) -> int:
        digits = self.text[self.i : self.i + 4]
        if len(digits) < 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
            raise self.error("illegal Unicode escape sequence")
        self.i += 4
        code = int(digits, 16)
        follow = self.text[self.i : self.i + 6]
        if 0xD800 <= code <= 0xDBFF and follow.startswith("\\u"):
            low = follow[2:]
            if len(low) == 4 and all(d in "0123456789abcdefABCDEF" for d in low):
                low_code = int(low, 16)
                if 0xDC00 <= low_code <= 0xDFFF:
                    self.i += 6
                    return 0x10000 + ((code - 0xD800) << 10) + (low_code - 0xDC00)
        return code

    # ------------------------------------------------------------------ classes

    def klass(self) -> Ranges:
        """After ``[``: Java's character class, negated by a leading ``^``; a ``]`` right
        after ``[`` or ``[^`` is a literal.  Nested classes and ``&&`` are refused."""
        negated = False
        if self.peek() == "^":
            self.i += 1
            negated = True
        items: list[Ranges] = []
        first = True
        while True:
            if self.i >= len(self.text):
                raise self.error("unclosed character class")
            c = self.peek()
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if c == "[":
                raise self.error(
                    "a class inside a class is a union in Java; write one class, "
                    "or escape the bracket as `\\[`",
                    invalid=False,
                )
            if c == "&" and self.text.startswith("&&", self.i):
                raise self.error(
                    "class intersection `&&` is not supported; escape it as `\\&`", invalid=False
                )
            items.append(self.class_item())
        found = _union(*items)
        return _negate(found) if negated else found

    def class_item(self) -> Ranges:
        code = self.class_char()
        if isinstance(code, tuple):  # \d, \w, ...: a set, never the start of a range
            return code
        if self.peek() == "-":
            after = self.text[self.i + 1 : self.i + 2]
            if after not in ("", "[", "]"):
                self.i += 1
                end = self.class_char()
                if isinstance(end, tuple) or end < code:
                    raise self.error("illegal character range")
                found = _ranges((code, end))
                return _fold(found) if _CASE_INSENSITIVE in self.flags else found
        one = _ranges((code, code))
        return _fold(one) if _CASE_INSENSITIVE in self.flags else one

    def class_char(self) -> int | Ranges:
        c = self.peek()
        self.i += 1
        if c != "\\":
            return ord(c)
        node = self.escape(in_class=True)
        assert isinstance(node, Chars)
        if len(node.ranges) == 1 and node.ranges[0][0] == node.ranges[0][1]:
            escaped = self.text[self.i - 1]
            if not (escaped.isascii() and escaped.lower() in _CLASSES):
                return node.ranges[0][0]
        return node.ranges


# ------------------------------------------------------------------ RE2 text


@dataclass(frozen=True, slots=True)
class _Stand:
    """How a text that ends with a line terminator is given to RE2 (see the module doc):
    ``last`` is the terminator's first character (written as ``\\n``), ``newline`` the
    character that every other ``\\n`` is written as."""

    last: str
    newline: str


def _stand_set(s: Ranges, stand: _Stand) -> Ranges:
    """``s`` for the text as RE2 gets it: the stand-in for ``\\n`` where ``s`` has ``\\n``,
    and ``\\n`` (written for the final terminator) where ``s`` has that terminator."""
    newline = ord(stand.newline)
    kept = tuple(
        p
        for lo, hi in s
        for p in ((lo, min(hi, 9)), (max(lo, 11), min(hi, newline - 1)), (max(lo, newline + 1), hi))
    )
    extra = []
    if _contains(s, 10):
        extra.append((newline, newline))
    if _contains(s, ord(stand.last)):
        extra.append((10, 10))
    return _ranges(*kept, *extra)


def _set_text(s: Ranges, stand: _Stand | None) -> str:
    if stand is not None:
        s = _stand_set(s, stand)
    # RE2 reads UTF-8: surrogates never occur in the text
    s = _ranges(*(p for lo, hi in s for p in ((lo, min(hi, 0xD7FF)), (max(lo, 0xE000), hi))))
    if not s:
        return r"[^\x00-\x{10FFFF}]"
    parts = [f"\\x{{{lo:X}}}" if lo == hi else f"\\x{{{lo:X}}}-\\x{{{hi:X}}}" for lo, hi in s]
    return "[" + "".join(parts) + "]"


class _Renderer:
    """The tree as RE2 text.  ``copies[k]`` is the Java group of RE2's group ``k + 1``: a
    Java group can be written more than once (see ``repeat``)."""

    def __init__(self, stand: _Stand | None) -> None:
        self.stand = stand
        self.copies: list[int] = []

    def render(self, node: Node) -> str:
        if isinstance(node, Chars):
            return _set_text(node.ranges, self.stand)
        if isinstance(node, Assert):
            if node.kind == "end":
                return "(?m:$)" if self.stand is not None else r"\z"
            return {"start": r"\A", "end_text": r"\z", "word": r"\b", "not_word": r"\B"}[node.kind]
        if isinstance(node, Seq):
            return "".join(self.render(n) for n in node.items)
        if isinstance(node, Alt):
            return "(?:" + "|".join(self.render(n) for n in node.items) + ")"
        if isinstance(node, Group):
            if node.index is None:
                return f"(?:{self.render(node.body)})"
            self.copies.append(node.index)
            return f"({self.render(node.body)})"
        return self.repeat(node)

    def repeat(self, node: Repeat) -> str:
        low, high = node.low, node.high
        if (low, high) == (0, None):
            suffix = "*"
        elif (low, high) == (1, None):
            suffix = "+"
        elif (low, high) == (0, 1):
            suffix = "?"
        elif high is None:
            suffix = f"{{{low},}}"
        elif low == high:
            suffix = f"{{{low}}}"
        else:
            suffix = f"{{{low},{high}}}"
        body = node.body
        last = _empty(body) if high is None else None
        if last is not None and isinstance(body, Group) and _fixed(body):
            # `(\\b)*`: a body of fixed length that matches nothing is Java's GroupCurly,
            # which gives back its own group after an empty iteration: it is never set
            body, last = Group(None, body.body), None
        text = "(?:" + self.render(body) + ")" + suffix + ("?" if node.lazy else "")
        if last is not None and not node.lazy:
            # Java ends a greedy loop with an iteration that matched nothing and keeps the
            # groups it set; RE2 drops such an iteration after the first, so it is written
            # out after the loop, its groups as copies (the copy set last is the value)
            text += "(?:" + self.render(last) + ")?"
        return text


def _fixed(node: Node) -> bool:
    """Java's TreeInfo.deterministic: no alternation and no repetition of varying count."""
    if isinstance(node, (Chars, Assert)):
        return True
    if isinstance(node, Seq):
        return all(_fixed(n) for n in node.items)
    if isinstance(node, Alt):
        return False
    if isinstance(node, Group):
        return _fixed(node.body)
    return node.low == node.high and _fixed(node.body)


def _empty_last(node: Node) -> bool:
    """Whether every empty match of ``node`` comes after all its other matches in its
    order of preference (then RE2 and Java agree on where a loop of it stops)."""
    if isinstance(node, (Chars, Assert)) or _empty(node) is None:
        return True
    if isinstance(node, Seq):
        return all(_empty_last(n) for n in node.items)
    if isinstance(node, Alt):
        *first, last = node.items
        return all(_empty(n) is None for n in first) and _empty_last(last)
    if isinstance(node, Group):
        return _empty_last(node.body)
    if node.lazy and node.low == 0:
        return False
    return _empty_last(node.body)


def _empty(node: Node) -> Node | None:
    """``node`` restricted to its matches of no characters, in its own order of preference
    (None: it has none)."""
    if isinstance(node, Chars):
        return None
    if isinstance(node, Assert):
        return node
    if isinstance(node, Seq):
        items = [_empty(n) for n in node.items]
        return None if any(i is None for i in items) else Seq(tuple(i for i in items if i))
    if isinstance(node, Alt):
        kept = tuple(e for e in (_empty(n) for n in node.items) if e is not None)
        return None if not kept else Alt(kept)
    if isinstance(node, Group):
        body = _empty(node.body)
        return None if body is None else Group(node.index, body)
    body = _empty(node.body)
    if node.low == 0:
        return Seq(()) if body is None else Repeat(body, 0, 1, node.lazy)
    return body


def _has_end(node: Node) -> bool:
    if isinstance(node, Assert):
        return node.kind == "end"
    if isinstance(node, (Seq, Alt)):
        return any(_has_end(n) for n in node.items)
    if isinstance(node, (Group, Repeat)):
        return _has_end(node.body)
    return False


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = 64 << 20
    return options


# Characters that stand for \n in a text that ends with a line terminator: noncharacters,
# which text rarely holds; if one text holds them all, any character it lacks is taken.
_STAND_INS: Final = tuple(chr(c) for c in range(0xFDD0, 0xFDF0))


def _stand_in(text: str) -> str:
    for c in _STAND_INS:
        if c not in text:
            return c
    used = set(text)
    for code in range(0xE000, MAX_CODE + 1):
        if chr(code) not in used and not 0xD800 <= code <= 0xDFFF:
            return chr(code)
    raise PatternError("the text holds every character")  # pragma: no cover (> 1M chars)


def _ending(text: str) -> tuple[int, str] | None:
    """(position, first character) of the line terminator that ends ``text``, if any."""
    if not text or text[-1] not in TERMINATORS:
        return None
    if text.endswith("\r\n"):
        return len(text) - 2, "\r"
    return len(text) - 1, text[-1]


class JavaRegex:
    """A parsed Java regex, run on RE2: ``search`` and ``finditer`` give spans in
    characters, as Java's Matcher (in code points) would."""

    def __init__(self, text: str) -> None:
        parser = _Parser(text)
        self.tree = parser.parse()
        self.groups = parser.groups
        self.pattern = text
        self._has_end = _has_end(self.tree)
        self._compiled: dict[_Stand | None, _Compiled] = {}
        self._compile(None)  # what RE2 refuses (too large) is refused when the spec is read
        if self._has_end:
            self._compile(_Stand("\n", _STAND_INS[0]))

    def _compile(self, stand: _Stand | None) -> _Compiled:
        found = self._compiled.get(stand)
        if found is None:
            if len(self._compiled) > 64:
                self._compiled = {k: v for k, v in self._compiled.items() if k is None}
            renderer = _Renderer(stand)
            text = renderer.render(self.tree)
            try:
                regex = re2.compile(text, _options())
            except re2.error as err:
                raise PatternError(f"the pattern is too large to run: {err}") from None
            copies: list[list[int]] = [[0]] + [[] for _ in range(self.groups)]
            for k, group in enumerate(renderer.copies):
                copies[group].append(k + 1)
            found = self._compiled[stand] = _Compiled(regex, copies)
        return found

    def _prepared(self, text: str) -> tuple[_Compiled, bytes, str]:
        """The compiled pattern and the UTF-8 text it runs on, and that text as a str."""
        ending = _ending(text) if self._has_end else None
        if ending is None:
            return self._compile(None), text.encode("utf-8", "surrogatepass"), text
        position, last = ending
        newline = _stand_in(text)
        shown = text.replace("\n", newline)
        shown = shown[:position] + "\n" + shown[position + 1 :]
        return self._compile(_Stand(last, newline)), shown.encode("utf-8", "surrogatepass"), shown

    def search(self, text: str) -> list[Span] | None:
        """The groups of the first match (Matcher.find from the start), or None."""
        return next(self.finditer(text), None)

    def finditer(self, text: str) -> Iterator[list[Span]]:
        """Each match as Java's ``while (m.find())`` finds them: the next search starts
        where the last match ended, one character further when it was empty."""
        compiled, data, shown = self._prepared(text)
        regex, copies = compiled.regex, compiled.copies
        ascii_text = len(data) == len(shown)
        convert = _Offsets(data)
        size = len(data)
        position = 0
        while position <= size:
            found = regex.search(data, position)
            if found is None:
                return
            spans = [
                found.span(ks[0]) if len(ks) == 1 else _last(found.span(k) for k in ks)
                for ks in copies
            ]
            start, end = spans[0]
            if start < size and 0x80 <= data[start] < 0xC0:
                # RE2 searches byte by byte, so an empty match of `\B` can fall inside a
                # character's UTF-8 bytes, where Java has no position: search on from the
                # next character (RE2 gave the leftmost match, so none starts before)
                position = start + 1
                while position < size and 0x80 <= data[position] < 0xC0:
                    position += 1
                continue
            yield spans if ascii_text else convert.spans(spans)
            position = end if end > start else end + _width(data, end)


@dataclass(frozen=True, slots=True)
class _Compiled:
    regex: re2._Regexp
    copies: list[list[int]]  # per Java group, its RE2 groups


def _last(spans: Iterator[Span]) -> Span:
    """Of the spans of one group's copies, the one set last: positions only grow along a
    match, so it is the one that ends last (and, ending together, starts last)."""
    return max(spans, key=lambda s: (s[1], s[0]), default=(-1, -1))


def _width(data: bytes, at: int) -> int:
    """The length of the UTF-8 sequence at ``at`` (1 at the end)."""
    if at >= len(data):
        return 1
    lead = data[at]
    return 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


class _Offsets:
    """UTF-8 byte offsets -> character offsets, for offsets that mostly grow."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.byte = 0
        self.char = 0

    def at(self, offset: int) -> int:
        if offset < self.byte:
            self.byte = self.char = 0
        self.char += len(self.data[self.byte : offset].decode("utf-8", "surrogatepass"))
        self.byte = offset
        return self.char

    def spans(self, spans: list[Span]) -> list[Span]:
        points = sorted({o for span in spans for o in span if o >= 0})
        chars = {o: self.at(o) for o in points}
        return [(chars[a], chars[b]) if a >= 0 else (-1, -1) for a, b in spans]


def parse(text: str) -> JavaRegex:
    """Parse a Java regex and compile it for RE2; PatternError says why it cannot run."""
    return JavaRegex(text)
