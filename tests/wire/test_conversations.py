"""The order of a recording's requests: sent order from one origin, conversations by
content from several (``conversations.canonical_order``)."""

from __future__ import annotations

import itertools
from typing import Any

from headerlock.formats.wire_recording import WireEntry
from headerlock.testing.wire.conversations import canonical_order
from headerlock.testing.wire.origins import Key


def _entry(*turns: str, system: str = "You help.", stream: bool = False) -> WireEntry:
    messages: list[Any] = []
    for n, text in enumerate(turns):
        messages.append({"role": "user", "content": text})
        if n < len(turns) - 1:
            messages.append({"role": "assistant", "content": f"re: {text}"})
    config = {"model": "gpt-test", **({"stream": True} if stream else {})}
    return WireEntry(
        "openai.chat", "/v1/chat/completions", config, system, None, (), None, messages
    )


def _order(entries: list[WireEntry], keys: list[Key]) -> list[WireEntry]:
    return [entries[i] for i in canonical_order(entries, keys)]


def test_one_origin_keeps_the_order_sent() -> None:
    later, earlier = _entry("b"), _entry("a")  # not by content: by the key of each request
    assert _order([later, earlier], [(0,), (1,)]) == [later, earlier]
    assert _order([later, earlier], [(1,), (0,)]) == [earlier, later]


def test_several_origins_give_one_order_whoever_sent_what() -> None:
    """Three workers pull three two-turn jobs from a queue: every assignment of jobs to
    workers and every arrival order gives the same recording order, each conversation
    whole (its first request, then its continuation, streamed or not)."""
    jobs = [(_entry(f"job {i}"), _entry(f"job {i}", "more", stream=i == 1)) for i in range(3)]
    expected = [request for job in jobs for request in job]
    for assignment in itertools.permutations(range(3)):
        entries: list[WireEntry] = []
        keys: list[Key] = []
        for worker, job in enumerate(assignment):
            for step, request in enumerate(jobs[job]):
                entries.append(request)
                keys.append((worker, step))
        for arrival in (list(range(6)), [5, 3, 1, 4, 2, 0]):
            got = _order([entries[i] for i in arrival], [keys[i] for i in arrival])
            assert got == expected


def test_a_continuation_follows_the_longest_prefix_it_extends() -> None:
    root, child, grandchild = _entry("a"), _entry("a", "b"), _entry("a", "b", "c")
    other = _entry("a", system="You plan.")  # another system: another conversation
    entries = [grandchild, other, child, root]
    order = _order(entries, [(3, 0), (2, 0), (1, 0), (0, 0)])
    assert order == [root, child, grandchild, other]
