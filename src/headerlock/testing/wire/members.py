"""A request body's top-level members as values: parsed strictly (a key twice in one
JSON object is a ``DuplicateKeyError``), and a long member the agent sends again (its
tools, its system, a conversation that only grew) not parsed again.

``member_values`` gets the members' spans from ``spans.body_members`` and gives each split
its own objects (a caller may change what a run shows it).
"""

from __future__ import annotations

import json
import marshal
from collections.abc import Mapping
from typing import Any, Final

from headerlock.testing.wire.spans import Span, grown_from


class DuplicateKeyError(ValueError):
    """A request body holds a JSON object with the same key twice: a provider reads one of
    them, ``json.loads`` keeps the last, so the body has no one meaning to compare."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one JSON object of the body")
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' ``object_pairs_hook``: a mapping, or ``DuplicateKeyError``."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return found


_STRICT: Final = json.JSONDecoder(object_pairs_hook=_unique_keys)
"""``json.loads(text, object_pairs_hook=_unique_keys)`` of a ``str`` is this decoder's
``decode`` (one decoder for every call: ``loads`` with a hook builds one per call)."""


def _strict(text: str) -> Any:
    """``json.loads(text, object_pairs_hook=_unique_keys)`` by one decoder for every call."""
    if text.startswith("\ufeff"):  # what loads refuses by name
        return json.loads(text, object_pairs_hook=_unique_keys)
    return _STRICT.decode(text)


_CHECKED: dict[str, tuple[bytes, bytes | None]] = {}
"""The last long value checked for duplicate keys under each member name, by its bytes,
with that value packed by ``marshal`` (``None``: it cannot be): an agent sends the same
tools and system with every request, and a conversation that only grows. Those bytes are
not parsed again: the value is unpacked (a fresh copy, at twice the speed of a parse:
each split gets its own objects, as a caller may change what a run shows it), and only
the new messages of a grown conversation are parsed and checked."""
CHECKED_MIN: Final = 1024
_CHECKED_NAMES: Final = 64
_AGAIN: Final[Any] = object()


def member_values(body: bytes, spans: Mapping[str, Span]) -> dict[str, Any]:
    """The request body's members (``spans``: ``body_members``) parsed, in the order
    sent; ``ValueError`` when one is not JSON, ``DuplicateKeyError`` when an object in
    one holds a key twice."""
    data: dict[str, Any] = {}
    for key, (start, end) in spans.items():
        raw = body[start:end]
        if end - start < CHECKED_MIN:
            data[key] = _strict(raw.decode("utf-8"))
            continue
        held = _CHECKED.get(key)
        value = _AGAIN if held is None else _again(raw, *held)
        if value is _AGAIN:
            value = _parsed(raw, None if held is None else held[0])
            packed = _pack(value)
        else:
            assert held is not None
            packed = held[1] if held[0] == raw else _pack(value)
        data[key] = value
        if key in _CHECKED or len(_CHECKED) < _CHECKED_NAMES:
            _CHECKED[key] = (raw, packed)
    return data


def _parsed(raw: bytes, before: bytes | None) -> Any:
    """The value of ``raw`` parsed, and checked for duplicate keys where ``before`` (the
    bytes last checked under its name) does not show it needs no check."""
    text = raw.decode("utf-8")
    if before == raw:
        return json.loads(text)
    later = None if before is None else grown_from(raw, 0, before)
    if later is None:
        return _strict(text)
    value = json.loads(text)  # a conversation that grew: only its new messages checked
    rest = raw[later:].lstrip(_WHITE_SPACE)
    if rest[:1] == b",":
        json.loads(b"[" + rest[1:], object_pairs_hook=_unique_keys)
    return value


def _again(raw: bytes, before: bytes, packed: bytes | None) -> Any:
    """``_parsed(raw, before)`` from ``packed`` (the value of ``before``) when ``raw`` is
    ``before`` or an array that only grew from it: its elements unpacked, then its new
    ones parsed and checked (``_AGAIN`` otherwise, and on any error: ``_parsed`` then
    says what it is)."""
    if packed is None:
        return _AGAIN
    try:
        if raw == before:
            return marshal.loads(packed)
        later = grown_from(raw, 0, before)
        if later is None:
            return _AGAIN
        rest = raw[later:].lstrip(_WHITE_SPACE)
        if rest == b"]":
            added: list[Any] = []
        elif rest[:1] == b",":
            added = _strict("[" + rest[1:].decode("utf-8"))
            if not added:  # "[..., ]": no element after the comma is no JSON
                return _AGAIN
        else:
            return _AGAIN
        head = marshal.loads(packed)
        if not isinstance(head, list) or not isinstance(added, list):
            return _AGAIN
        head.extend(added)
        return head
    except (ValueError, EOFError, TypeError, RecursionError):
        return _AGAIN


def _pack(value: Any) -> bytes | None:
    """``value`` (JSON data) packed by ``marshal``: unpacked, it is an equal copy of the
    same types, key order and float bits (``None`` when it cannot be packed)."""
    try:
        return marshal.dumps(value)
    except (ValueError, RecursionError):
        return None


_WHITE_SPACE: Final = b" \t\r\n"
