"""Gemini (``gemini.generate``) through the real ``google-genai`` client over real HTTP:
recorded, replayed, scripted (text, function calls, streams), pinned, order-checked."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import errors, types
from hypothesis import given, settings, strategies as st

from headerlock import wire
from headerlock.errors import WireMismatch, WireOrderError, WireToolError
from headerlock.formats.wire_recording import load_wire_recording
from headerlock.testing.wire.driver import request_header
from headerlock.testing.wire.explain import prefix_break
from headerlock.testing.wire.script import render_reply
from tests import docs
from tests.model_server import ModelServer

KEY = "AIzaSy-test-not-a-real-key-0003"
MODEL = "gemini-2.5-flash"
PATH = f"/v1/models/{MODEL}:generateContent"
STREAM_PATH = f"/v1/models/{MODEL}:streamGenerateContent"
NAMES_OF_TOOLS = ["read_file", "grep", "bash"]
TEXT: dict[str, Any] = {"text": "Hello there, world"}
CALLS: dict[str, Any] = {
    "text": "Let me look.",
    "tool_calls": [
        {"name": "read_file", "arguments": {"path": "a.txt", "lines": [1, 2]}},
        {"name": "grep", "arguments": {"pattern": "é"}},
    ],
}


def _closed_origin() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


CLOSED = _closed_origin()
"""Nothing listens here: a replay or a script answers, a leak fails."""


def client(origin: str = CLOSED, **options: Any) -> genai.Client:
    return genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=origin, **options))


def declaration(name: str, properties: tuple[str, ...] = ("path", "pattern")) -> dict[str, Any]:
    schema = {"type": "object", "properties": {p: {"type": "string"} for p in properties}}
    return {"name": name, "description": f"The {name} tool.", "parameters": schema}


def config(tools: list[Any] | None = None, **fields: Any) -> types.GenerateContentConfig:
    """The agent's config; ``tools`` are plain dicts (either key spelling), as sent."""
    if tools is None:
        tools = [{"function_declarations": [declaration(n) for n in NAMES_OF_TOOLS]}]
    return types.GenerateContentConfig(
        system_instruction="You are terse.",
        tools=[types.Tool.model_validate(tool) for tool in tools],
        temperature=fields.pop("temperature", 0.2),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        **fields,
    )


def ask(gemini: genai.Client, prompt: str = "hi", **fields: Any) -> types.GenerateContentResponse:
    return gemini.models.generate_content(model=MODEL, contents=prompt, config=config(**fields))


def streamed(gemini: genai.Client, prompt: str = "hi") -> list[types.GenerateContentResponse]:
    return list(
        gemini.models.generate_content_stream(model=MODEL, contents=prompt, config=config())
    )


def conversation(gemini: genai.Client) -> list[str]:
    """One plain request, one with a function call answered, one streamed."""
    first = ask(gemini)
    call = ask(gemini, "read a.txt")
    assert call.function_calls and call.candidates and call.candidates[0].content
    answer = types.Part.from_function_response(name="read_file", response={"text": "A"})
    history: list[Any] = [
        types.Content(role="user", parts=[types.Part(text="read a.txt")]),
        call.candidates[0].content,
        types.Content(role="user", parts=[answer]),
    ]
    last = gemini.models.generate_content(model=MODEL, contents=history, config=config())
    chunks = streamed(gemini, "and now?")
    joined = "".join(c.text or "" for c in chunks)
    return [first.text or "", call.function_calls[0].name or "", last.text or "", joined]


# -- record and replay -----------------------------------------------------------------


def test_a_recording_holds_each_request_split_and_no_key(
    model_server: ModelServer, tmp_path: Path
) -> None:
    model_server.script([TEXT, CALLS, {"text": "It says A."}, {"text": "streamed words"}])
    path = tmp_path / "gemini.yaml"
    with wire.lock(path, mode="record") as run:
        seen = conversation(client(model_server.origin))
    assert seen == ["Hello there, world", "read_file", "It says A.", "streamed words"]
    assert [h.path for h in model_server.hits] == [PATH] * 3 + [STREAM_PATH]
    assert model_server.hits[-1].query == {"alt": "sse"}
    assert [r.api for r in run.requests] == ["gemini.generate"] * 4
    text = path.read_text()
    assert KEY not in text
    first, _, third, fourth = load_wire_recording(path).requests
    assert (first.path, first.system, first.tools) == (PATH, "<<system>>", "<<tools>>")
    assert first.tool_names == ("bash", "grep", "read_file")
    assert first.config == {"generationConfig": {"temperature": 0.2}}
    assert first.messages == [{"parts": [{"text": "hi"}], "role": "user"}]
    text, call, _ = (part.get("functionCall", part) for part in third.messages[1]["parts"])
    assert text == {"text": "Let me look."}
    assert call == {
        "args": {"lines": [1, 2], "path": "a.txt"},
        "id": "<<id:1>>",
        "name": "read_file",
    }
    assert fourth.path == STREAM_PATH and fourth.response is not None
    assert fourth.response.kind == "events"
    assert [e.data["candidates"][0].get("finishReason") for e in fourth.response.body] == [
        None,
        "STOP",
    ]


