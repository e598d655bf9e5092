"""What a user's pytest project relies on when its wire tests are recorded and replayed:
one record vocabulary, no silent pass (a missing recording under ``xfail``, a body with a
key twice), no recording of a proxy's error page, ignore rules checked before any test
runs, and a changed non-model request (embeddings) reported as a mismatch.

Each test runs a project laid out like a user's through ``pytester``, its agent calling
the real ``openai`` SDK, live against the counting server on 127.0.0.1 (``model_server``)
or scripted.
"""

from __future__ import annotations

import re
from pathlib import Path

import openai  # noqa: F401  (loaded once here: the in-process runs reuse it)
import pytest

from tests.model_server import Answer, ModelServer, json_answer
from tests.wire.agents import CLOSED

AGENT = f"""
import os

import httpx
import openai
import pytest

DOCUMENT = os.environ.get("AGENT_DOCUMENT", "the cat sat on the mat")


def client():
    base = os.environ.get("AGENT_BASE_URL", "{CLOSED}")
    return openai.OpenAI(base_url=base, api_key="sk-test-not-a-real-key-0001", max_retries=0)


def ask(prompt):
    reply = client().chat.completions.create(
        model="gpt-test", messages=[{{"role": "user", "content": prompt}}]
    )
    return reply.choices[0].message.content


def test_embed(headerlock_wire):
    vector = client().embeddings.create(model="emb", input=DOCUMENT, encoding_format="float")
    try:
        answer = ask(f"nearest: {{vector.data[0].embedding[0]}}")
    except Exception:
        if not os.environ.get("AGENT_SWALLOW"):
            raise
        answer = "live answer"  # the agent carries on with a default
    assert answer == "live answer"


@pytest.mark.headerlock_wire(script=[{{"text": "scripted"}}])
def test_scripted(headerlock_wire):
    assert ask("hi") == "scripted"
"""

DUPLICATE = """
import os

import httpx
import pytest

BODY = os.environ.get("AGENT_BODY", '{"model": "gpt-test", "messages": []}')


@pytest.mark.headerlock_wire(script=[{"text": "scripted"}])
def test_raw(headerlock_wire):
    httpx.post("http://127.0.0.1:9/v1/chat/completions", content=BODY.encode(),
               headers={"content-type": "application/json"})
"""

INI = """[pytest]
testpaths = tests
addopts = --import-mode=importlib -p no:randomly
asyncio_default_fixture_loop_scope = function
"""

EMBEDDING = {
    "object": "list",
    "data": [{"object": "embedding", "index": 0, "embedding": [0.5, 0.25]}],
    "model": "emb",
    "usage": {"prompt_tokens": 1, "total_tokens": 1},
}


@pytest.fixture(autouse=True)
def agent_switches_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AGENT_BASE_URL", "AGENT_DOCUMENT", "AGENT_BODY", "AGENT_SWALLOW"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_agent.py").write_text(AGENT)
    return pytester


def run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest_inprocess(*args)


def _recording(project: pytest.Pytester, name: str) -> Path:
    return project.path / "recordings" / "tests" / "test_agent" / f"{name}.yaml"


def _record_embed(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, server: ModelServer
) -> None:
    server.script([{"text": "live answer"}])
    server.route("*/embeddings", json_answer(EMBEDDING))
    monkeypatch.setenv("AGENT_BASE_URL", server.base_url)
    run(project, "--snapshot-update", "tests/test_agent.py::test_embed").assert_outcomes(passed=1)
    server.hits.clear()


# -- one record vocabulary ---------------------------------------------------------------


