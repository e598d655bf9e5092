"""A request's messages are a read-only view of the loop's growing conversation."""

from __future__ import annotations

import asyncio
import copy
import pickle
from typing import Any

import pytest
from hypothesis import given, strategies as st

from headerlock.runtime.adapters.scripted import ScriptedAdapter
from headerlock.runtime.app import AgentApp
from headerlock.runtime.conversation import Conversation
from headerlock.runtime.frozen import deep_freeze, is_deep_frozen, thaw
from headerlock.runtime.llm import ModelRequest
from tests.support import tool_plugin


@given(
    items=st.lists(st.integers(), max_size=8),
    cut=st.integers(0, 8),
    start=st.none() | st.integers(-10, 10),
    stop=st.none() | st.integers(-10, 10),
    step=st.none() | st.integers(-3, 3).filter(bool),
)
def test_a_conversation_is_the_tuple_of_its_first_items(
    items: list[int], cut: int, start: int | None, stop: int | None, step: int | None
) -> None:
    size = min(cut, len(items))
    shown = Conversation([*items, 99], size)  # an item past the size is not part of it
    same = tuple(items[:size])
    assert shown == same and same == shown and hash(shown) == hash(same)
    assert len(shown) == size and list(shown) == list(same) and repr(shown) == repr(same)
    assert shown[start:stop:step] == same[start:stop:step]
    assert shown + (1,) == (*same, 1) and (1,) + shown == (1, *same)  # noqa: RUF005 (a plugin may add)
    for index in range(-size - 2, size + 2):
        if -size <= index < size:
            assert shown[index] == same[index]
        else:
            with pytest.raises(IndexError):
                shown[index]


def test_a_conversation_is_read_only_and_frozen() -> None:
    shown = Conversation([deep_freeze({"role": "user", "content": "hi"})])
    with pytest.raises(AttributeError):
        shown.append({})  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        shown._size = 0
    with pytest.raises(TypeError):
        shown[0]["content"] = "changed"
    assert is_deep_frozen(shown) and deep_freeze(shown) is shown
    assert not is_deep_frozen(Conversation([{"mutable": True}]))
    assert thaw(shown) == [{"role": "user", "content": "hi"}]
    grown = Conversation(["hi", "later"], 1)
    for copied in (copy.copy(grown), copy.deepcopy(grown), pickle.loads(pickle.dumps(grown))):
        assert copied == ("hi",) and type(copied) is Conversation and len(copied) == 1


def _turn(replies: list[Any], *plugins: Any) -> tuple[AgentApp, ScriptedAdapter, Any]:
    adapter = ScriptedAdapter(replies)
    app = AgentApp(
        {"model": "demo", "persona": "Be brief."},
        plugins=[tool_plugin("read"), *plugins],
        adapter=adapter,
    )

    async def go() -> Any:
        await app.start()
        return await app.run_turn("read x")

    return app, adapter, asyncio.run(go())


def test_each_request_shares_the_conversation_instead_of_copying_it() -> None:
    call = {"tool_calls": [{"name": "read"}]}
    _, adapter, result = _turn([call, call, "done"])
    assert result.reason.kind == "stop"
    first, second, third = (r.messages for r in adapter.requests)
    assert isinstance(third, Conversation) and third.shares_prefix(first)
    assert (len(first), len(second), len(third)) == (1, 3, 5)
    assert third[: len(second)] == second and second[:1] == first  # what each step sent
    assert ModelRequest(adapter.requests[2].header, third) == adapter.requests[2]


def test_a_view_of_another_list_is_checked_message_by_message() -> None:
    """A plugin that rebuilds the conversation in a list of its own, with a middle message
    changed, is caught: only a view of the loop's own list skips the verified prefix."""

    def changed(request: ModelRequest) -> ModelRequest:
        messages = [thaw(m) for m in request.messages]
        if len(messages) > 2:
            messages[1] = {**messages[1], "content": "edited"}
        return ModelRequest.of_frozen(
            request.header, Conversation([deep_freeze(m) for m in messages])
        )

    call = {"tool_calls": [{"name": "read"}]}
    _, adapter, result = _turn([call, call, "done"], lambda ctx: ctx.on("request/build", changed))
    assert result.reason.kind == "error"
    assert "messages differ from the log at index 1" in (result.reason.message or "")
    assert len(adapter.requests) == 1
