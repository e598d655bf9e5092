"""The cloud routes of the existing APIs, each through its real SDK client against the
loopback model server: ``AnthropicBedrock`` (``/model/{id}/invoke``, its stream in AWS
event-stream frames) and ``AnthropicVertex`` (``:rawPredict``) as ``anthropic.messages``,
``google-genai`` with ``vertexai=True`` as ``gemini.generate``, ``AzureOpenAI`` as
``openai.chat``. Each records a tool call with its API's header split and replays it
with nothing listening."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from headerlock import wire
from headerlock.formats.wire_recording import load_wire_recording
from headerlock.testing.wire.apis import detect_api, model_api
from tests.model_server import ModelServer

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
pytest.importorskip("boto3")

KEY_ID = "AKIAIOSFODNN7EXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
CLAUDE = "anthropic.claude-sonnet-4-5-20250929-v1:0"
CALL: dict[str, Any] = {
    "text": "Let me look.",
    "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}],
}
REPLIES: list[dict[str, Any]] = [CALL, {"text": "It says A."}, {"text": "streamed words"}]
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}


def _closed_origin() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


CLOSED = _closed_origin()


def record_and_replay(
    model_server: ModelServer, tmp_path: Path, talk: Any, make: Any
) -> tuple[list[Any], Any]:
    """Record ``talk(make(origin))`` against the server, replay it with nothing listening;
    the recording's entries and the answers."""
    model_server.script(REPLIES)
    path = tmp_path / "cloud.yaml"
    with wire.lock(path, mode="record"):
        recorded = talk(make(model_server.origin))
    hits = len(model_server.hits)
    with wire.lock(path) as run:
        assert talk(make(CLOSED)) == recorded
    assert run.differences == [] and len(model_server.hits) == hits
    return list(load_wire_recording(path).requests), recorded


# -- Anthropic on Bedrock and Vertex ---------------------------------------------------


def _claude(client: Any, model: str) -> list[str]:
    tools = [{"name": "read_file", "description": "Read a file.", "input_schema": SCHEMA}]
    asked = {"model": model, "max_tokens": 64, "system": "You are terse.", "tools": tools}
    first = client.messages.create(messages=[{"role": "user", "content": "hi"}], **asked)
    use = next(b for b in first.content if b.type == "tool_use")
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "A"}],
        },
    ]
    second = client.messages.create(messages=history, **asked)
    with client.messages.stream(messages=[{"role": "user", "content": "more"}], **asked) as s:
        streamed = s.get_final_text()
    return [use.name, second.content[0].text, streamed]


def _bedrock(origin: str) -> Any:
    return anthropic.AnthropicBedrock(
        aws_access_key=KEY_ID, aws_secret_key=SECRET, aws_region="us-east-1", base_url=origin
    )


def _vertex(origin: str) -> Any:
    return anthropic.AnthropicVertex(
        region="us-east5", project_id="my-project", access_token="ya29.fake-token-0123456789",
        base_url=f"{origin}/v1",
    )  # fmt: skip


def _check_anthropic_split(entries: list[Any]) -> None:
    assert [e.api for e in entries] == ["anthropic.messages"] * 3
    first, second, _ = entries
    assert (first.system, first.tools, first.tool_names) == (
        "<<system>>",
        "<<tools>>",
        ("read_file",),
    )
    assert first.config["max_tokens"] == 64 and "anthropic_version" in first.config
    assert second.messages[2]["content"][0]["tool_use_id"] == "<<id:1>>"


def test_anthropic_bedrock_records_and_replays_invoke_and_its_stream(
    model_server: ModelServer, tmp_path: Path
) -> None:
    entries, answers = record_and_replay(
        model_server, tmp_path, lambda c: _claude(c, CLAUDE), _bedrock
    )
    assert answers == ["read_file", "It says A.", "streamed words"]
    quoted = "/model/anthropic.claude-sonnet-4-5-20250929-v1:0"
    assert [e.path for e in entries] == [f"{quoted}/invoke"] * 2 + [
        f"{quoted}/invoke-with-response-stream"
    ]
    _check_anthropic_split(entries)
    stream = entries[2].response
    assert stream is not None and stream.content_type == "application/vnd.amazon.eventstream"
    assert {e.event for e in stream.body} == {"chunk"}
    assert next(iter(stream.body)).data["type"] == "message_start"  # the Anthropic event
    text = (tmp_path / "cloud.yaml").read_text()
    assert KEY_ID not in text and SECRET not in text


def test_anthropic_vertex_records_and_replays_raw_predict(
    model_server: ModelServer, tmp_path: Path
) -> None:
    entries, answers = record_and_replay(
        model_server, tmp_path, lambda c: _claude(c, "claude-sonnet-4-5@20250929"), _vertex
    )
    assert answers == ["read_file", "It says A.", "streamed words"]
    base = "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models"
    assert [e.path for e in entries] == [f"{base}/claude-sonnet-4-5@20250929:rawPredict"] * 2 + [
        f"{base}/claude-sonnet-4-5@20250929:streamRawPredict"
    ]
    _check_anthropic_split(entries)
    assert "ya29.fake-token-0123456789" not in (tmp_path / "cloud.yaml").read_text()


