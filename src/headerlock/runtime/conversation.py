"""The messages of a request, shared with the loop's growing conversation: no copy.

The loop sends the whole conversation with every request. A fresh tuple per request,
and a check that its leading messages are the very objects verified with the previous
request, would each cost time in proportion to the conversation, per step: quadratic
over a long session. A ``Conversation`` is a read-only view of the first ``n`` messages
of the loop's list, which only ever grows; two views of that list share their common
prefix by construction.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any, NoReturn, overload


class Conversation(Sequence[Any]):
    """The first ``size`` items of ``items`` (an append-only list owned by the loop),
    read-only; equal to the tuple of those items."""

    __slots__ = ("_items", "_size")
    _items: list[Any]
    _size: int

    def __init__(self, items: list[Any], size: int | None = None) -> None:
        object.__setattr__(self, "_items", items)
        object.__setattr__(self, "_size", len(items) if size is None else size)

    def shares_prefix(self, other: object) -> bool:
        """Whether ``other`` views the same list: its items are this one's very objects,
        as far as both go."""
        return isinstance(other, Conversation) and other._items is self._items

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Any, ...]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._size)
            if step == 1:
                return tuple(self._items[start:stop])
            return tuple(self._items[i] for i in range(start, stop, step))
        size = self._size
        if not -size <= index < size:
            raise IndexError("conversation index out of range")
        return self._items[index if index >= 0 else size + index]

    def __iter__(self) -> Iterator[Any]:
        return islice(self._items, self._size)

    def as_tuple(self) -> tuple[Any, ...]:
        """The messages as a tuple (a copy)."""
        return tuple(islice(self._items, self._size))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Conversation):
            if other._items is self._items:
                return other._size == self._size
            return self.as_tuple() == other.as_tuple()
        if isinstance(other, tuple):
            return self.as_tuple() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.as_tuple())

    def __add__(self, other: object) -> tuple[Any, ...]:
        if isinstance(other, (tuple, Conversation)):
            return self.as_tuple() + tuple(other)
        return NotImplemented

    def __radd__(self, other: object) -> tuple[Any, ...]:
        if isinstance(other, tuple):
            return other + self.as_tuple()
        return NotImplemented

    def __reduce__(self) -> tuple[type[Conversation], tuple[list[Any]]]:
        return Conversation, (list(self),)  # a copy or a pickle holds only these items

    def __repr__(self) -> str:
        return repr(self.as_tuple())

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError("a Conversation is read-only")

    __delattr__ = __setattr__  # type: ignore[assignment]
