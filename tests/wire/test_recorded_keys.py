"""A replay indexes each recorded exchange by its request key (issue 31): an entry with
few messages is keyed in one go, a longer one writes each message once for every entry
sharing it. Either way the index must find each entry by ``request_key``, the text the
live request is keyed by, and nothing else."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from headerlock.formats.wire_recording import WireEntry
from headerlock.runtime.canonical import canonical_json
from headerlock.testing.wire import matching
from headerlock.testing.wire.matching import FEW_MESSAGES, RecordedExchanges, request_key

VALUE = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([1.0, 0.5, -0.0]),
    st.text(max_size=4),
)  # fmt: skip
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool"])},
    optional={"content": VALUE, "name": st.text(max_size=3), "n": VALUE},
)
CONFIG = st.dictionaries(st.sampled_from(["a", "messagez", "m", "temperature"]), VALUE, max_size=3)


def _entry(messages: list[Any], config: dict[str, Any], header: str | None) -> WireEntry:
    return WireEntry(
        api="openai.chat", path="/v1/chat/completions", config=config, system=None,
        tools=None, tool_names=(), prefix_sha256=None, messages=messages, header=header,
    )  # fmt: skip


@st.composite
def conversations(draw: st.DrawFn) -> list[WireEntry]:
    """Entries of a growing conversation (each list begins with the previous one's message
    objects, as a recording read with continuations holds them), some repeated."""
    pool = draw(st.lists(MESSAGE, min_size=0, max_size=2 * FEW_MESSAGES + 2))
    cuts = sorted(draw(st.lists(st.integers(0, len(pool)), min_size=1, max_size=5)))
    header = draw(st.sampled_from([None, "c41d2839bb5e"]))
    config = draw(CONFIG)
    return [_entry(pool[:cut], config, header) for cut in cuts]


def _found(exchanges: RecordedExchanges[WireEntry], entries: list[WireEntry]) -> list[int | None]:
    """The index each entry's ``request_key`` takes, in turn."""
    return [exchanges.take(entry, request_key(entry)) for entry in entries]


@settings(max_examples=300, deadline=None)
@given(conversations())
def test_each_recorded_entry_is_found_by_its_request_key(entries: list[WireEntry]) -> None:
    found = _found(RecordedExchanges(entries), entries)
    assert found == list(range(len(entries)))  # equal entries: the first unserved first
    assert all(request_key(e) == canonical_json(e.request_data()) for e in entries)


def test_a_short_and_a_long_entry_are_keyed_as_request_key_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both ways of keying are used, and a broken one misses its entry."""
    short = _entry([{"role": "user", "content": "hi"}], {}, None)
    long = _entry([{"role": "user", "content": str(n)} for n in range(FEW_MESSAGES + 1)], {}, None)
    assert _found(RecordedExchanges([short, long]), [short, long]) == [0, 1]
    with monkeypatch.context() as patched:
        patched.setattr(matching, "request_key", lambda entry, messages=None: "broken")
        assert RecordedExchanges([short]).take(short, request_key(short)) is None
    with monkeypatch.context() as patched:
        patched.setattr(matching, "_shared_key", lambda entry, texts: "broken")
        assert RecordedExchanges([long]).take(long, request_key(long)) is None
        assert RecordedExchanges([short]).take(short, request_key(short)) == 0
