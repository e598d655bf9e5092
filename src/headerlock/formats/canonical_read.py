"""Reading text that ``canonical_yaml.dump`` wrote, line by line, without a YAML parser.

Nearly every file headerlock reads it wrote itself: block style, sorted keys, one
scalar style per value, literal blocks at a fixed indent. ``read`` parses that
subset and gives ``None`` for any other text; the caller then loads it strictly.

It accepts only a text that is exactly ``dump`` of what it returns: the layout is
the emitter's (indents, ``- `` items, ``key:`` with a block value on the next lines,
ascending keys), and each scalar token is accepted only when the emitter's own
functions write its value as that token. So what it returns is what the strict
loader gives for the text (the emitter's round trip, which the tests check), and a
text the strict loader refuses (anchors, tags, duplicate keys, flow style, comments,
tabs, a document marker, nesting past the limit, a huge integer, a lone surrogate)
is never accepted. Lines repeat (a recording repeats its conversation in every
request): each distinct line is checked once and remembered.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from headerlock.errors import SerializationError
from headerlock.formats.canonical_yaml import (
    MAX_INT_DIGITS,
    MAX_SIMPLE_KEY,
    _float,
    _literal_ok,
    _string,
)

_SCALAR: Final = 0
_OPEN: Final = 1
"""``key:`` with nothing after: its value is the block on the next lines."""
_EMPTY_MAP: Final = 2
_EMPTY_LIST: Final = 3
_LITERAL: Final = 4
_WORDS: Final[dict[str, Any]] = {
    "null": None,
    "true": True,
    "false": False,
    ".nan": float("nan"),
    ".inf": float("inf"),
    "-.inf": float("-inf"),
}
_INT: Final = re.compile(r"0|-?[1-9][0-9]*")
_QUOTED_KEY: Final = re.compile(r'"(?:[^"\\]|\\.)*"')
_ESCAPE: Final = re.compile(r"\\(x[0-9A-F]{2}|u[0-9A-F]{4}|.)")
_ESCAPED: Final = {"n": "\n", "t": "\t", "r": "\r", "N": "\x85", "L": "\u2028", "P": "\u2029"}
_CACHED_LINE: Final = 10_000
"""Longer lines are checked each time they occur."""
_CACHED_CHARS: Final = 1 << 21
"""The remembered lines are forgotten when they hold more characters than this (a
remembered line and its value stay in memory between loads)."""

Line = tuple[int, int, str | None, int, Any]
"""A checked line: its indent, its ``- `` items, its key, the kind of value and the value."""


class _Remembered:
    """The lines checked so far (in any load) and how many characters they hold."""

    __slots__ = ("chars", "lines")

    def __init__(self) -> None:
        self.lines: dict[str, Line] = {}
        self.chars = 0

    def add(self, text: str, line: Line) -> None:
        if len(text) > _CACHED_LINE:
            return
        self.chars += len(text)
        if self.chars > _CACHED_CHARS:
            self.lines.clear()
            self.chars = len(text)
        self.lines[text] = line


_remembered: Final = _Remembered()


def read(text: str, *, max_depth: int) -> dict[str, Any] | list[Any] | None:
    """The data of ``text`` when it is what ``dump`` writes of a non-empty mapping or
    list nesting at most ``max_depth`` deep; otherwise ``None``."""
    if not text.endswith("\n") or max_depth < 1:
        return None
    lines = text.split("\n")
    lines.pop()  # the empty text after the last line break
    try:
        return _read(lines, max_depth)
    except (SerializationError, ValueError, IndexError, RecursionError):
        return None


def _read(lines: list[str], max_depth: int) -> dict[str, Any] | list[Any] | None:
    """The data of ``lines``, or ``None`` (one loop: this is the hot path of a replay)."""
    cache = _remembered.lines
    remember = _remembered.add
    first = cache.get(lines[0]) or _line(lines[0])
    if first is None or first[0] != 0:
        return None
    root: dict[str, Any] | list[Any] = [] if first[1] else {}
    container: Any = root
    indent = 0
    mapping = not first[1]
    last: str | None = None  # the mapping's previous key
    stack: list[tuple[Any, int, bool, str | None]] = []  # the containers around ``container``
    pending: str | None = None  # a key whose block value starts on the next line
    count = len(lines)
    at = 0
    while at < count:
        text = lines[at]
        at += 1
        line = cache.get(text)
        if line is None:
            line = _line(text)
            if line is None:
                return None
            remember(text, line)
        column, dashes, key, kind, value = line
        if pending is not None:  # the block value of the previous line's key
            if dashes:
                if column != indent:
                    return None
                opened: Any = []
            elif column == indent + 2:
                opened = {}
            else:
                return None
            if len(stack) + 2 > max_depth:
                return None
            container[pending] = opened
            stack.append((container, indent, mapping, last))
            container, indent, mapping, last = opened, column, not dashes, None
            pending = None
        elif at > 1:
            while column < indent:
                container, indent, mapping, last = stack.pop()
            if column != indent:
                return None
            if not (mapping or dashes):  # a list ends at a key of its mapping
                if not stack:
                    return None
                container, indent, mapping, last = stack.pop()
                if not mapping or indent != column:
                    return None
        if mapping:
            if dashes or key is None or (last is not None and key <= last):
                return None
            last = key
        else:
            if not dashes:
                return None
            for _ in range(dashes - 1):  # "- - item": a list as an item, inline
                if len(stack) + 2 > max_depth:
                    return None
                opened = []
                container.append(opened)
                stack.append((container, indent, mapping, last))
                container, indent = opened, indent + 2
            if key is not None:  # "- key: ...": a mapping as an item, inline
                if len(stack) + 2 > max_depth:
                    return None
                opened = {}
                container.append(opened)
                stack.append((container, indent, mapping, last))
                container, indent, mapping, last = opened, indent + 2, True, key
        if kind == _SCALAR:
            pass
        elif kind == _OPEN:
            pending = key
            continue
        elif kind == _LITERAL:
            value, at = _literal(lines, at, indent + 2, value)
            if value is None:
                return None
        else:
            if len(stack) + 2 > max_depth:
                return None
            value = {} if kind == _EMPTY_MAP else []
        if key is None:
            container.append(value)
        else:
            container[key] = value
    if pending is not None:
        return None
    return root


def _literal(lines: list[str], at: int, indent: int, chomp: str) -> tuple[str | None, int]:
    """The text of the literal block starting at ``lines[at]`` and the index after it."""
    body = []
    count = len(lines)
    pad = " " * indent
    while at < count:
        text = lines[at]
        if not text:
            body.append("")
        elif len(text) > indent and text.startswith(pad):
            body.append(text[indent:])
        else:
            break
        at += 1
    value = "\n".join(body)
    if chomp != "-":
        value += "\n"
    if not body or "\n" not in value or not _literal_ok(value):
        return None, at
    written = "-" if not value.endswith("\n") else "+" if value.endswith("\n\n") else ""
    return (value if written == chomp else None), at


def _line(text: str) -> Line | None:
    """``text`` split into its indent, items, key and value, or ``None`` when it is not
    a line ``dump`` writes."""
    rest = text.lstrip(" ")
    column = len(text) - len(rest)
    dashes = 0
    while rest.startswith("- "):
        dashes += 1
        rest = rest[2:]
    if rest.startswith('"'):
        found = _QUOTED_KEY.match(rest)
        if found is None:
            return None
        end = found.end()
        if end == len(rest):
            return _item(column, dashes, rest)
        if rest[end] != ":":
            return None
    else:
        end = rest.find(":")
        if end < 0:
            return _item(column, dashes, rest)
    key = _key(rest[:end])
    after = rest[end + 1 :]
    if key is None or (after and after[0] != " "):
        return None
    if not after:
        return column, dashes, key, _OPEN, None
    parsed = _value(after[1:])
    return None if parsed is None else (column, dashes, key, *parsed)


def _item(column: int, dashes: int, token: str) -> Line | None:
    parsed = _value(token) if dashes else None
    return None if parsed is None else (column, dashes, None, *parsed)


def _key(token: str) -> str | None:
    """The key written as ``token`` (keys are never literal blocks)."""
    if not token or len(token) > MAX_SIMPLE_KEY:
        return None
    key = _unquoted(token) if token[0] == '"' else token
    return key if _string(key) == token else None


def _value(token: str) -> tuple[int, Any] | None:
    """The kind and value of a scalar token at the end of a line."""
    if not token:
        return None
    if token[0] == '"':
        text = _unquoted(token)
        if _string(text) != token or ("\n" in text and _literal_ok(text)):
            return None
        return _SCALAR, text
    if token in _WORDS:
        return _SCALAR, _WORDS[token]
    if token == "{}":
        return _EMPTY_MAP, None
    if token == "[]":
        return _EMPTY_LIST, None
    if token in ("|", "|-", "|+"):
        return _LITERAL, token[1:]
    if _INT.fullmatch(token):
        if len(token) - (token[0] == "-") > MAX_INT_DIGITS:
            return None
        return _SCALAR, int(token)  # a lower sys.set_int_max_str_digits(): ValueError
    if token[0] in "-.0123456789":
        number = float(token)  # not a number: ValueError
        return (_SCALAR, number) if _float(number) == token else None
    return (_SCALAR, token) if _string(token) == token else None


def _unquoted(token: str) -> str:
    """The text of a double-quoted token (checked by the caller: ``_string`` of it is
    ``token`` again)."""
    inner = token[1:-1]
    if "\\" not in inner:
        return inner
    try:
        text = json.loads(token)  # the common escapes, in C
    except ValueError:
        text = None
    if isinstance(text, str):
        return text
    return _ESCAPE.sub(_unescape, inner)


def _unescape(found: re.Match[str]) -> str:
    code = found[1]
    if len(code) > 1:
        return chr(int(code[1:], 16))
    return _ESCAPED.get(code, code)
