"""Canonical JSON text of plain data: the same content gives the same string."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def _plain(value: Any) -> Any:
    """What the encoder writes for a mapping that is not a ``dict`` (a ``FrozenDict``):
    a ``dict`` of it (tuples and lists it writes itself, as arrays)."""
    if isinstance(value, Mapping):
        return dict(value.items())
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_CANONICAL = json.JSONEncoder(
    sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_plain
)
"""One encoder for every call (``json.dumps`` with options builds one per call)."""


def canonical_json(value: Any) -> str:
    """Serialize with sorted keys and no insignificant whitespace (frozen data too,
    without copying it first)."""
    return _CANONICAL.encode(value)


def sorted_keys(value: Any) -> Any:
    """Plain data whose mappings have their keys in ``canonical_json`` order at every
    depth (lists keep theirs): any JSON encoder that keeps insertion order, as the
    SDKs' do, then writes canonical bytes."""
    if isinstance(value, Mapping):
        return {key: sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [sorted_keys(item) for item in value]
    return value


def code_unit_key(text: str) -> bytes:
    """Sort key giving UTF-16 code-unit order, as JavaScript compares strings."""
    return text.encode("utf-16-be", "surrogatepass")
