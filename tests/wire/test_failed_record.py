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


POLITE = """
import os

import openai
import pytest


def polite():
    client = openai.OpenAI(
        base_url=os.environ["AGENT_BASE_URL"], api_key="{key}", max_retries=0
    )
    try:
        reply = client.chat.completions.create(
            model="m", messages=[{{"role": "user", "content": "hi"}}]
        )
    except openai.APIError:
        return "Sorry, try again later."
    return reply.choices[0].message.content


@pytest.mark.headerlock_pin
@pytest.mark.headerlock_wire({marker})
def test_polite(headerlock_wire):
    assert polite()
"""


def test_a_pytest_record_of_a_401_keeps_the_recording_unless_the_marker_records_errors(
    pytester: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A live loopback endpoint answers 200, then 401: the failure names the recording
    and keeps its bytes; ``@pytest.mark.headerlock_wire(record_errors=True)`` records
    the 401 on purpose."""
    pytester.makeini(
        "[pytest]\ntestpaths = tests\naddopts = -p no:randomly\n"
        "asyncio_default_fixture_loop_scope = function\n"
    )
    source = pytester.path / "tests" / "test_agent.py"
    source.parent.mkdir()
    source.write_text(POLITE.format(key=KEY, marker=""))
    monkeypatch.setenv("AGENT_BASE_URL", model_server.base_url)
    model_server.script([{"text": "hello"}])
    pytester.runpytest_inprocess("--snapshot-update").assert_outcomes(passed=1)
    recording = pytester.path / "recordings" / "tests" / "test_agent" / "test_polite.yaml"
    good = recording.read_bytes()
    model_server.route("*/chat/completions", _unauthorized)
    result = pytester.runpytest_inprocess("--snapshot-update")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "recordings/tests/test_agent/test_polite.yaml: a model request failed" in out, out
    assert "(the old recording is kept)" in out and "wire lock:" not in out
    assert KEY not in out
    assert recording.read_bytes() == good
    source.write_text(POLITE.format(key=KEY, marker="record_errors=True"))
    pytester.runpytest_inprocess("--snapshot-update").assert_outcomes(passed=1)
    text = recording.read_text()
    assert "status: 401" in text and "invalid key" in text and KEY not in text
    pytester.runpytest_inprocess().assert_outcomes(passed=1)  # and it replays
    source.write_text(POLITE.format(key=KEY, marker="record_errors='yes'"))
    result = pytester.runpytest_inprocess("--snapshot-update")
    assert "record_errors must be True or False, got 'yes'" in result.stdout.str()
