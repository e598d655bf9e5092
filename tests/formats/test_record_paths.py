"""The record path's faster writes give the bytes the plain ones gave (no timings): a
recording whose requests share their messages is dumped and depth-checked once per
distinct message, not once per request that repeats it (issue 31)."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import given, settings, strategies as st

from headerlock.formats.canonical_yaml import dump
from headerlock.formats.strict_yaml import loads
from headerlock.formats.wire_recording import nesting

_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=12)
_plain = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)


@st.composite
def _shared(draw: st.DrawFn) -> Any:
    """Data whose lists hold the same objects in several places (at several indents)."""
    pool = draw(st.lists(_plain, min_size=1, max_size=4))
    picks = st.lists(st.sampled_from(pool), max_size=5)
    return {
        "requests": [{"messages": draw(picks), "n": n} for n in range(draw(st.integers(0, 4)))],
        "nested": [draw(picks), [draw(picks)]],
    }


@settings(max_examples=300, deadline=None)
@given(_shared())
def test_shared_data_dumps_as_its_unshared_copy(data: Any) -> None:
    alone = copy.deepcopy(data)  # no object held twice: nothing to reuse
    assert dump(data) == dump(alone)
    assert loads(dump(data)) == alone
    assert nesting(data) == nesting(alone)


class _Counted(Mapping[str, Any]):
    """A message that counts how often its keys are read."""

    reads = 0

    def __init__(self, n: int) -> None:
        self._data = {"content": f"message {n}", "role": "user"}

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        type(self).reads += 1
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def _session(requests: int) -> dict[str, Any]:
    """A growing session: request ``n`` sends the first ``n`` messages again."""
    messages = [_Counted(n) for n in range(requests)]
    return {"requests": [{"messages": messages[: n + 1]} for n in range(requests)]}


def test_a_growing_session_writes_each_message_once() -> None:
    data = _session(200)
    _Counted.reads = 0
    text = dump(data)
    assert _Counted.reads == 200  # once per message, not 20,100 times
    plain = {"requests": [{"messages": [dict(m) for m in r["messages"]]} for r in data["requests"]]}
    assert text == dump(plain)


def test_the_depth_check_walks_each_message_once() -> None:
    data = _session(200)
    _Counted.reads = 0
    assert nesting(data) == 5  # the document, its requests, one, its messages, one
    assert _Counted.reads <= 200
