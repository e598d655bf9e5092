"""The unserved recorded request most like a live one, found without a scan per miss.

A replay explains a request that matches nothing against the unserved recorded request
most like it: the same api, path, tools, system and config first (in that order), then
the longest run of leading messages in common, the earliest on a tie. Scoring every
recorded request for every miss made a replay whose requests all miss quadratic; this
index groups the recorded requests by those five parts and, within a group, in a tree of
their leading messages (by each message's canonical text, as replay compares; a message
several entries share is written once), so a miss costs one likeness per group and one
look-up per message it has in common.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from headerlock.formats.wire_recording import WireEntry
from headerlock.runtime.canonical import canonical_json


def likeness(recorded: WireEntry, live: WireEntry) -> tuple[int, ...]:
    """Which of api, path, tools, system and config ``recorded`` shares with ``live``."""
    same = (
        recorded.api == live.api,
        recorded.path == live.path,
        recorded.tools == live.tools and recorded.tool_names == live.tool_names,
        recorded.system == live.system,
        recorded.config == live.config,
    )
    return tuple(map(int, same))


def common_messages(a: Any, b: Any) -> int:
    """How many leading messages ``a`` and ``b`` share (1 or 0 when either is no list)."""
    if not isinstance(a, list) or not isinstance(b, list):
        return int(a == b)
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def closest_by_scoring(
    entries: Sequence[WireEntry], served: Sequence[bool], live: WireEntry
) -> int | None:
    """``ClosestIndex.closest`` by scoring every unserved entry (no index to build: what
    a replay with a few misses does)."""
    best: tuple[tuple[int, ...], int] | None = None
    for index, entry in enumerate(entries):
        if served[index]:
            continue
        score = (*likeness(entry, live), common_messages(entry.messages, live.messages))
        if best is None or score > best[0]:
            best = (score, index)
    return None if best is None else best[1]


@dataclass(slots=True)
class _Queue:
    """Entry indexes in ascending order; served ones are dropped as they reach the front."""

    indexes: list[int] = field(default_factory=list)
    front: int = 0

    def first(self, served: Sequence[bool]) -> int | None:
        while self.front < len(self.indexes) and served[self.indexes[self.front]]:
            self.front += 1
        return self.indexes[self.front] if self.front < len(self.indexes) else None


@dataclass(slots=True)
class _Node:
    """A run of leading messages: the entries that start with it, and its longer runs by
    the canonical text of their next message."""

    entries: _Queue = field(default_factory=_Queue)
    next: dict[str, _Node] = field(default_factory=dict)


@dataclass(slots=True)
class _Group:
    """The recorded requests with the same api, path, tools, system and config."""

    first: WireEntry
    every: _Queue = field(default_factory=_Queue)
    listed: _Node = field(default_factory=_Node)
    """The entries whose messages are a list, by their leading messages."""
    unlisted: list[int] = field(default_factory=list)
    """Entries whose messages are no list: scored one by one (``common_messages``)."""


def _group_key(entry: WireEntry) -> str:
    return canonical_json(
        [entry.api, entry.path, entry.tools, list(entry.tool_names), entry.system, entry.config]
    )


class ClosestIndex:
    """The recorded requests of one replay, indexed for ``closest``."""

    def __init__(self, entries: Sequence[WireEntry]) -> None:
        self.entries = entries
        self._groups: dict[str, _Group] = {}
        texts: dict[int, str] = {}  # a message shared by several entries is written once
        for index, entry in enumerate(entries):
            key = _group_key(entry)
            group = self._groups.get(key)
            if group is None:
                group = self._groups[key] = _Group(entry)
            group.every.indexes.append(index)
            if not isinstance(entry.messages, list):
                group.unlisted.append(index)
                continue
            node = group.listed
            node.entries.indexes.append(index)
            for message in entry.messages:
                text = texts.get(id(message))
                if text is None:
                    text = texts[id(message)] = canonical_json(message)
                node = node.next.setdefault(text, _Node())
                node.entries.indexes.append(index)

    def closest(self, live: WireEntry, served: Sequence[bool]) -> int | None:
        """The unserved entry most like ``live`` (``likeness``, then the messages in
        common, then the earliest), or ``None`` when every entry is served."""
        best: tuple[tuple[int, ...], int] | None = None
        live_texts: list[str] | None = None
        for group in self._groups.values():
            if group.every.first(served) is None:
                continue
            shape = likeness(group.first, live)
            if best is not None and shape < best[0][:-1]:
                continue
            if isinstance(live.messages, list) and live_texts is None:
                live_texts = [canonical_json(m) for m in live.messages]
            for index, common in self._in_group(group, live, live_texts, served):
                score = (*shape, common)
                if best is None or score > best[0] or (score == best[0] and index < best[1]):
                    best = (score, index)
        return None if best is None else best[1]

    def _in_group(
        self, group: _Group, live: WireEntry, texts: list[str] | None, served: Sequence[bool]
    ) -> list[tuple[int, int]]:
        """Candidates of ``group``: (index, messages in common) of the earliest unserved
        entry with the longest common run, and of each unserved unlisted entry."""
        found = [(i, common_messages(self.entries[i].messages, live.messages))
                 for i in group.unlisted if not served[i]]  # fmt: skip
        node = group.listed
        best = node.entries.first(served)
        if best is None:
            return found
        common = 0
        for text in texts or ():  # none: live's messages are no list, so none in common
            found_next = node.next.get(text)
            index = None if found_next is None else found_next.entries.first(served)
            if found_next is None or index is None:
                break
            node, best, common = found_next, index, common + 1
        return [*found, (best, common)]
