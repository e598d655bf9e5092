"""Replay matches each request to a recorded exchange by content, never by arrival.

A request takes the first recorded exchange not yet served whose request (scrubbed, or
as sent when pinned) is the same; position only breaks ties between identical requests.
So concurrent requests get their own answers whatever order they arrive in. A request
that matches nothing is explained against the closest unserved exchange.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Sequence
from typing import Any, Final, Generic, Protocol, TypeVar

from headerlock.formats.wire_recording import WireEntry
from headerlock.runtime.canonical import canonical_json
from headerlock.testing.wire.closest import ClosestIndex, closest_by_scoring


class Recorded(Protocol):
    """A recorded exchange: what replay compares of its request."""

    def request_data(self) -> dict[str, Any]: ...


E = TypeVar("E", bound=Recorded)


MESSAGES: Final = "messages"
FEW_MESSAGES: Final = 4
"""An entry with at most this many messages is keyed in one go (one encoder call); a
longer one writes each message once for every entry that shares it (``_shared_key``)."""
SCORED_MISSES: Final = 8
"""Misses explained by scoring every recorded exchange before ``closest`` builds an index."""


def request_key(entry: Recorded, messages: Sequence[str] | None = None) -> str:
    """The canonical text of what replay compares of ``entry``.

    ``messages``: the canonical text of each of its messages, when the caller has them
    (``memo``): the same text is then assembled around them (``key_frame``)."""
    frame = None if messages is None else key_frame(entry)
    if frame is None:
        return canonical_json(entry.request_data())
    return frame[0] + ",".join(messages or ()) + frame[1]


def key_frame(entry: Recorded) -> tuple[str, str] | None:
    """The text of ``request_key(entry)`` before and after its messages' canonical texts
    (joined by commas): the other keys sorted before and after ``messages`` as
    ``canonical_json`` sorts them (``None`` when its messages are not a list)."""
    data = entry.request_data()
    if not isinstance(data.get(MESSAGES), list):
        return None
    del data[MESSAGES]
    before = canonical_json({k: v for k, v in data.items() if k < MESSAGES})[:-1]
    after = canonical_json({k: v for k, v in data.items() if k > MESSAGES})[1:]
    head = "".join((before, "," if len(before) > 1 else "", f'"{MESSAGES}":['))
    return head, "".join(("]", "," if len(after) > 1 else "", after))


def _digest(key: str) -> bytes:
    """The SHA-256 of a request key: what the index keeps (not each whole text)."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()


def _shared_key(entry: Recorded, texts: dict[int, str]) -> str:
    """``request_key(entry)``, each message written once however many entries share it
    (``texts``: the canonical text of each message object seen, by identity, while they
    are all alive)."""
    messages = getattr(entry, MESSAGES, None)
    if not isinstance(messages, list):
        return request_key(entry)
    parts = []
    for message in messages:
        text = texts.get(id(message))
        if text is None:
            text = texts[id(message)] = canonical_json(message)
        parts.append(text)
    return request_key(entry, parts)


class RecordedExchanges(Generic[E]):
    """The recorded exchanges of one replay (model requests, or other traffic), and which
    of them were served."""

    def __init__(self, entries: Sequence[E]) -> None:
        self.entries = tuple(entries)
        self.served = [False] * len(self.entries)
        self._by_key: dict[bytes, deque[int]] = {}
        self._closest: ClosestIndex | None = None  # built after SCORED_MISSES misses
        self._misses = 0
        texts: dict[int, str] = {}  # a message shared by several entries is written once
        for index, entry in enumerate(self.entries):
            messages = getattr(entry, MESSAGES, None)
            short = not isinstance(messages, list) or len(messages) <= FEW_MESSAGES
            key = request_key(entry) if short else _shared_key(entry, texts)
            self._by_key.setdefault(_digest(key), deque()).append(index)

    def take(self, live: E | None, key: str | None = None) -> int | None:
        """The index of the first unserved exchange whose request equals ``live`` (whose
        ``request_key`` is ``key``, when the caller has it: ``live`` may then be ``None``),
        now served; ``None`` when there is none."""
        if key is None:
            assert live is not None
            key = request_key(live)
        waiting = self._by_key.get(_digest(key))
        if not waiting:
            return None
        index = waiting.popleft()
        self.served[index] = True
        return index

    def holds(self, live: E) -> bool:
        """Whether an unserved exchange's request equals ``live`` (none is served)."""
        return bool(self._by_key.get(_digest(request_key(live))))

    def take_index(self, index: int) -> None:
        """Serve the exchange at ``index`` to a request that did not match it (a replay
        that keeps answering after a mismatch, for its pending file)."""
        self.served[index] = True
        waiting = self._by_key.get(_digest(request_key(self.entries[index])))
        if waiting is not None and index in waiting:
            waiting.remove(index)

    def closest(self, live: WireEntry) -> int | None:
        """The unserved exchange most like ``live`` (the same api, path and header first,
        then the longest common run of messages), to explain a miss against. The first
        few misses score each exchange; more build an index (``closest``), so a replay
        whose requests all miss stays linear and one that misses once builds nothing."""
        entries = self.entries
        if self._closest is None and self._misses < SCORED_MISSES:
            self._misses += 1
            return closest_by_scoring(entries, self.served, live)  # type: ignore[arg-type]
        if self._closest is None:
            assert all(isinstance(e, WireEntry) for e in entries)
            self._closest = ClosestIndex(entries)  # type: ignore[arg-type]
        return self._closest.closest(live, self.served)

    def unserved(self) -> list[int]:
        """The indexes of the exchanges no request took, in recorded order."""
        return [i for i, done in enumerate(self.served) if not done]
