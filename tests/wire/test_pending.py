"""Pending files, ignore rules and non-churning live re-records, through ``lock()`` with the
real OpenAI SDK against the loopback model server."""

from __future__ import annotations

import json
import random
import time
import uuid
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import openai
import pytest

from headerlock.errors import ConfigError, IgnoreRuleError, WireMismatch
from headerlock.formats.pending import pending_path, read_pending
from headerlock.formats.wire_recording import load_wire_recording, parse_wire_recording
from headerlock.testing.wire.lock import lock
from tests.model_server import Answer, Hit, ModelServer, Script, json_answer, sse_answer
from tests.wire.agents import CLOSED, KEY

TOOLS: Any = [
    {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}
]


def live_answer(hit: Hit) -> Answer:
    """What a live endpoint does: a new id, time and fingerprint in every answer; a tool
    call first, then a text answer once the tool result is in."""
    request = hit.json()
    head = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "created": int(time.time()) + random.randint(0, 10**6),
        "model": request["model"],
        "system_fingerprint": f"fp_{uuid.uuid4().hex[:10]}",
    }
    done = request.get("stream") or any(m.get("role") == "tool" for m in request["messages"])
    if done:
        message: dict[str, Any] = {"role": "assistant", "content": "found it"}
    else:
        call = {
            "id": f"call_{uuid.uuid4().hex}",
            "type": "function",
            "function": {"name": "search", "arguments": '{"q": "x"}'},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    if request.get("stream"):
        chunk = {**head, "object": "chat.completion.chunk"}
        delta = {"role": "assistant", "content": message["content"] or ""}
        return sse_answer(
            [
                {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": "stop"}]},
                "[DONE]",
            ]
        )
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls" if not done else "stop"}
    return json_answer({**head, "object": "chat.completion", "choices": [choice]})


def agent(base: str, system: str = "Be brief.", seed: int | None = None) -> str:
    """A tool loop, then one streamed follow-up."""
    client = openai.OpenAI(base_url=base, api_key=KEY, max_retries=0)
    extra: dict[str, Any] = {} if seed is None else {"seed": seed}
    messages: list[Any] = [
        {"role": "system", "content": system},
        {"role": "user", "content": "find x"},
    ]
    while True:
        reply = client.chat.completions.create(
            model="gpt-test",
            messages=messages,
            tools=TOOLS,
            **extra,
        )
        message = reply.choices[0].message
        if not message.tool_calls:
            break
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "x is 1"})
    stream = client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "again"}], stream=True
    )
    return (message.content or "") + "|" + "".join(c.choices[0].delta.content or "" for c in stream)


def test_two_live_re_records_of_an_unchanged_conversation_give_identical_files(
    tmp_path: Path, model_server: ModelServer
) -> None:
    route = model_server.route("*/chat/completions", live_answer)
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    for path in (first, second):
        with lock(path, mode="record"):
            assert agent(model_server.base_url) == "found it|found it"
    assert len(route.hits) == 6
    sent_ids = {h.json()["messages"][2]["tool_calls"][0]["id"] for h in route.hits[1::3]}
    assert len(sent_ids) == 2  # the endpoint gave each run its own ids
    assert first.read_bytes() == second.read_bytes()
    bodies = [e.response.body for e in load_wire_recording(first).requests[:2]]  # type: ignore[union-attr]
    assert [b["id"] for b in bodies] == ["chatcmpl-<<id:1>>", "chatcmpl-<<id:3>>"]
    assert bodies[0]["choices"][0]["message"]["tool_calls"][0]["id"] == "call_<<id:2>>"
    assert {(b["created"], b["system_fingerprint"]) for b in bodies} == {
        (1767225600, "<<fingerprint>>")
    }
    with lock(first):  # the normalized ids replay: the agent sends them back, tokenized
        assert agent(CLOSED) == "found it|found it"


