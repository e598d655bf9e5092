"""A request body whose bytes around its messages repeat the api's last body's.

An agent sends the same model, config, system and tools with every request; only the
messages change. ``Around`` keeps the last body's bytes before and after its messages'
value (``head`` and ``tail``) and what was read from them (packed by ``marshal``: each
unpacking is a fresh copy, as each split must get its own objects). A body that is
``head``, one JSON value and ``tail`` has the same members with the same values but
for its messages: only the messages are read (``members.member_values``, strictly).
"""

from __future__ import annotations

import marshal
from dataclasses import dataclass
from typing import Any, Final

from headerlock.testing.wire.members import member_values
from headerlock.testing.wire.spans import Span

_WHITE_SPACE: Final = b" \t\r\n"


@dataclass(frozen=True, slots=True)
class Around:
    """The bytes around the messages of one body (``head``, ``tail``), the name of the
    messages' member, what was read outside them (``packed``) and values kept as they
    are (immutable)."""

    owner: object
    head: bytes
    tail: bytes
    key: str
    packed: bytes
    kept: tuple[Any, ...]

    @classmethod
    def of(
        cls, owner: object, body: bytes, key: str, span: Span, read: Any, kept: tuple[Any, ...]
    ) -> Around | None:
        """The bytes of ``body`` around ``span`` (its member ``key``) and ``read`` packed
        (``None`` when it cannot be packed)."""
        try:
            packed = marshal.dumps(read)
        except (ValueError, RecursionError):
            return None
        return cls(owner, body[: span[0]], body[span[1] :], key, packed, kept)

    def messages(self, body: bytes) -> tuple[Any, Span] | None:
        """The messages' value of ``body`` and its span when ``body`` is ``head``, one
        JSON value (no white space at either end) and ``tail``; ``None`` otherwise, and
        when that value is no JSON or holds a key twice (the whole body is then read as
        any other: it says which error is the body's)."""
        head, tail = self.head, self.tail
        start, end = len(head), len(body) - len(tail)
        if end <= start or not body.startswith(head) or not body.endswith(tail):
            return None
        if body[start] in _WHITE_SPACE or body[end - 1] in _WHITE_SPACE:
            return None
        try:
            value = member_values(body, {self.key: (start, end)})[self.key]
        except (ValueError, RecursionError):
            return None
        return value, (start, end)

    def read(self) -> Any:
        """A fresh copy of what was read outside the messages."""
        return marshal.loads(self.packed)