def test_a_recording_replays_with_no_server(model_server: ModelServer, tmp_path: Path) -> None:
    model_server.script([TEXT, CALLS, {"text": "It says A."}, {"text": "streamed words"}])
    path = tmp_path / "gemini.yaml"
    with wire.lock(path, mode="record"):
        recorded = conversation(client(model_server.origin))
    before = path.read_bytes()
    with wire.lock(path) as run:
        replayed = conversation(client())  # nothing listens there
    assert replayed == recorded
    assert run.differences == [] and path.read_bytes() == before


def test_a_changed_request_fails_the_replay_naming_request_and_segment(
    model_server: ModelServer, tmp_path: Path
) -> None:
    model_server.script([TEXT])
    path = tmp_path / "gemini.yaml"
    with wire.lock(path, mode="record"):
        ask(client(model_server.origin))
    with (
        pytest.raises(WireMismatch) as caught,
        wire.lock(path),
        pytest.raises(errors.ClientError) as answer,
    ):
        ask(client(), temperature=0.7)
    assert answer.value.code == 400
    assert "headerlock: request 1 (gemini.generate) config:" in str(answer.value)
    assert caught.value.differences[0] == (
        "request 1 (gemini.generate) config: config.generationConfig.temperature: 0.2 -> 0.7"
    )


def test_the_key_is_a_secret_wherever_it_appears(model_server: ModelServer, tmp_path: Path) -> None:
    model_server.script([TEXT], echo_header="x-goog-api-key")
    path = tmp_path / "gemini.yaml"
    with wire.lock(path, mode="record"):
        assert KEY in (ask(client(model_server.origin)).text or "")
    text = path.read_text()
    assert KEY not in text and "Hello there, world <<secret>>" in text


# -- pinned ----------------------------------------------------------------------------


def test_a_pinned_recording_names_the_tool_whose_bytes_moved(
    model_server: ModelServer, tmp_path: Path
) -> None:
    model_server.script([TEXT])
    path = tmp_path / "gemini.yaml"
    with wire.lock(path, mode="record", pin=True):
        ask(client(model_server.origin))
    entry = load_wire_recording(path).requests[0]
    assert entry.prefix is not None and '"functionDeclarations"' in entry.prefix.tools
    assert entry.system == {"parts": [{"text": "You are terse."}], "role": "user"}
    moved = [declaration("read_file"), declaration("grep", ("pattern", "path"))]
    moved.append(declaration("bash"))
    with pytest.raises(WireMismatch) as caught, wire.lock(path), pytest.raises(errors.ClientError):
        ask(client(), tools=[{"function_declarations": moved}])
    [line] = [d for d in caught.value.differences if " prefix: " in d]
    assert line.startswith("request 1 (gemini.generate) prefix: prefix_sha256 ")
    assert "(in tool grep at byte " in line
    assert "the same data in other bytes (JSON key order or spacing)" in line
    assert "cache:" not in line  # Gemini's cache names no reason


def test_the_diff_of_two_pinned_recordings_names_the_declaration(
    model_server: ModelServer, tmp_path: Path
) -> None:
    model_server.script([TEXT, TEXT])
    before, after = tmp_path / "a.yaml", tmp_path / "b.yaml"
    with wire.lock(before, mode="record", pin=True):
        ask(client(model_server.origin))
    changed = [declaration(n) for n in NAMES_OF_TOOLS]
    changed[1]["description"] = "Search the files."
    with wire.lock(after, mode="record", pin=True):
        ask(client(model_server.origin), tools=[{"function_declarations": changed}])
    found = prefix_break(load_wire_recording(before), load_wire_recording(after))
    assert found is not None
    assert (found.number, found.segment, found.tool, found.cache_reason) == (
        1,
        "tools",
        "grep",
        None,
    )
    assert found.headline().startswith("request 1 (gemini.generate), segment tools, byte ")
    assert found.headline().endswith(", tool grep")


