"""A failing endpoint never overwrites a good wire recording (issue 19): a record whose
model request got an HTTP error or no answer keeps the old bytes and fails, even when
the agent swallowed the error; ``record_errors=True`` records the error on purpose."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from headerlock.errors import RecordingRunError
from headerlock.testing.wire.lock import lock
from tests.model_server import Answer, Hit, ModelServer, json_answer
from tests.wire.agents import KEY


def _polite_agent(base: str) -> str:
    """An agent that turns an API error into a polite answer."""
    client = openai.OpenAI(base_url=base, api_key=KEY, max_retries=0)
    try:
        reply = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
    except openai.APIError:
        return "Sorry, try again later."
    return reply.choices[0].message.content or ""


def _unauthorized(hit: Hit) -> Answer:
    key = hit.headers.get("authorization", "")
    return json_answer({"error": {"message": f"invalid key {key}"}}, 401)


def test_a_401_after_a_200_keeps_the_200_recording_and_fails(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "chat.yaml"
    model_server.script([{"text": "hello"}])
    with lock(path, mode="record"):
        assert _polite_agent(model_server.base_url) == "hello"
    good = path.read_bytes()
    model_server.route("*/chat/completions", _unauthorized)
    with pytest.raises(RecordingRunError) as caught, lock(path, mode="record"):
        assert _polite_agent(model_server.base_url) == "Sorry, try again later."
    message = str(caught.value)
    assert "POST /v1/chat/completions: HTTP 401" in message
    assert "the old recording is kept" in message and "record_errors=True" in message
    assert KEY not in message
    assert path.read_bytes() == good


def test_no_answer_at_all_keeps_the_recording_too(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "chat.yaml"
    model_server.script([{"text": "hello"}])
    with lock(path, mode="record"):
        _polite_agent(model_server.base_url)
    good = path.read_bytes()
    closed = "http://127.0.0.1:9/v1"  # nothing listens: a transport error
    with pytest.raises(RecordingRunError, match="no answer"), lock(path, mode="record"):
        assert _polite_agent(closed) == "Sorry, try again later."
    assert path.read_bytes() == good


def test_record_errors_records_the_error_exchange_scrubbed(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "error.yaml"
    model_server.route("*/chat/completions", _unauthorized)
    with lock(path, mode="record", record_errors=True):
        _polite_agent(model_server.base_url)
    text = path.read_text()
    assert "status: 401" in text and "invalid key" in text
    assert KEY not in text
    hits = len(model_server.hits)
    with lock(path):  # and it replays, with no network
        assert _polite_agent(model_server.base_url) == "Sorry, try again later."
    assert len(model_server.hits) == hits