# -- Gemini on Vertex, OpenAI on Azure -------------------------------------------------


def test_google_genai_on_vertex_records_as_gemini(
    model_server: ModelServer, tmp_path: Path
) -> None:
    from google import genai
    from google.genai import types
    from google.oauth2.credentials import Credentials

    def make(origin: str) -> Any:
        return genai.Client(
            vertexai=True, project="my-project", location="us-central1",
            credentials=Credentials(token="ya29.fake-token-0123456789"),  # type: ignore[no-untyped-call]
            http_options=types.HttpOptions(base_url=origin),
        )  # fmt: skip

    declaration = {"name": "read_file", "description": "Read a file.", "parameters": SCHEMA}
    config = types.GenerateContentConfig(
        system_instruction="You are terse.",
        tools=[types.Tool.model_validate({"function_declarations": [declaration]})],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )

    def talk(client: Any) -> list[str]:
        model = "gemini-2.5-flash"
        first = client.models.generate_content(model=model, contents="hi", config=config)
        call = first.function_calls[0]
        answer = types.Part.from_function_response(name=call.name, response={"text": "A"})
        history = [
            types.Content(role="user", parts=[types.Part(text="hi")]),
            first.candidates[0].content,
            types.Content(role="user", parts=[answer]),
        ]
        second = client.models.generate_content(model=model, contents=history, config=config)
        chunks = client.models.generate_content_stream(model=model, contents="more", config=config)
        return [call.name, second.text, "".join(c.text or "" for c in chunks)]

    entries, answers = record_and_replay(model_server, tmp_path, talk, make)
    assert answers == ["read_file", "It says A.", "streamed words"]
    assert [e.api for e in entries] == ["gemini.generate"] * 3
    assert "/projects/my-project/locations/us-central1/publishers/google/models/" in entries[0].path
    assert entries[0].tool_names == ("read_file",) and entries[0].system == "<<system>>"
    assert entries[1].messages[1]["parts"][1]["functionCall"]["id"] == "<<id:1>>"


def test_azure_openai_records_as_openai_chat(model_server: ModelServer, tmp_path: Path) -> None:
    def make(origin: str) -> Any:
        return openai.AzureOpenAI(
            azure_endpoint=origin, api_key="azure-key-0123456789abcdef", api_version="2024-10-21",
            max_retries=0,
        )  # fmt: skip

    tools = [{"type": "function", "function": {"name": "read_file", "parameters": SCHEMA}}]

    def talk(client: Any) -> list[str]:
        messages: list[Any] = [{"role": "system", "content": "You are terse."}]
        messages.append({"role": "user", "content": "hi"})
        first = client.chat.completions.create(
            model="my-deployment", messages=messages, tools=tools
        )
        call = first.choices[0].message.tool_calls[0]
        messages += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "A"},
        ]
        second = client.chat.completions.create(
            model="my-deployment", messages=messages, tools=tools
        )
        chunks = client.chat.completions.create(
            model="my-deployment", messages=messages[:2], tools=tools, stream=True
        )
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        return [call.function.name, second.choices[0].message.content, text]

    entries, answers = record_and_replay(model_server, tmp_path, talk, make)
    assert answers == ["read_file", "It says A.", "streamed words"]
    assert [e.api for e in entries] == ["openai.chat"] * 3
    assert entries[0].path == "/openai/deployments/my-deployment/chat/completions"
    assert entries[0].tool_names == ("read_file",) and entries[0].system == "<<system>>"
    assert entries[1].messages[1]["tool_calls"][0]["id"] == "<<id:1>>"
    assert "azure-key-0123456789abcdef" not in (tmp_path / "cloud.yaml").read_text()


@pytest.mark.parametrize(
    ("path", "model"),
    [
        ("/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke", CLAUDE),
        (f"/model/{CLAUDE}/invoke-with-response-stream", CLAUDE),
        (
            "/v1/projects/p/locations/us-east5/publishers/anthropic/models/"
            "claude-sonnet-4-5@20250929:streamRawPredict",
            "claude-sonnet-4-5@20250929",
        ),
    ],
)
def test_a_cloud_route_is_anthropic_by_its_body_and_names_its_model_by_its_path(
    path: str, model: str
) -> None:
    body = b'{"anthropic_version": "bedrock-2023-05-31", "messages": []}'
    assert detect_api("POST", path, body) == "anthropic.messages"
    assert model_api("anthropic.messages").model_of(path, {}) == model
    assert model_api("anthropic.messages").streams(path, {}) == ("tream" in path)
    assert detect_api("POST", path, b'{"inputText": "hi"}') is None  # another Bedrock model
    assert detect_api("POST", path, b'["anthropic_version"]') is None


def test_vertex_count_tokens_is_no_message() -> None:
    path = "/v1/projects/p/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict"
    assert detect_api("POST", path, b'{"anthropic_version": "vertex-2023-10-16"}') is None
