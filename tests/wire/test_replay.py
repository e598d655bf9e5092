"""Wire replay: pins, mismatches (answered 400, raised at exit) and secrets, through
the real SDK clients."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from headerlock.errors import WireMismatch
from headerlock.testing.wire.lock import lock
from headerlock.testing.wire.run import WireRun
from tests.model_server import ModelServer, serve
from tests.wire.agents import (
    CLOSED,
    CLOSED_ORIGIN,
    KEY,
    REPLIES,
    chat_agent,
    chat_client,
    fn_tool,
    recording,
    replay,
    swallowing,
)

# -- pins -------------------------------------------------------------------------------


def _record_tools(path: Path, tools: list[dict[str, Any]], *, pin: bool) -> None:
    with serve() as server, lock(path, mode="record", pin=pin):
        server.script(REPLIES)
        chat_agent(chat_client(server.base_url), tools)


def test_unpinned_replay_accepts_a_tool_reorder(tmp_path: Path) -> None:
    path = tmp_path / "unpinned.yaml"
    tools = [fn_tool("alpha"), fn_tool("beta")]
    _record_tools(path, tools, pin=False)
    assert 'tools: "<<tools>>"' in path.read_text()
    with lock(path):
        chat_agent(chat_client(CLOSED), tools[::-1])


def test_pinned_replay_rejects_a_tool_reorder(tmp_path: Path) -> None:
    path = tmp_path / "pinned.yaml"
    tools = [fn_tool("alpha"), fn_tool("beta")]
    _record_tools(path, tools, pin=True)
    runs: list[WireRun] = []
    with pytest.raises(WireMismatch) as info:
        replay(path, lambda: chat_agent(chat_client(CLOSED), tools[::-1]), runs)
    [run] = runs
    message = str(info.value)
    assert "request 1 (openai.chat) tools: order alpha, beta -> beta, alpha" in message
    assert "request 1 (openai.chat) prefix: prefix_sha256" in message
    assert run.pinned and run.differences[0].tool == "alpha"
    assert isinstance(info.value.__context__, openai.BadRequestError)
    with lock(path):  # the recorded order still replays
        chat_agent(chat_client(CLOSED), tools)


def test_a_swallowed_tool_reorder_points_to_the_flake_hunt(tmp_path: Path) -> None:
    """Only the order moved (and the recorded request it left unsent, since the agent
    carried on after the 400): hunt the flake; re-recording would not help."""
    path = tmp_path / "pinned.yaml"
    tools = [fn_tool("alpha"), fn_tool("beta")]
    _record_tools(path, tools, pin=True)
    caught: list[Exception] = []
    with pytest.raises(WireMismatch) as info:
        replay(path, swallowing(lambda: chat_agent(chat_client(CLOSED), tools[::-1]), caught), [])
    message = str(info.value)
    assert caught and "recorded but never sent" in message
    assert message.splitlines()[-1].startswith(
        "The same tools in another order, not sorted by name"
    )
    assert "headerlock flakes" in message and "re-record:" not in message


def test_pinned_schema_key_order_is_a_prefix_byte_mismatch(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "keys.yaml"
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    swapped = {"properties": {"q": {"type": "string"}}, "type": "object"}

    def agent(base: str, input_schema: dict[str, Any]) -> None:
        client = anthropic.Anthropic(base_url=base, api_key=KEY, max_retries=0)
        client.messages.create(
            model="claude-test",
            max_tokens=64,
            system="sys",
            tools=[
                {"name": "fetch", "input_schema": {"type": "object"}},
                {"name": "search", "input_schema": input_schema},
            ],
            messages=[{"role": "user", "content": "hi"}],
        )

    model_server.script([{"text": "ok"}])
    with lock(path, mode="record", pin=True) as run:
        agent(model_server.origin, schema)
    with lock(path):  # unchanged bytes replay
        agent(CLOSED_ORIGIN, schema)
    runs: list[WireRun] = []
    with pytest.raises(WireMismatch) as info:
        replay(path, lambda: agent(CLOSED_ORIGIN, swapped), runs)
    [replayed] = runs
    [difference] = replayed.differences
    assert (difference.segment, difference.tool) == ("prefix", "search")
    assert difference.cache_reason == "tools_changed"
    old = json.loads(run.requests[0].body)
    raw_old, raw_new = run.requests[0].body, replayed.requests[0].body
    tools_at = raw_old.index(b'"tools":') + len(b'"tools":')
    first = next(n for n, (a, b) in enumerate(zip(raw_old, raw_new, strict=False)) if a != b)
    assert difference.offset == first - tools_at
    assert "the same data in other bytes (JSON key order or spacing)" in str(info.value)
    assert "anthropic cache: tools_changed" in str(info.value)
    assert old["tools"][1]["input_schema"] == swapped  # equal as data, different as bytes


def test_replay_reads_pin_from_the_recording(tmp_path: Path) -> None:
    path = tmp_path / "pin.yaml"
    _record_tools(path, [fn_tool("alpha")], pin=True)
    with lock(path, pin=False) as run:
        chat_agent(chat_client(CLOSED), [fn_tool("alpha")])
    assert run.pinned


# -- mismatches ------------------------------------------------------------------------


def test_a_swallowed_mismatch_still_raises(tmp_path: Path, model_server: ModelServer) -> None:
    path = tmp_path / "chat.yaml"
    model_server.script(REPLIES)
    with lock(path, mode="record"):
        chat_agent(chat_client(model_server.base_url))
    client = openai.OpenAI(base_url=CLOSED, api_key=KEY)  # default retries
    caught: list[Exception] = []
    runs: list[WireRun] = []

    def call() -> object:
        messages: Any = [{"role": "user", "content": "hi"}]
        return client.chat.completions.create(model="gpt-other", messages=messages)

    with pytest.raises(WireMismatch) as info:
        replay(path, swallowing(call, caught), runs)
    [error] = caught
    [run] = runs
    assert isinstance(error, openai.BadRequestError)
    # named by the recorded request it is closest to (the recording's numbering)
    assert error.status_code == 400 and "headerlock: request 2 (openai.chat) config" in str(error)
    assert error.response.headers.get("x-should-retry") is None
    assert len(run.requests) == 1  # a 400 is not retried
    message = str(info.value)
    assert "config.model: 'gpt-test' -> 'gpt-other'" in message
    assert "recorded but never sent (2 recorded requests were not sent: 1, 2)" in message
    assert info.value.__context__ is None


def test_extra_and_unsent_requests_are_mismatches(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "one.yaml"
    model_server.script([{"text": "a"}])
    with lock(path, mode="record"):
        chat_client(model_server.base_url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )
    with pytest.raises(WireMismatch, match="recorded but never sent"):
        replay(path, lambda: None, [])
    client = chat_client(CLOSED)
    messages: Any = [{"role": "user", "content": "x"}]
    call = swallowing(lambda: client.chat.completions.create(model="m", messages=messages), [])
    with pytest.raises(WireMismatch, match=r"request 2 \(openai.chat\) request: sent"):
        replay(path, lambda: [call(), call()], [])


def test_an_agent_error_without_mismatch_propagates(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "chat.yaml"
    model_server.script(REPLIES)
    with lock(path, mode="record"):
        chat_agent(chat_client(model_server.base_url))
    with pytest.raises(KeyError):
        replay(path, lambda: {"a": 1}["agent bug"], [])


# -- secrets --------------------------------------------------------------------------


def test_secrets_from_headers_env_and_redact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model_server: ModelServer
) -> None:
    path = tmp_path / "secret.yaml"
    monkeypatch.setenv("MY_TOKEN", "tok-9876543210")

    def agent(client: openai.OpenAI) -> str:
        first = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "token tok-9876543210 in /home/alice"}]
        )
        said = first.choices[0].message.content or ""
        messages: Any = [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": said},
            {"role": "tool", "tool_call_id": "c1", "content": f"env key {KEY}"},
        ]
        return client.chat.completions.create(model="m", messages=messages).id

    replies = [{"text": "you are"}, {"text": "ok"}]
    options: Any = {"redact_env": ["MY_TOKEN"], "redact": _home}
    with recording(model_server, path, replies, echo_header="authorization", **options) as run:
        agent(chat_client(model_server.base_url))
    text = path.read_text()
    assert KEY not in text and "tok-9876543210" not in text and "alice" not in text
    assert "you are <<secret>>" in text  # the echoed "Bearer <key>" header, in the response
    assert "env key <<secret>>" in text  # in a tool output
    assert "token <<secret>> in <<home>>" in text
    assert model_server.hits[0].headers["authorization"] == f"Bearer {KEY}"
    assert run.requests[0].body.count(b"tok-9876543210") == 1  # live data is not scrubbed

    other = "sk-another-key-for-ci-0002"  # replay in CI with another key
    with lock(path, redact_env=["MY_TOKEN"], redact=_home):
        client = openai.OpenAI(base_url=CLOSED, api_key=other, max_retries=0)
        first = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "token tok-9876543210 in /home/alice"}]
        )
        assert first.choices[0].message.content == "you are <<secret>>"
        client.chat.completions.create(
            model="m",
            messages=[
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "you are <<secret>>"},
                {"role": "tool", "tool_call_id": "c9", "content": f"env key {other}"},
            ],
        )


def _home(text: str) -> str:
    return text.replace("/home/alice", "<<home>>")


@pytest.mark.parametrize("header", ["authorization", "x-api-key"])
def test_anthropic_key_never_recorded(
    tmp_path: Path, header: str, model_server: ModelServer
) -> None:
    path = tmp_path / "anthropic.yaml"
    headers = {"x-api-key": KEY} if header == "x-api-key" else {}
    model_server.script([{"text": "hello"}], echo_header=header)
    with lock(path, mode="record"):
        client = anthropic.Anthropic(
            base_url=model_server.origin, api_key=KEY, default_headers=headers
        )
        client.messages.create(
            model="c", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
        )
    text = path.read_text()
    assert KEY not in text and "hello <<secret>>" in text


def test_an_unreadable_model_body_never_leaves_a_replay(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "chat.yaml"
    with recording(model_server, path, REPLIES):
        chat_agent(chat_client(model_server.base_url))
    statuses: list[int] = []

    def post() -> None:
        response = httpx2.post(f"{CLOSED}/chat/completions", content=b"not json")
        statuses.append(response.status_code)

    with pytest.raises(WireMismatch, match=r"POST /v1/chat/completions is not in the recording"):
        replay(path, post, [])
    assert statuses == [400]  # refused: headerlock's 400 (no SDK retries it), nothing sent