def test_an_app_wire_header_reads_the_system_and_each_declaration() -> None:
    with wire.lock(None, mode="record", script=[TEXT]) as run:
        ask(client())
    header = request_header(run.requests[0])
    assert header.system == "You are terse."
    assert [t.name for t in header.tools] == NAMES_OF_TOOLS
    assert header.tools[0].description == "The read_file tool."
    assert header.config == {"api": "gemini.generate", "generationConfig": {"temperature": 0.2}}


# -- scripted --------------------------------------------------------------------------


@pytest.mark.parametrize("reply", [TEXT, CALLS], ids=["text", "function_calls"])
def test_the_sdk_reads_a_scripted_reply(reply: dict[str, Any]) -> None:
    with wire.lock(None, mode="record", script=[reply]) as run:
        response = ask(client())
    assert response.text == reply["text"]
    calls = response.function_calls or []
    assert [(c.name, c.args) for c in calls] == [
        (c["name"], c["arguments"]) for c in reply.get("tool_calls", [])
    ]
    assert [c.id for c in calls] == [f"call_script0000t{k}" for k in range(len(calls))]
    assert response.model_version == MODEL and response.response_id == "script0000"
    assert response.usage_metadata is not None and response.usage_metadata.total_token_count
    assert response.candidates and response.candidates[0].finish_reason == types.FinishReason.STOP
    assert [r.path for r in run.requests] == [PATH]


def test_a_scripted_stream_is_one_response_per_event() -> None:
    with wire.lock(None, mode="record", script=[TEXT, CALLS]):
        text = streamed(client())
        calls = streamed(client())
    assert [c.text for c in text] == ["Hello ", "there, ", "world"]
    assert [c.candidates[0].finish_reason for c in text if c.candidates] == [
        None,
        None,
        types.FinishReason.STOP,
    ]
    assert text[-1].usage_metadata is not None and text[0].usage_metadata is None
    *words, last = calls
    assert "".join(c.text or "" for c in words) == "Let me look."
    assert [c.name for c in last.function_calls or []] == ["read_file", "grep"]


def test_a_scripted_error_is_a_400_or_fails_the_stream() -> None:
    failing = {"text": "partial", "error": "model overloaded"}
    with wire.lock(None, mode="record", script=[failing, failing]):
        with pytest.raises(errors.ClientError, match="model overloaded") as plain:
            ask(client())
        with pytest.raises(errors.ServerError, match="model overloaded"):
            streamed(client())
    assert plain.value.code == 400 and plain.value.status == "INVALID_ARGUMENT"


def test_the_async_client_is_seen_with_an_httpx2_client() -> None:
    async def talk() -> list[str]:
        gemini = client(httpx_async_client=httpx2.AsyncClient())
        first = await gemini.aio.models.generate_content(model=MODEL, contents="hi")
        stream = await gemini.aio.models.generate_content_stream(model=MODEL, contents="hi")
        return [first.text or "", "".join([c.text or "" async for c in stream])]

    with wire.lock(None, mode="record", script=[TEXT, {"text": "async words"}]) as run:
        assert asyncio.run(talk()) == ["Hello there, world", "async words"]
    assert [r.path for r in run.requests] == [PATH, STREAM_PATH]


def test_rendered_bodies_validate_as_the_sdks_types() -> None:
    request = {"contents": [{"parts": [{"text": "hi"}], "role": "user"}]}
    status, _, body = render_reply("gemini.generate", request, CALLS, index=7, path=PATH)
    parsed = types.GenerateContentResponse.model_validate(json.loads(body))
    assert status == 200 and parsed.response_id == "script0007"
    assert [c.args for c in parsed.function_calls or []] == [
        c["arguments"] for c in CALLS["tool_calls"]
    ]
    again = render_reply("gemini.generate", request, CALLS, index=7, path=STREAM_PATH)
    assert again == render_reply("gemini.generate", request, CALLS, index=7, path=STREAM_PATH)
    for block in again[2].decode().split("\n\n")[:-1]:
        assert block.startswith("data: ")
        types.GenerateContentResponse.model_validate(json.loads(block.removeprefix("data: ")))


