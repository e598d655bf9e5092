"""The raw-JSON span scanner: where each value of a JSON text starts and ends.

The cacheable prefix is the bytes of the tools and the system exactly as sent,
so they are cut out of the body by position, never re-serialized. The text is
assumed valid JSON (it parsed with ``json.loads`` first); spans are
``(start, end)`` byte offsets, ``end`` exclusive.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Final

Span = tuple[int, int]

_WS: Final = b" \t\r\n"
_STRUCTURE: Final = re.compile(rb'["{}\[\]]')
_SCALAR_END: Final = re.compile(rb"[,}\]\s]")


def _skip(raw: bytes, i: int) -> int:
    while i < len(raw) and raw[i] in _WS:
        i += 1
    return i


def _string_end(raw: bytes, i: int) -> int:
    """The end of the JSON string starting at ``raw[i] == '"'``."""
    j = i + 1
    while True:
        j = raw.index(b'"', j)
        backslashes = 0
        while raw[j - 1 - backslashes] == 0x5C:
            backslashes += 1
        if backslashes % 2 == 0:
            return j + 1
        j += 1


_DECODER: Final = json.JSONDecoder()


def _container_end(raw: bytes, text: str | None, i: int) -> int:
    """The end of the object or array at ``raw[i]``, by the C JSON scanner over ``text``
    (``raw`` decoded as Latin-1: one character per byte, so its offsets are bytes')."""
    try:
        return _DECODER.raw_decode(raw.decode("latin-1") if text is None else text, i)[1]
    except (ValueError, RecursionError):  # nesting deeper than the C scanner goes
        return _scan_end(raw, i)


def value_end(raw: bytes, i: int, text: str | None = None) -> int:
    """The end of the JSON value starting at ``raw[i]`` (the text is valid JSON);
    ``text`` is ``raw`` decoded as Latin-1, when the caller has it."""
    first = raw[i : i + 1]
    if first in (b"{", b"["):
        return _container_end(raw, text, i)
    return _scan_end(raw, i)


def _scan_end(raw: bytes, i: int) -> int:
    first = raw[i : i + 1]
    if first == b'"':
        return _string_end(raw, i)
    if first not in (b"{", b"["):
        match = _SCALAR_END.search(raw, i)
        return match.start() if match else len(raw)
    depth, j = 0, i
    while (match := _STRUCTURE.search(raw, j)) is not None:
        j = match.start()
        char = raw[j : j + 1]
        if char == b'"':
            j = _string_end(raw, j)
            continue
        depth += 1 if char in (b"{", b"[") else -1
        j += 1
        if depth == 0:
            return j
    raise ValueError("unterminated JSON value")


def object_members(raw: bytes, start: int = 0) -> dict[str, Span]:
    """Byte spans of the values of the JSON object at ``start`` (last duplicate wins)."""
    return _members(raw, start, strict=False)


class DuplicateMember(ValueError):
    """The top-level object holds ``key`` twice (``body_members``)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in the object")
        self.key = key


def body_members(raw: bytes) -> dict[str, Span]:
    """Byte spans of the values of the JSON object that is the whole of ``raw``, checked:
    a colon after each key, a comma or the closing brace after each value, nothing but
    white space after it, no key twice (``DuplicateMember``); ``ValueError`` otherwise.
    The values themselves are not checked (each is parsed on its own)."""
    return _members(raw, 0, strict=True)


_RECENT: dict[str, bytes] = {}
"""The bytes of the last long container value seen under each member name: an agent
sends the same tools and system with every request, and finding their end again by
scanning costs more than the rest of the request (a value ends where its bytes do)."""
_RECENT_MIN: Final = 256
_RECENT_NAMES: Final = 64


def _members(raw: bytes, start: int, *, strict: bool) -> dict[str, Span]:
    spans: dict[str, Span] = {}
    text = raw.decode("latin-1")
    i = _skip(raw, start)
    if raw[i : i + 1] != b"{":
        raise ValueError("not a JSON object")
    i = _skip(raw, i + 1)
    while raw[i : i + 1] == b'"':
        key_end = _string_end(raw, i)
        key = _key(raw, i, key_end)
        if strict and key in spans:
            raise DuplicateMember(key)
        colon = _skip(raw, key_end)
        if strict and raw[colon : colon + 1] != b":":
            raise ValueError(f"expected ':' after the key {key!r}")
        i = _skip(raw, colon + 1)
        end = _end(raw, text, i, key)
        spans[key] = (i, end)
        i = _skip(raw, end)
        if raw[i : i + 1] == b",":
            i = _skip(raw, i + 1)
            if strict and raw[i : i + 1] != b'"':
                raise ValueError("expected a key after ','")
        elif strict and raw[i : i + 1] != b"}":
            raise ValueError(f"expected ',' or '}}' after the value of {key!r}")
    if strict and (raw[i : i + 1] != b"}" or _skip(raw, i + 1) != len(raw)):
        raise ValueError("expected the end of the object")
    return spans


_PLAIN_STRING: Final = re.compile(rb'[^\\\x00-\x1f"]*')
"""The inside of a JSON string that holds no escape (nor a character JSON refuses raw)."""


def _key(raw: bytes, start: int, end: int) -> str:
    """The key written at ``raw[start:end]`` (a JSON string): ``json.loads`` of it, its
    bytes decoded as they are when they hold no backslash nor control character (JSON
    text reads such a string as exactly its characters, decoded as ``json.loads`` decodes
    bytes: UTF-8, lone surrogates passed)."""
    if _PLAIN_STRING.fullmatch(raw, start + 1, end - 1) is None:
        key: str = json.loads(raw[start:end])
        return key
    return raw[start + 1 : end - 1].decode("utf-8", "surrogatepass")


def _end(raw: bytes, text: str, i: int, key: str) -> int:
    """The end of the value at ``raw[i]``, a member named ``key``; a long container's
    bytes are remembered under ``key``: when they come again they are not scanned (a
    complete container ends with its closing bracket), and an array that only grew (a
    conversation) has only its new elements scanned."""
    if raw[i : i + 1] not in (b"{", b"["):
        return value_end(raw, i, text)
    recent = _RECENT.get(key)
    end: int | None = None
    if recent is not None:
        if raw.startswith(recent, i):
            return i + len(recent)
        later = grown_from(raw, i, recent)
        if later is not None:
            end = _rest_end(raw, text, later)
    if end is None:
        end = value_end(raw, i, text)
    if end - i >= _RECENT_MIN and (key in _RECENT or len(_RECENT) < _RECENT_NAMES):
        _RECENT[key] = raw[i:end]
    return end


def grown_from(raw: bytes, i: int, before: bytes) -> int | None:
    """Where the array at ``raw[i]`` goes on past the elements of ``before`` (a whole
    array with at least one element), when it starts with them byte for byte: the
    offset after them (``None`` when it does not)."""
    head = before[:-1]
    if before[:1] != b"[" or before[-1:] != b"]" or head.rstrip(_WS) == b"[":
        return None
    after = i + len(head)
    if not raw.startswith(head, i) or raw[after : after + 1] not in _AFTER_ELEMENT:
        return None
    return after


_AFTER_ELEMENT: Final = (b" ", b"\t", b"\r", b"\n", b",", b"]")
"""What may follow the last element of an array (an element ``12`` is not ``123``'s)."""


def _rest_end(raw: bytes, text: str, i: int) -> int | None:
    """The end of an array whose elements before ``raw[i]`` are known: its later ones
    scanned (``None`` when what follows is not ``, element ...]``)."""
    i = _skip(raw, i)
    while raw[i : i + 1] == b",":
        i = _skip(raw, i + 1)
        if i >= len(raw) or raw[i : i + 1] in (b"]", b","):
            return None
        i = _skip(raw, value_end(raw, i, text))
    return i + 1 if raw[i : i + 1] == b"]" else None


def array_elements(raw: bytes, start: int = 0, limit: int | None = None) -> list[Span]:
    """Byte spans of the elements of the JSON array at ``start`` (only the first
    ``limit`` of them when given: the rest are not scanned)."""
    i = _skip(raw, start)
    if raw[i : i + 1] != b"[":
        raise ValueError("not a JSON array")
    return _elements(raw, _skip(raw, i + 1), [], limit)


def _elements(raw: bytes, i: int, spans: list[Span], limit: int | None = None) -> list[Span]:
    """``spans`` and those of the array's elements from ``raw[i]`` on (to its end, or
    until there are ``limit``)."""
    text = raw.decode("latin-1")
    while raw[i : i + 1] not in (b"]", b"") and (limit is None or len(spans) < limit):
        end = value_end(raw, i, text)
        spans.append((i, end))
        i = _skip(raw, end)
        if raw[i : i + 1] == b",":
            i = _skip(raw, i + 1)
    return spans


@dataclass(frozen=True, slots=True)
class Elements:
    """The element spans of the JSON array at ``start`` of ``raw``."""

    raw: bytes
    start: int
    spans: list[Span]
    repeated: int = 0
    """How many leading spans were taken from the earlier text (``repeated_elements``)."""


def repeated_elements(raw: bytes, start: int, before: Elements | None) -> Elements:
    """``array_elements(raw, start)``, reusing the spans ``before`` found in an earlier
    text with its array at the same offset for each element whose bytes (and the byte
    after it) ``raw`` repeats: a conversation that only grows scans only its new
    messages. The spans are the same as scanning ``raw`` whole: a span depends only on
    the bytes up to the byte after it."""
    kept = 0
    if before is not None and before.start == start:
        old, spans = memoryview(before.raw), before.spans
        low, high = 0, len(spans)  # the most leading spans whose bytes repeat
        while low < high:
            middle = (low + high + 1) // 2
            end = spans[middle - 1][1] + 1
            if end <= len(raw) and raw.startswith(old[:end]):
                low = middle
            else:
                high = middle - 1
        kept = low
    if before is None or not kept:
        return Elements(raw, start, array_elements(raw, start))
    i = _skip(raw, before.spans[kept - 1][1])
    if raw[i : i + 1] == b",":
        i = _skip(raw, i + 1)
    return Elements(raw, start, _elements(raw, i, before.spans[:kept]), kept)
