"""A request that matches nothing is explained against the same recorded request the
one-by-one scoring picked, found without a scan of every recorded request per miss."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings, strategies as st

from headerlock.formats.wire_recording import WireEntry
from headerlock.testing.wire.closest import ClosestIndex, closest_by_scoring
from headerlock.testing.wire.matching import SCORED_MISSES, RecordedExchanges

_TEXT = st.sampled_from(["a", "b", "c"])
_MESSAGE = st.fixed_dictionaries({"role": st.sampled_from(["user", "tool"]), "content": _TEXT})
_MESSAGES = st.one_of(st.lists(_MESSAGE, max_size=4), st.none(), _TEXT)


@st.composite
def _entries(draw: st.DrawFn) -> WireEntry:
    return WireEntry(
        api=draw(st.sampled_from(["openai.chat", "anthropic.messages"])),
        path=draw(st.sampled_from(["/v1/chat/completions", "/v1/messages"])),
        config=draw(st.fixed_dictionaries({"model": st.sampled_from(["m", "n"])})),
        system=draw(st.sampled_from([None, "s", "t"])),
        tools=draw(st.sampled_from([None, [{"name": "x"}]])),
        tool_names=draw(st.sampled_from([(), ("x",)])),
        prefix_sha256=None,
        messages=draw(_MESSAGES),
    )


@settings(max_examples=150, deadline=None)
@given(
    entries=st.lists(_entries(), max_size=8),
    misses=st.lists(st.tuples(_entries(), st.lists(st.integers(0, 7), max_size=3)), max_size=5),
)
def test_the_index_picks_what_scoring_each_entry_picks(
    entries: list[WireEntry], misses: list[tuple[WireEntry, list[int]]]
) -> None:
    served = [False] * len(entries)
    index = ClosestIndex(entries)
    for live, now_served in misses:  # entries get served between misses, as in a replay
        for i in now_served:
            if i < len(entries):
                served[i] = True
        assert index.closest(live, served) == closest_by_scoring(entries, served, live)


def test_a_miss_is_explained_against_the_request_sharing_most_messages() -> None:
    def entry(*contents: str) -> WireEntry:
        messages: Any = [{"role": "user", "content": c} for c in contents]
        return WireEntry("openai.chat", "/v1/chat/completions", {"model": "m"}, None, None, (),
                         None, messages)  # fmt: skip

    recorded = RecordedExchanges([entry("a"), entry("a", "b", "c"), entry("a", "b", "d")])
    for _ in range(SCORED_MISSES + 1):  # scored, then from the index: the same answers
        assert recorded.closest(entry("a", "b", "x")) == 1  # two in common, the earliest
    recorded.take_index(1)
    assert recorded.closest(entry("a", "b", "x")) == 2
    recorded.take_index(2)
    assert recorded.closest(entry("z")) == 0
    recorded.take_index(0)
    assert recorded.closest(entry("a")) is None
