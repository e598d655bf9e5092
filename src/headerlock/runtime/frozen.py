"""Deep freezing of plain data: hashable, immutable mappings and sequences."""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any, Final, NoReturn

from headerlock.errors import UnorderedValueError
from headerlock.runtime.conversation import Conversation


class FrozenDict(Mapping[str, Any]):
    """An immutable, hashable mapping; assignment raises ``TypeError``."""

    __slots__ = ("_data", "_hash")
    _data: dict[str, Any]
    _hash: int | None

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        object.__setattr__(self, "_data", dict(data or {}))
        object.__setattr__(self, "_hash", None)

    @classmethod
    def _of(cls, data: dict[str, Any]) -> FrozenDict:
        """A FrozenDict owning ``data`` (a new dict nobody else holds): no copy."""
        frozen = object.__new__(cls)
        object.__setattr__(frozen, "_data", data)
        object.__setattr__(frozen, "_hash", None)
        return frozen

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

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def keys(self) -> KeysView[str]:
        return self._data.keys()

    def values(self) -> ValuesView[Any]:
        return self._data.values()

    def items(self) -> ItemsView[str, Any]:
        return self._data.items()

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"

    def _readonly(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("FrozenDict is immutable")

    __setitem__ = __delitem__ = __setattr__ = __delattr__ = _readonly
    clear = pop = popitem = setdefault = update = _readonly


_FROZEN_LEAVES: frozenset[type] = frozenset({FrozenDict, str, int, float, bool, type(None), bytes})
_SCALARS: frozenset[type] = frozenset({str, int, float, bool, type(None), bytes})
_MUTABLE: Final = (dict, list, set, bytearray)


def deep_freeze(value: Any) -> Any:
    """Return ``value`` with every dict frozen and every list/tuple made a tuple."""
    kind = type(value)
    if kind in _SCALARS or kind is FrozenDict:
        return value
    if kind is dict:
        return FrozenDict._of({str(k): deep_freeze(v) for k, v in value.items()})
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        return FrozenDict._of({str(k): deep_freeze(v) for k, v in value.items()})
    if kind is Conversation:
        return value  # the loop's messages, each frozen when added
    if isinstance(value, tuple) and _FROZEN_LEAVES.issuperset(map(type, value)):
        return value  # already frozen: a request's shared messages, for instance
    if isinstance(value, (list, tuple)):
        return tuple(deep_freeze(v) for v in value)
    if isinstance(value, (set, frozenset)):
        raise UnorderedValueError("sets have no deterministic order; pass a list instead")
    return value


def thaw(value: Any) -> Any:
    """Inverse of :func:`deep_freeze`: plain ``dict`` and ``list`` again."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is FrozenDict or kind is dict:
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, Conversation)):
        return [thaw(v) for v in value]
    return value


def is_deep_frozen(value: Any) -> bool:
    """True when no mutable dict or list is reachable from ``value``."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if kind is FrozenDict or isinstance(value, FrozenDict):
        return all(is_deep_frozen(v) for v in value.values())
    if isinstance(value, (tuple, Conversation)):
        return all(is_deep_frozen(v) for v in value)
    return not isinstance(value, _MUTABLE)
