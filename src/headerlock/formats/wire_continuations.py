"""Continuations in a wire recording (format version 3): a growing session written once.

An agent session sends its whole conversation again with every request. A request whose
messages begin with an earlier request's whole list (one message at least) is written
``continues: N``, N that request's number (from 1, as every report numbers requests),
with ``messages:`` only the ones after it: the latest such request, each message
compared by its canonical text as written (scrubbed, ids tokenized; ``1``, ``1.0`` and
``true`` differ). A session then takes space linear in its messages, and a reviewer
reads each request's new messages only.

Reading (``Expander``) gives every entry its whole list again, in file order: the earlier
request's message objects followed by its own (shared, read-only, as every loaded
recording's are). A reference that is not an earlier request with a list of messages is
refused, and so is a file whose continuations would repeat more messages than a version
2 file at the size limit lists (``MAX_REPEATS``): a short file never expands into more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import is_
from typing import Any, Final, NoReturn

from headerlock.runtime.canonical import canonical_json

CONTINUES: Final = "continues"
"""The key of a request written as a continuation of an earlier one."""
MESSAGES: Final = "messages"
SINCE: Final = 3
"""The wire format version that has continuations."""
MAX_REPEATS = 1 << 23
"""The most earlier messages the continuations of one recording may repeat in all: what
a version 2 file at the size limit (``WIRE_MAX_BYTES``, 256 MiB) lists at 32 bytes a
message."""

Fail = Callable[[str, str], NoReturn]
"""Raise the reader's error for a key and a reason."""


@dataclass(slots=True)
class _Prefix:
    """A message list's prefix among a recording's requests: the lists that go on
    from it, by their next message's text, and the latest request it is the whole of."""

    longer: dict[str, _Prefix] = field(default_factory=dict)
    request: int = -1


def continuations(message_lists: Sequence[Any]) -> list[tuple[int, int] | None]:
    """Per request (its messages), the earlier request it continues (its index) and how
    many messages that one has; ``None`` when there is none or its messages are not a
    list. One walk of a tree of the prefixes seen, each message object's text taken
    once; a request that holds the very message objects of the one before it (a session
    recorded: ``memo``) continues that one, the latest there is, and walks only past it."""
    root = _Prefix()
    texts: dict[int, str] = {}
    """Each message object's canonical text, by identity (the caller keeps them alive)."""
    found: list[tuple[int, int] | None] = []
    last: tuple[Sequence[Any], _Prefix] | None = None
    """The request before: its messages and its node."""
    for number, messages in enumerate(message_lists):
        best: tuple[int, int] | None = None
        if not isinstance(messages, (list, tuple)) or not messages:
            found.append(None)
            last = None
            continue
        node, depth = root, 0
        if last is not None and len(last[0]) <= len(messages) and all(map(is_, messages, last[0])):
            node, depth = last[1], len(last[0])
            best = (number - 1, depth)
        for message in messages[depth:]:
            depth += 1
            text = texts.get(id(message))
            if text is None:
                text = texts[id(message)] = canonical_json(message)
            longer = node.longer.get(text)
            if longer is None:
                longer = node.longer[text] = _Prefix()
            node = longer
            if node.request >= 0 and (best is None or node.request > best[0]):
                best = (node.request, depth)
        node.request = number
        found.append(best)
        last = (messages, node)
    return found


def continued(requests: list[dict[str, Any]], message_lists: Sequence[Any]) -> None:
    """Write each request's plain data (``requests``, whole) as a continuation where one
    applies: ``continues`` and only the messages after the earlier request's."""
    for data, messages, earlier in zip(
        requests, message_lists, continuations(message_lists), strict=True
    ):
        if earlier is not None:
            data[CONTINUES] = earlier[0] + 1
            data[MESSAGES] = list(messages[earlier[1] :])


class Expander:
    """Reads the continuations of one recording, in file order."""

    def __init__(self, version: int, fail: Fail) -> None:
        self.allowed = version >= SINCE
        self.fail = fail
        self.lists: list[Any] = []
        """Each request read so far: its whole messages."""
        self.repeats = 0
        """The earlier messages the continuations read so far repeat (``MAX_REPEATS``)."""

    def check(self, data: Mapping[str, Any], key: str) -> None:
        """Refuse ``continues`` in an older file, and one with no messages."""
        if CONTINUES not in data:
            return
        if not self.allowed:
            self.fail(
                f"{key}.{CONTINUES}",
                f"unknown key (continuations are format version {SINCE};"
                " this file says an older version)",
            )
        if MESSAGES not in data:
            self.fail(
                f"{key}.{MESSAGES}",
                "missing: a request that continues an earlier one lists the messages"
                " after that one's",
            )

    def messages(self, data: Mapping[str, Any], key: str) -> Any:
        """The next request's whole messages: an earlier request's, then the ones it
        lists, when it ``continues`` one (an earlier request with messages)."""
        messages = data[MESSAGES]
        if CONTINUES in data:
            messages = self._expand(data[CONTINUES], messages, key)
        self.lists.append(messages)
        return messages

    def _expand(self, number: Any, messages: Any, key: str) -> list[Any]:
        at, this = f"{key}.{CONTINUES}", len(self.lists) + 1
        if not isinstance(number, int) or isinstance(number, bool):
            self.fail(at, f"must be the number of an earlier request, got {_brief(number)}")
        if this == 1:
            self.fail(at, "request 1 has no earlier request to continue")
        if not 1 <= number < this:
            self.fail(
                at,
                f"request {this} can continue request 1 to {this - 1} (requests are numbered"
                f" from 1), got {_brief(number)}",
            )
        before = self.lists[number - 1]
        if not isinstance(before, list) or not before:
            self.fail(at, f"request {number} has no list of messages to continue")
        if not isinstance(messages, list):
            self.fail(
                f"{key}.{MESSAGES}",
                f"must be a list (the messages after those of request {number}),"
                f" got {type(messages).__name__}",
            )
        self.repeats += len(before)
        if self.repeats > MAX_REPEATS:
            self.fail(
                at,
                f"the continuations repeat more than {MAX_REPEATS} earlier messages"
                " in all (the limit of a wire recording)",
            )
        return [*before, *messages]


def _brief(value: Any) -> str:
    """``value``'s repr, cut to one short line."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."
