"""Replay matches each request to a recorded exchange by content, never by arrival.

A request takes the first recorded exchange not yet served whose request (scrubbed, or
as sent when pinned) is the same; position only breaks ties between identical requests.
So concurrent requests get their own answers whatever order they arrive in. A request
that matches nothing is explained against the closest unserved exchange.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any, Generic, Protocol, TypeVar

from headerlock.formats.wire_recording import WireEntry
from headerlock.runtime.canonical import canonical_json


class Recorded(Protocol):
    """A recorded exchange: what replay compares of its request."""

    def request_data(self) -> dict[str, Any]: ...


E = TypeVar("E", bound=Recorded)


def request_key(entry: Recorded) -> str:
    """The canonical text of what replay compares of ``entry``."""
    return canonical_json(entry.request_data())


class RecordedExchanges(Generic[E]):
    """The recorded exchanges of one replay (model requests, or other traffic), and which
    of them were served."""

    def __init__(self, entries: Sequence[E]) -> None:
        self.entries = tuple(entries)
        self.served = [False] * len(self.entries)
        self._by_key: dict[str, deque[int]] = {}
        for index, entry in enumerate(self.entries):
            self._by_key.setdefault(request_key(entry), deque()).append(index)

    def take(self, live: E) -> int | None:
        """The index of the first unserved exchange whose request equals ``live``, now
        served; ``None`` when there is none."""
        waiting = self._by_key.get(request_key(live))
        if not waiting:
            return None
        index = waiting.popleft()
        self.served[index] = True
        return index

    def take_index(self, index: int) -> None:
        """Serve the exchange at ``index`` to a request that did not match it (a replay
        that keeps answering after a mismatch, for its pending file)."""
        self.served[index] = True
        waiting = self._by_key.get(request_key(self.entries[index]))
        if waiting is not None and index in waiting:
            waiting.remove(index)

    def closest(self, live: WireEntry) -> int | None:
        """The unserved exchange most like ``live`` (the same api, path and header first,
        then the longest common run of messages), to explain a miss against."""
        best: tuple[tuple[int, ...], int] | None = None
        for index, entry in enumerate(self.entries):
            if self.served[index]:
                continue
            assert isinstance(entry, WireEntry)
            score = _likeness(entry, live)
            if best is None or score > best[0]:
                best = (score, index)
        return None if best is None else best[1]

    def unserved(self) -> list[int]:
        """The indexes of the exchanges no request took, in recorded order."""
        return [i for i, done in enumerate(self.served) if not done]


def _likeness(recorded: WireEntry, live: WireEntry) -> tuple[int, ...]:
    same = (
        recorded.api == live.api,
        recorded.path == live.path,
        recorded.tools == live.tools and recorded.tool_names == live.tool_names,
        recorded.system == live.system,
        recorded.config == live.config,
    )
    return (*map(int, same), _common_messages(recorded.messages, live.messages))


def _common_messages(a: Any, b: Any) -> int:
    if not isinstance(a, list) or not isinstance(b, list):
        return int(a == b)
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count