@pytest.mark.parametrize("mode", ["none", "new"])
def test_snapshot_update_with_an_explicit_narrower_record_mode_is_a_usage_error(
    project: pytest.Pytester, mode: str
) -> None:
    result = run(project, "--snapshot-update", f"--headerlock-record={mode}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    said = result.stderr.str()
    assert f"--snapshot-update and --headerlock-record={mode}" in said
    assert not (project.path / "recordings").exists()  # nothing ran, nothing recorded


def test_snapshot_update_alone_or_with_all_records_everything(project: pytest.Pytester) -> None:
    run(
        project,
        "--snapshot-update",
        "--headerlock-record=all",
        "tests/test_agent.py::test_scripted",
    )
    assert _recording(project, "test_scripted").is_file()


def test_a_200_that_is_not_a_model_answer_is_a_failed_record_keeping_the_old_bytes(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, model_server: ModelServer
) -> None:
    _record_embed(project, monkeypatch, model_server)
    good = _recording(project, "test_embed").read_bytes()
    page = b"<html><body>502 Bad Gateway (proxy)</body></html>"
    model_server.route("*/chat/completions", Answer(200, page, content_type="text/html"))
    monkeypatch.setenv("AGENT_SWALLOW", "1")
    result = run(project, "--snapshot-update", "tests/test_agent.py::test_embed")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "recordings/tests/test_agent/test_embed.yaml: a model request failed while" in out
    assert "POST /v1/chat/completions: HTTP 200 with a body that is not a model API answer" in out
    assert "(the old recording is kept)" in out
    assert _recording(project, "test_embed").read_bytes() == good
    marked = "@pytest.mark.headerlock_wire(record_errors=True)\ndef test_embed("
    (project.path / "tests" / "test_agent.py").write_text(AGENT.replace("def test_embed(", marked))
    run(project, "--snapshot-update", "tests/test_agent.py::test_embed").assert_outcomes(passed=1)
    assert "502 Bad Gateway" in _recording(project, "test_embed").read_text()


# -- no silent pass --------------------------------------------------------------------


def test_a_missing_recording_fails_a_test_marked_xfail(project: pytest.Pytester) -> None:
    (project.path / "tests" / "test_agent.py").write_text(
        AGENT.replace("def test_scripted(", "@pytest.mark.xfail\ndef test_scripted(")
    )
    result = run(project, "tests/test_agent.py::test_scripted")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    outcomes = result.parseoutcomes()
    assert "xfailed" not in outcomes and outcomes.get("errors") == 1
    assert "no wire recording at recordings/tests/test_agent/test_scripted.yaml" in (
        result.stdout.str()
    )


def test_a_body_with_a_key_twice_is_refused_on_record_and_a_mismatch_on_replay(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini(INI)
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_raw.py").write_text(DUPLICATE)
    twice = '{"model": "gpt-test", "temperature": 1, "temperature": 0, "messages": []}'
    monkeypatch.setenv("AGENT_BODY", twice)
    recorded = pytester.runpytest_inprocess("--snapshot-update")
    recorded.assert_outcomes(failed=1)
    assert "the key 'temperature' appears twice in one JSON object" in recorded.stdout.str()
    assert not (pytester.path / "recordings").exists()
    monkeypatch.setenv("AGENT_BODY", '{"model": "gpt-test", "temperature": 0, "messages": []}')
    pytester.runpytest_inprocess("--snapshot-update").assert_outcomes(passed=1)
    pytester.runpytest_inprocess().assert_outcomes(passed=1)
    monkeypatch.setenv("AGENT_BODY", twice)  # last-wins parsing would read the recorded body
    replayed = pytester.runpytest_inprocess()
    replayed.assert_outcomes(failed=1)
    assert "the key 'temperature' appears twice" in replayed.stdout.str()


# -- a changed non-model request --------------------------------------------------------


def test_a_changed_embeddings_body_is_a_mismatch_naming_the_request_and_the_word(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, model_server: ModelServer
) -> None:
    _record_embed(project, monkeypatch, model_server)
    monkeypatch.setenv("AGENT_DOCUMENT", "the dog sat on the mat")
    result = run(project, "tests/test_agent.py::test_embed")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    expected = (
        "POST /v1/embeddings: body.input: 'the cat sat on the mat' -> 'the dog sat on the mat'"
    )
    assert expected in out
    assert "(1 difference)" in out and "0 differences" not in out
    assert "allow_hosts" not in out
    assert "headerlock/testing/wire" not in out  # no traceback through headerlock's frames
    assert re.search(r"pending: \S+test_embed\.yaml\.new", out)
    pending = _recording(project, "test_embed").with_name("test_embed.yaml.new")
    assert "the dog sat" in pending.read_text()
    assert model_server.hits == []


# -- ignore rules ----------------------------------------------------------------------


def test_a_whole_segment_ini_ignore_rule_is_a_usage_error_before_any_test_runs(
    project: pytest.Pytester,
) -> None:
    project.makeini(f"{INI}headerlock_ignore = config\n")
    result = run(project)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    [line] = [x for x in result.stderr.lines if "headerlock" in x]
    assert "headerlock_ignore: ignore rule 'config' would ignore the whole config segment" in line
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


def test_a_whole_segment_marker_rule_fails_its_test_at_setup_even_under_xfail(
    project: pytest.Pytester,
) -> None:
    marked = '@pytest.mark.xfail\n@pytest.mark.headerlock_wire(ignore=["config"])\ndef test_embed('
    (project.path / "tests" / "test_agent.py").write_text(AGENT.replace("def test_embed(", marked))
    result = run(project, "--snapshot-update", "tests/test_agent.py::test_embed")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "ignore rule 'config' would ignore the whole config segment" in out
    assert "AttributeError" not in out


def test_a_rule_over_the_header_is_named_once_per_session_with_what_it_turns_off(
    project: pytest.Pytester,
) -> None:
    project.makeini(f"{INI}headerlock_ignore = config.model messages[*].content config.seed\n")
    (project.path / "tests" / "test_more.py").write_text(
        AGENT.replace("def test_embed(", "def _unused(")
    )
    result = run(project, "--snapshot-update", "-k", "scripted")
    result.assert_outcomes(passed=2)
    lines = result.stdout.lines
    model = [x for x in lines if "ignore rule 'config.model' turns off the check of the model" in x]
    messages = [x for x in lines if "ignore rule 'messages[*].content' turns off" in x]
    assert len(model) == 1 and len(messages) == 1
    assert not [x for x in lines if "'config.seed' turns off" in x]  # not a header key
