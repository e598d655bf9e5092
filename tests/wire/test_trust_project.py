"""A user's project on the trust promises: a replay with ``allow_hosts`` naming the model
server's host never reaches it, and a failing test leaks no secret into its report or
``--junitxml``.

The user's tests call the real ``openai`` SDK and ``requests`` at a counting server on
127.0.0.1 (``tests/model_server.py``), in-process through ``pytester``.
"""

from __future__ import annotations

import openai  # noqa: F401  (loaded once here: the in-process runs reuse it)
import pytest
import requests  # noqa: F401

from headerlock.formats.wire_recording import load_wire_recording
from tests.model_server import ModelServer, json_answer
from tests.wire.agents import CLOSED

INI = """[pytest]
testpaths = tests
addopts = --import-mode=importlib -p no:randomly
headerlock_allow_hosts = {ini_hosts}
"""

LOCAL = """
import os

import openai
import pytest
import requests


def ask(host):
    origin = os.environ["AGENT_ORIGIN"].replace("127.0.0.1", host)
    sky = requests.get(origin + "/tool/weather", timeout=5).json()
    client = openai.OpenAI(base_url=origin + "/v1", api_key="sk-local-key-0001", max_retries=0)
    reply = client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": sky["sky"]}]
    )
    return reply.choices[0].message.content


def test_ini(headerlock_wire):
    assert ask("127.0.0.1") == "local answer"
    assert len(headerlock_wire.requests) == 1


@pytest.mark.headerlock_wire(allow_hosts=["localhost"])
def test_marker(headerlock_wire):
    assert ask("localhost") == "local answer"
"""


def test_allow_hosts_in_the_ini_and_marker_never_reach_the_model_server(
    pytester: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini(INI.format(ini_hosts="127.0.0.1"))
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_local.py").write_text(LOCAL)
    monkeypatch.setenv("AGENT_ORIGIN", model_server.origin)
    model_server.script([{"text": "local answer"}] * 2)
    model_server.route("/tool/weather", json_answer({"sky": "clear"}), method="GET")
    pytester.runpytest_inprocess("--snapshot-update").assert_outcomes(passed=2)
    assert (
        sorted(h.path for h in model_server.hits)
        == ["/tool/weather"] * 2 + ["/v1/chat/completions"] * 2
    )
    for name in ("test_ini", "test_marker"):
        recorded = load_wire_recording(
            pytester.path / "recordings/tests/test_local" / f"{name}.yaml"
        )
        assert [e.api for e in recorded.requests] == ["openai.chat"] and recorded.http == ()
    model_server.hits.clear()
    pytester.runpytest_inprocess().assert_outcomes(passed=2)
    # the model requests are replayed; only the unrecorded tool call to the allowed host
    # goes through
    assert [h.path for h in model_server.hits] == ["/tool/weather"] * 2


ENV_KEY = "sk-registered-env-key-0123456789"
GATEWAY_TOKEN = "gw-credential-header-9876543210"

FAILING = f'''
import os

import openai
import pytest


def ask():
    client = openai.OpenAI(
        base_url="{CLOSED}",
        api_key=os.environ["OPENAI_API_KEY"],
        default_headers={{"x-gateway-token": os.environ["GATEWAY_TOKEN"]}},
        max_retries=0,
    )
    reply = client.chat.completions.create(
        model="gpt-test", messages=[{{"role": "user", "content": "hi"}}]
    )
    return reply.choices[0].message.content


@pytest.mark.headerlock_wire(script=[{{"text": "hello"}}])
def test_fails_on_purpose(headerlock_wire):
    assert ask() == "hello"
    if os.environ.get("FAIL"):
        assert headerlock_wire.requests == [], headerlock_wire


@pytest.mark.headerlock_wire(script=[{{"text": "hello"}}])
def test_fails_after_the_lock(headerlock_wire):
    ask()
    if os.environ.get("FAIL"):
        raise AssertionError(repr(headerlock_wire))
'''


def test_a_failing_wire_test_leaks_no_secret_into_its_report_or_junit_xml(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini(INI.format(ini_hosts=""))
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_failing.py").write_text(FAILING)
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("GATEWAY_TOKEN", GATEWAY_TOKEN)  # not a listed secret: a header's
    pytester.runpytest_inprocess("--snapshot-update").assert_outcomes(passed=2)
    monkeypatch.setenv("FAIL", "1")
    for options in (("--snapshot-update",), ()):  # a record, then a replay, that fail
        result = pytester.runpytest_inprocess(
            *options, "--tb=long", "-l", "-rA", "--junitxml=report.xml"
        )
        result.assert_outcomes(failed=2)
        output = "\n".join([*result.outlines, *result.errlines])
        assert "headerlock_wire = WireRun(" in output  # the report shows the run
        files = (p.read_bytes() for p in pytester.path.rglob("*") if p.is_file())  # .pyc too
        shown = [output, *(data.decode("utf-8", "surrogateescape") for data in files)]
        for secret in (ENV_KEY, GATEWAY_TOKEN):
            assert not [text for text in shown if secret in text]
