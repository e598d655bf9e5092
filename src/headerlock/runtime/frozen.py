"""Deep freezing of plain data: hashable, immutable mappings and sequences."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NoReturn

from headerlock.errors import UnorderedValueError


class FrozenDict(Mapping[str, Any]):
    """An immutable, hashable mapping; assignment raises ``TypeError``."""

    __slots__ = ("_data", "_hash")
    _data: dict[str, Any]
    _hash: int | None

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        object.__setattr__(self, "_data", dict(data or {}))
        object.__setattr__(self, "_hash", None)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        if self._hash is None:
            object.__setattr__(self, "_hash", hash(frozenset(self._data.items())))
        assert self._hash is not None
        return self._hash

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if isinstance(other, FrozenDict):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"

    def _readonly(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("FrozenDict is immutable")

    __setitem__ = __delitem__ = __setattr__ = __delattr__ = _readonly
    clear = pop = popitem = setdefault = update = _readonly


_FROZEN_LEAVES: frozenset[type] = frozenset({FrozenDict, str, int, float, bool, type(None), bytes})


def deep_freeze(value: Any) -> Any:
    """Return ``value`` with every dict frozen and every list/tuple made a tuple."""
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({str(k): deep_freeze(v) for k, v in value.items()})
    if isinstance(value, tuple) and all(type(v) in _FROZEN_LEAVES for v in value):
        return value  # already frozen: a request's shared messages, for instance
    if isinstance(value, (list, tuple)):
        return tuple(deep_freeze(v) for v in value)
    if isinstance(value, (set, frozenset)):
        raise UnorderedValueError("sets have no deterministic order; pass a list instead")
    return value


def thaw(value: Any) -> Any:
    """Inverse of :func:`deep_freeze`: plain ``dict`` and ``list`` again."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value


def is_deep_frozen(value: Any) -> bool:
    """True when no mutable dict or list is reachable from ``value``."""
    if isinstance(value, FrozenDict):
        return all(is_deep_frozen(v) for v in value.values())
    if isinstance(value, tuple):
        return all(is_deep_frozen(v) for v in value)
    return not isinstance(value, (dict, list, set, bytearray))