# -- order -----------------------------------------------------------------------------


def agent(order_tools: Callable[[list[Any]], list[Any]]) -> Callable[[list[str]], None]:
    """A Gemini agent whose tools come from its plugins, in the order they loaded."""

    def run(names: list[str]) -> None:
        tools = order_tools([{"function_declarations": [declaration(n) for n in names]}])
        ask(client(), tools=tools)

    return run


def test_the_order_check_catches_declarations_in_load_order() -> None:
    with pytest.raises(WireOrderError) as caught:
        wire.assert_order_invariant(agent(lambda tools: tools), NAMES_OF_TOOLS, script=[TEXT])
    error = caught.value
    assert (error.request, error.api, error.segment) == (1, "gemini.generate", "tools")
    assert "the same 3 tools in another order" in str(error)
    assert "order_wire_tools" in str(error)


def test_the_order_check_passes_once_the_tools_are_ordered() -> None:
    wire.assert_order_invariant(agent(wire.order_wire_tools), NAMES_OF_TOOLS, script=[TEXT])


def test_order_wire_tools_orders_declarations_across_entries() -> None:
    tools: list[dict[str, Any]] = [
        {"functionDeclarations": [declaration("zeta"), declaration("alpha")]},
        {"googleSearch": {}},
        {"functionDeclarations": [declaration("mid")]},
    ]
    ordered = wire.order_wire_tools(tools)
    assert names_of(ordered) == [["alpha"], ["googleSearch"], ["mid", "zeta"]]
    assert wire.order_wire_tools(list(reversed(tools))) == ordered
    assert list(ordered[0]["functionDeclarations"][0]["parameters"]["properties"]) == [
        "path",
        "pattern",
    ]
    placed = wire.order_wire_tools(tools, ["zeta", "googleSearch", "<unlisted-tools>"])
    assert names_of(placed) == [["zeta"], ["googleSearch"], ["alpha", "mid"]]


@settings(max_examples=30, deadline=None)
@given(st.permutations(["zeta", "alpha", "mid", "googleSearch", "beta"]), st.integers(1, 3))
def test_order_wire_tools_gives_one_list_whatever_the_order(order: list[str], cut: int) -> None:
    """However a Gemini agent spreads its tools over ``tools[]`` entries, and in which
    order, the result is the same."""
    names = [n for n in order if n != "googleSearch"]
    tools: list[dict[str, Any]] = [
        {"functionDeclarations": [declaration(n) for n in names[start : start + cut]]}
        for start in range(0, len(names), cut)
    ]
    tools.insert(order.index("googleSearch") % (len(tools) + 1), {"googleSearch": {}})
    assert names_of(wire.order_wire_tools(tools)) == [
        ["alpha", "beta"],
        ["googleSearch"],
        ["mid", "zeta"],
    ]


def names_of(tools: list[dict[str, Any]]) -> list[list[str]]:
    """Each entry's declaration names, or its built-in tool's key."""
    return [
        [d["name"] for d in e["functionDeclarations"]] if "functionDeclarations" in e else list(e)
        for e in tools
    ]


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ([{"functionDeclarations": [declaration("a")]}, 3], r"^tools\[1\]: expected a tool dict"),
        (
            [{"functionDeclarations": {"name": "a"}}],
            r"^tools\[0\]\.functionDeclarations: expected a list of function declarations",
        ),
        (
            [{"function_declarations": [declaration("a"), {"description": "x"}]}],
            r"^tools\[0\]\.function_declarations\[1\]: not an OpenAI chat, .* Gemini tool",
        ),
    ],
)
def test_order_wire_tools_names_a_bad_gemini_tool(tools: Any, message: str) -> None:
    with pytest.raises(WireToolError, match=message) as caught:
        wire.order_wire_tools(tools)
    assert caught.value.index == len(tools) - 1


# -- the README ------------------------------------------------------------------------


def test_the_readme_example_records_replays_and_order_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = docs.examples("example").get("gemini")
    assert found is not None
    monkeypatch.chdir(tmp_path)
    exec(compile(found, "README.md:gemini", "exec"), {"__name__": "readme_gemini"})
    text = (tmp_path / "recordings" / "gemini.yaml").read_text()
    assert "api: gemini.generate" in text and "test-key-0123" not in text