def test_a_mismatching_replay_writes_the_whole_session_as_a_pending_file(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "agent.yaml"
    model_server.route("*/chat/completions", live_answer)
    with lock(path, mode="record", pin=True):
        agent(model_server.base_url)
    before = path.read_bytes()
    with pytest.raises(WireMismatch) as info, lock(path, pending=True):
        # the recorded answers keep coming: the agent runs to its end
        assert agent(CLOSED, system="Be very brief.") == "found it|found it"
    assert "request 1 (openai.chat) system" in str(info.value)
    assert f"pending: {pending_path(path).as_posix()}" in str(info.value)
    assert path.read_bytes() == before  # never touched
    pending = read_pending(pending_path(path))
    assert pending.partial is None and not pending.stale
    new = parse_wire_recording(pending.text, path="pending")
    old = load_wire_recording(path)
    assert [e.system for e in new.requests[:2]] == [
        [{"role": "system", "content": "Be very brief."}]
    ] * 2
    assert [e.response for e in new.requests] == [e.response for e in old.requests]
    path.write_text(pending.text)  # what accepting does (tests/plugin/test_review.py)
    with lock(path, pending=True):
        agent(CLOSED, system="Be very brief.")
    assert not pending_path(path).exists()  # a green replay removed the stale pending file


def test_a_session_that_cannot_line_up_keeps_the_requests_before_and_says_so(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "one.yaml"
    model_server.route("*/chat/completions", live_answer)
    client = openai.OpenAI(base_url=model_server.base_url, api_key=KEY, max_retries=0)
    ask = [{"role": "user", "content": "find x"}]
    with lock(path, mode="record"):
        client.chat.completions.create(model="gpt-test", messages=ask)  # type: ignore[arg-type]
    client = openai.OpenAI(base_url=CLOSED, api_key=KEY, max_retries=0)
    with pytest.raises(WireMismatch), lock(path, pending=True):  # noqa: PT012
        client.chat.completions.create(model="gpt-test", messages=ask)  # type: ignore[arg-type]
        with pytest.raises(openai.BadRequestError):  # nothing recorded is left to answer it
            client.chat.completions.create(model="gpt-test", messages=ask * 2)  # type: ignore[arg-type]
    pending = read_pending(pending_path(path))
    assert pending.partial is not None and "request 2 (openai.chat)" in pending.partial
    assert len(parse_wire_recording(pending.text, path="p").requests) == 1


def test_without_pending_a_mismatch_writes_nothing_and_answers_400(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "agent.yaml"
    model_server.route("*/chat/completions", live_answer)
    with lock(path, mode="record", pin=True):
        agent(model_server.base_url)
    with pytest.raises(WireMismatch), lock(path), pytest.raises(openai.BadRequestError):
        agent(CLOSED, system="changed")
    assert not pending_path(path).exists()


def test_a_seed_that_changes_every_run_passes_with_an_ignore_rule(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "seeded.yaml"
    model_server.route("*/chat/completions", live_answer)
    rules = ["config.seed"]
    with lock(path, mode="record", ignore=rules):
        agent(model_server.base_url, seed=random.randint(0, 10**9))
    recorded = load_wire_recording(path)
    assert [e.config.get("seed") for e in recorded.requests] == ["<<ignored>>"] * 2 + [None]
    with lock(path, ignore=rules):
        agent(CLOSED, seed=random.randint(0, 10**9) + 1)
    with pytest.raises(WireMismatch, match=r"config\.seed: '<<ignored>>' -> 7"), lock(path):
        agent(CLOSED, seed=7)


def test_a_misspelled_ignore_rule_is_an_error_naming_it(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "typo.yaml"
    model_server.route("*/chat/completions", live_answer)
    rules = ["config.seed", "config.sede"]
    with (
        pytest.raises(IgnoreRuleError, match=r"'config\.sede'") as info,
        lock(path, mode="record", ignore=rules),
    ):
        agent(model_server.base_url, seed=1)
    assert info.value.paths == ("config.sede",)
    assert not path.exists()  # nothing written


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("seed", "must start with one of config, system, tools, messages"),
        ("config..seed", "bad step at '..seed'"),
        ("messages[x]", r"bad step at '\[x\]'"),
        ("config", "would ignore the whole config segment"),
        ("tools", "would ignore the whole tools segment"),
        ("messages.content", r"messages is a list: \[N\] or \[\*\]"),
        ("config[0]", r"config is a mapping: \.NAME or \.\*"),
    ],
)
def test_a_malformed_ignore_rule_is_refused_when_the_lock_is_made(rule: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        lock(None, mode="record", ignore=[rule])


def test_a_rule_over_the_header_warns_once_what_it_turns_off() -> None:
    rule = "config.response_format"  # no other test uses it: its warning is this test's
    with pytest.warns(UserWarning, match=r"ignore rule 'config\.response_format' turns off"):
        lock(None, mode="record", ignore=[rule, "config.seed"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lock(None, mode="record", ignore=[rule, "config.seed"])  # once per process


def test_a_pinned_lock_refuses_ignore_rules_inside_the_prefix() -> None:
    with pytest.raises(ConfigError, match="reaches into the tools of a pinned recording"):
        lock(None, mode="record", pin=True, ignore=["tools[*].function.description"])


def test_ignored_message_contents_are_written_as_ignored(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "contents.yaml"
    model_server.route("*/chat/completions", live_answer)
    with lock(path, mode="record", ignore=["messages[*].content"]):
        agent(model_server.base_url)
    first = load_wire_recording(path).requests[0]
    assert json.dumps(first.messages).count("<<ignored>>") == 1  # the user message
    with lock(path, ignore=["messages[*].content"]):
        client = openai.OpenAI(base_url=CLOSED, api_key=KEY, max_retries=0)
        messages: list[Any] = [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "something else entirely"},
        ]
        reply = client.chat.completions.create(model="gpt-test", messages=messages, tools=TOOLS)
        messages.append(reply.choices[0].message.model_dump(exclude_none=True))
        call = reply.choices[0].message.tool_calls[0]  # type: ignore[index]
        messages.append({"role": "tool", "tool_call_id": call.id, "content": "different"})
        client.chat.completions.create(model="gpt-test", messages=messages, tools=TOOLS)
        stream = client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "?"}], stream=True
        )
        list(stream)


def _obfuscating(script: Script, sent: list[str]) -> Callable[[Hit], Answer]:
    """``script``'s answers with OpenAI's random ``obfuscation`` padding in every stream
    event, as the live Chat Completions and Responses streams send it (kept in ``sent``)."""

    def answer(hit: Hit) -> Answer:
        found = script(hit)
        chunks = []
        for chunk in found.chunks or ():
            lines = chunk.decode().split("\n")
            for index, line in enumerate(lines):
                if line.startswith("data: {"):
                    padding = uuid.uuid4().hex[: random.randint(2, 16)]
                    sent.append(padding)
                    event = {**json.loads(line[len("data: ") :]), "obfuscation": padding}
                    lines[index] = "data: " + json.dumps(event)
            chunks.append("\n".join(lines).encode())
        return replace(found, chunks=chunks)

    return answer


def _stream(base: str, api: str) -> str:
    client = openai.OpenAI(base_url=base, api_key=KEY, max_retries=0)
    if api == "chat":
        chunks = client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        return "".join(c.choices[0].delta.content or "" for c in chunks)
    events = client.responses.create(model="gpt-test", input="hi", stream=True)
    return "".join(
        getattr(e, "delta", "") for e in events if e.type == "response.output_text.delta"
    )


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_stream_obfuscation_padding_does_not_churn_a_live_re_record(
    tmp_path: Path, model_server: ModelServer, api: str
) -> None:
    sent: list[str] = []
    model_server.route("*", _obfuscating(Script([{"text": "hello there"}] * 2), sent))
    paths = [tmp_path / "first.yaml", tmp_path / "second.yaml"]
    for path in paths:
        with lock(path, mode="record"):
            assert _stream(model_server.base_url, api) == "hello there"
    assert len(set(sent)) > 2  # the endpoint padded every event differently
    assert paths[0].read_bytes() == paths[1].read_bytes()
    events = load_wire_recording(paths[0]).requests[0].response.body  # type: ignore[union-attr]
    padded = {e.data["obfuscation"] for e in events if e.is_json and "obfuscation" in e.data}
    assert padded == {"<<obfuscation>>"}
    with lock(paths[0]):  # the normalized stream replays
        assert _stream(CLOSED, api) == "hello there"
