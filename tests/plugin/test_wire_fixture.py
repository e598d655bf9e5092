"""The ``headerlock_wire`` fixture in a user's own project, driven through pytester.

The user's tests call the real ``openai`` SDK with ``base_url`` at a closed port
and a scripted model (``@pytest.mark.headerlock_wire(script=[...])``), so no
request ever leaves the machine; the tool order comes from ``AGENT_ORDER``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import openai  # noqa: F401  (loaded once here: the in-process runs reuse it)
import pytest

from headerlock.formats.header_lock import load_lock
from headerlock.formats.wire_recording import load_wire_recording
from headerlock.testing.plugin.names import decode_part
from tests.model_server import ModelServer
from tests.wire.agents import CLOSED

AGENT = f'''
import os

import openai
import pytest

BASE_URL = os.environ.get("AGENT_BASE_URL", "{CLOSED}")
SCRIPT = [{{"tool_calls": [{{"name": "search", "arguments": {{"q": "x"}}}}]}}, {{"text": "done"}}]


def tools():
    names = ["search", "fetch"] if os.environ.get("AGENT_ORDER", "ab") == "ab" else ["fetch", "search"]
    return [
        {{"type": "function", "function": {{"name": n, "parameters": {{"type": "object"}}}}}}
        for n in names
    ]


def agent(prompt):
    client = openai.OpenAI(base_url=BASE_URL, api_key="sk-test-not-a-real-key-0001", max_retries=0)
    messages = [{{"role": "system", "content": "Be brief."}}, {{"role": "user", "content": prompt}}]
    while True:
        reply = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools())
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            messages.append({{"role": "tool", "tool_call_id": call.id, "content": "found"}})


@pytest.mark.headerlock_wire(script=SCRIPT)
def test_agent(headerlock_wire):
    assert agent(os.environ.get("AGENT_PROMPT", "hi")) == "done"
    assert [r.api for r in headerlock_wire.requests] == ["openai.chat", "openai.chat"]
    assert os.environ.get("AGENT_FAIL") is None, "the agent regressed"


@pytest.mark.headerlock_pin
@pytest.mark.headerlock_wire(script=SCRIPT)
def test_pinned(headerlock_wire):
    assert agent("hi") == "done"
    assert headerlock_wire.pinned
'''

SUB = f'''
import openai
import pytest


@pytest.mark.headerlock_wire(script=[{{"text": "from sub"}}])
def test_agent(headerlock_wire):
    client = openai.OpenAI(base_url="{CLOSED}", api_key="sk-test-not-a-real-key-0001", max_retries=0)
    reply = client.chat.completions.create(model="gpt-sub", messages=[{{"role": "user", "content": "x"}}])
    assert reply.choices[0].message.content == "from sub"
    assert len(headerlock_wire.requests) == 1
'''

PARAMS = f'''
import openai
import pytest

WHO = ["Ann Lee", "ann lee", "a/b", "a b", "a-b"]


@pytest.mark.parametrize("who", WHO)
@pytest.mark.headerlock_wire(script=[{{"text": "hi"}}])
def test_greet(headerlock_wire, who):
    client = openai.OpenAI(base_url="{CLOSED}", api_key="sk-test-not-a-real-key-0001", max_retries=0)
    client.chat.completions.create(model="gpt-test", messages=[{{"role": "user", "content": who}}])
'''

ASYNC = f'''
import openai
import pytest


@pytest.mark.asyncio
@pytest.mark.headerlock_wire(script=[{{"text": "one"}}, {{"text": "two"}}])
async def test_async_agent(headerlock_wire):
    client = openai.AsyncOpenAI(base_url="{CLOSED}", api_key="sk-test-not-a-real-key-0001", max_retries=0)
    texts = []
    for prompt in ("a", "b"):
        stream = await client.chat.completions.create(
            model="gpt-test", messages=[{{"role": "user", "content": prompt}}], stream=True
        )
        texts.append("".join([c.choices[0].delta.content or "" async for c in stream]))
    assert texts == ["one", "two"]
    assert [r.number for r in headerlock_wire.requests] == [1, 2]
'''

LIVE = """
import os

import openai
import pytest


def ask(prompt):
    client = openai.OpenAI(base_url=os.environ["AGENT_BASE_URL"], api_key="sk-live-key-000001", max_retries=0)
    reply = client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": prompt}])
    return reply.choices[0].message.content


def test_live(headerlock_wire):
    assert ask("x") == "live answer"


@pytest.mark.headerlock_wire(script=[{"text": "scripted"}], redact_env=["AGENT_TOKEN"])
def test_scripted(headerlock_wire):
    prompt = f"token {os.environ['AGENT_TOKEN']}, user {os.environ['USER_SECRET']}"
    assert ask(prompt) in ("scripted", "live answer")
"""


INI = """[pytest]
testpaths = tests
addopts = --import-mode=importlib -p no:randomly
asyncio_default_fixture_loop_scope = function
"""


@pytest.fixture(autouse=True)
def agent_switches_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """The switches the user's agent reads start unset."""
    for name in ("AGENT_ORDER", "AGENT_FAIL", "AGENT_PROMPT", "AGENT_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A user's project: ``tests/test_agent.py`` and ``tests/sub/test_agent.py``."""
    pytester.makeini(INI)
    (pytester.path / "tests" / "sub").mkdir(parents=True)
    (pytester.path / "tests" / "test_agent.py").write_text(AGENT)
    (pytester.path / "tests" / "sub" / "test_agent.py").write_text(SUB)
    return pytester


def run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest_inprocess(*args)


def recording(project: pytest.Pytester, *parts: str) -> Path:
    return project.path.joinpath("recordings", *parts)


MAIN = ("tests", "test_agent", "test_agent.yaml")
PINNED = ("tests", "test_agent", "test_pinned.yaml")
SUB_FILE = ("tests", "sub", "test_agent", "test_agent.yaml")


def _model(path: Path) -> Any:
    """The model of a recording's first request: in the header lock beside it."""
    entry = load_wire_recording(path).requests[0]
    assert entry.header is not None
    return load_lock(path.parent / "headers.lock.yaml").headers[entry.header]["config"]["model"]


def test_record_then_replay_green_with_one_file_per_test(project: pytest.Pytester) -> None:
    run(project, "--snapshot-update").assert_outcomes(passed=3)
    main, sub = recording(project, *MAIN), recording(project, *SUB_FILE)
    # two tests named test_agent in two files: two recordings
    assert _model(main) == "gpt-test"
    assert _model(sub) == "gpt-sub"
    assert len(load_wire_recording(main).requests) == 2
    assert (
        not load_wire_recording(main).pinned
        and load_wire_recording(recording(project, *PINNED)).pinned
    )
    assert "sk-test-not-a-real-key" not in main.read_text()
    before = {p: p.read_bytes() for p in (project.path / "recordings").rglob("*.yaml")}
    result = run(project)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["headerlock: 3 recordings matched"])
    # re-recording gives the same bytes
    run(project, "--snapshot-update").assert_outcomes(passed=3)
    assert {p: p.read_bytes() for p in before} == before


def test_a_tool_reorder_fails_the_pinned_replay_and_the_class_guard(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(project, "--snapshot-update").assert_outcomes(passed=3)
    monkeypatch.setenv("AGENT_ORDER", "ba")
    result = run(project, "--headerlock-no-pending")  # a mismatch answers an HTTP 400
    # failures of the tests, not teardown errors: test_pinned's replay, and test_agent's
    # class guard (its own recording keeps only the tool names)
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "E*openai.BadRequestError: Error code: 400 - headerlock: request 1 (openai.chat) tools:*",
            "During handling of the above exception, another exception occurred:",
            "E*headerlock.errors.WireMismatch: wire replay of"
            " recordings/tests/test_agent/test_pinned.yaml does not match the recording*",
            "*request 1 (openai.chat) tools: order search, fetch -> fetch, search",
            "*request 1 (openai.chat) prefix: prefix_sha256 *; first differing byte 40 (in tool fetch*",
            "*The tools are now sorted by name (the RFC order) and the recording's were not:"
            " the order changed; re-record or accept*",
            "FAILED tests/test_agent.py::test_agent - *",
            "FAILED tests/test_agent.py::test_pinned - *",
        ]
    )
    monkeypatch.delenv("AGENT_ORDER")
    run(project).assert_outcomes(passed=3)


def test_a_failing_test_under_snapshot_update_keeps_the_old_bytes(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(project, "--snapshot-update").assert_outcomes(passed=3)
    pinned = recording(project, *PINNED)
    main = recording(project, *MAIN)
    old = main.read_bytes(), pinned.read_bytes()
    monkeypatch.setenv("AGENT_ORDER", "ba")  # would change the pinned recording
    monkeypatch.setenv("AGENT_PROMPT", "changed")  # would change test_agent's recording,
    monkeypatch.setenv("AGENT_FAIL", "1")  # but test_agent fails after its requests
    result = run(project, "--snapshot-update")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "headerlock: kept recordings/tests/test_agent/test_agent.yaml: tests/test_agent.py::test_agent failed*"
        ]
    )
    assert main.read_bytes() == old[0]
    assert pinned.read_bytes() != old[1]  # the passing pinned test was re-recorded
    monkeypatch.delenv("AGENT_FAIL")
    monkeypatch.delenv("AGENT_PROMPT")
    monkeypatch.delenv("AGENT_ORDER")  # the kept recording's header: its tools' order
    result = run(project, "tests/test_agent.py::test_agent")  # its own replay still matches;
    assert "does not match the recording" not in result.stdout.str()  # the pin, re-recorded
    result.stdout.fnmatch_lines(["*the same tools in another order than the pin's*"])
    monkeypatch.setenv("AGENT_ORDER", "ba")
    monkeypatch.setenv("AGENT_PROMPT", "changed")
    run(project, "--snapshot-update").assert_outcomes(passed=3)
    assert main.read_bytes() != old[0]  # a passing run does replace it


def test_replay_without_a_recording_names_the_path_and_the_command(
    project: pytest.Pytester,
) -> None:
    result = run(project, "tests/sub/test_agent.py")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "MissingRecordingError: no wire recording at recordings/tests/sub/test_agent/test_agent.yaml;"
            " record it with: pytest --snapshot-update tests/sub/test_agent.py::test_agent"
        ]
    )
    assert not (project.path / "recordings").exists()


def test_a_link_at_the_pending_path_is_left_and_the_failure_says_why_no_pending_file(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(project, "--snapshot-update", "tests/test_agent.py").assert_outcomes(passed=2)
    victim = project.path / "victim.txt"
    victim.write_text("not headerlock's\n")
    link = recording(project, *MAIN).with_name("test_agent.yaml.new")
    link.symlink_to(victim)  # a repository can commit one
    monkeypatch.setenv("AGENT_PROMPT", "changed")
    result = run(project, "tests/test_agent.py::test_agent")
    result.assert_outcomes(failed=1)
    assert victim.read_text() == "not headerlock's\n" and link.is_symlink()
    result.stdout.fnmatch_lines(
        [
            "*request 1 (openai.chat) messages: messages?0?.content: 'hi' -> 'changed'",
            "*(no pending file: recordings/tests/test_agent/test_agent.yaml.new: is a symbolic"
            " link; headerlock writes only files it owns, never through a link*",
        ]
    )
    assert "holds the recording this run would make" not in result.stdout.str()


def test_parametrized_ids_are_file_safe_and_distinct(project: pytest.Pytester) -> None:
    (project.path / "tests" / "test_params.py").write_text(PARAMS)
    run(project, "--snapshot-update", "tests/test_params.py").assert_outcomes(passed=5)
    folder = recording(project, "tests", "test_params")
    files = sorted(p.name for p in folder.iterdir() if p.name != "headers.lock.yaml")
    assert len(files) == 5
    assert all(re.fullmatch(r"[a-z0-9_.%+~-]+\.yaml", name) for name in files), files
    names = sorted(decode_part(name.removesuffix(".yaml")) or "" for name in files)
    assert names == sorted(
        f"test_greet[{who}]" for who in ["Ann Lee", "ann lee", "a/b", "a b", "a-b"]
    )
    run(project, "tests/test_params.py").assert_outcomes(passed=5)


def test_an_async_test_records_and_replays(project: pytest.Pytester) -> None:
    (project.path / "tests" / "test_async.py").write_text(ASYNC)
    run(project, "--snapshot-update", "tests/test_async.py").assert_outcomes(passed=1)
    path = recording(project, "tests", "test_async", "test_async_agent.yaml")
    assert [r.response.kind for r in load_wire_recording(path).requests if r.response] == [
        "events",
        "events",
    ]
    run(project, "tests/test_async.py").assert_outcomes(passed=1)


def test_without_a_script_record_forwards_to_the_live_endpoint(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, model_server: ModelServer
) -> None:
    (project.path / "tests" / "test_live.py").write_text(LIVE)
    project.makeini(f"{INI}headerlock_redact_env = USER_SECRET\n")
    monkeypatch.setenv("AGENT_TOKEN", "tok-marker-secret-1")
    monkeypatch.setenv("USER_SECRET", "ini-listed-secret-2")
    model_server.script([{"text": "live answer"}] * 2)
    monkeypatch.setenv("AGENT_BASE_URL", model_server.base_url)
    run(project, "--snapshot-update", "tests/test_live.py").assert_outcomes(passed=2)
    assert len(model_server.hits) == 1  # the scripted test never reached the server
    # --headerlock-live records the scripted test against the endpoint too
    args = ("--snapshot-update", "--headerlock-live", "tests/test_live.py::test_scripted")
    run(project, *args).assert_outcomes(passed=1)
    assert len(model_server.hits) == 2
    monkeypatch.setenv("AGENT_BASE_URL", CLOSED)  # replay: nothing listens, nothing needed
    run(project, "tests/test_live.py").assert_outcomes(passed=2)
    folder = recording(project, "tests", "test_live")
    live = (folder / "test_live.yaml").read_text()
    scripted = (folder / "test_scripted.yaml").read_text()
    assert "sk-live-key" not in live and "live answer" in live
    assert "token <<secret>>, user <<secret>>" in scripted and "live answer" in scripted
    assert "marker-secret" not in scripted and "ini-listed" not in scripted


def test_wire_recordings_are_used_while_their_test_exists_and_unused_once_gone(
    project: pytest.Pytester,
) -> None:
    run(project, "--snapshot-update").assert_outcomes(passed=3)
    assert "unused recording" not in run(project).stdout.str()
    source = project.path / "tests" / "test_agent.py"
    source.write_text(AGENT[: AGENT.index("@pytest.mark.headerlock_pin")])  # test_pinned is gone
    result = run(project, "tests/sub")
    result.assert_outcomes(passed=1)
    assert "unused recording" not in result.stdout.str()  # test_agent.py not run: no verdict
    result = run(project)
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["headerlock: 1 unused recording: recordings/tests/test_agent/test_pinned.yaml;"
         " remove with: pytest --snapshot-update"]
    )  # fmt: skip
    result = run(project, "--snapshot-update")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["headerlock: removed 1 unused recording: recordings/tests/test_agent/test_pinned.yaml"]
    )
    assert not recording(project, *PINNED).exists()
    assert recording(project, *MAIN).is_file() and recording(project, *SUB_FILE).is_file()
    run(project).assert_outcomes(passed=2)


def test_a_script_that_runs_out_records_nothing(project: pytest.Pytester) -> None:
    source = project.path / "tests" / "sub" / "test_agent.py"
    source.write_text(SUB.replace('[{"text": "from sub"}]', "[]"))
    result = run(project, "--snapshot-update", "tests/sub/test_agent.py")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ScriptExhaustedError*"])
    assert not recording(project, *SUB_FILE).exists()


def test_a_bad_marker_is_a_clear_error(project: pytest.Pytester) -> None:
    source = project.path / "tests" / "sub" / "test_agent.py"
    source.write_text(SUB.replace("script=[", "scripts=["))
    result = run(project, "--snapshot-update", "tests/sub/test_agent.py")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["ConfigError: tests/sub/test_agent.py::test_agent: @pytest.mark.headerlock_wire:"
         " unknown keyword 'scripts'; expected one of allow_hosts, header_class, http_headers,"
         " ignore, mode, record_errors, redact, redact_env, script"]
    )  # fmt: skip


def test_a_pin_marker_on_an_unpinned_recording_says_to_re_record(
    project: pytest.Pytester,
) -> None:
    run(project, "--snapshot-update", "tests/sub/test_agent.py").assert_outcomes(passed=1)
    source = project.path / "tests" / "sub" / "test_agent.py"
    source.write_text(
        SUB.replace("def test_agent(", "@pytest.mark.headerlock_pin\ndef test_agent(")
    )
    result = run(project, "tests/sub/test_agent.py")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["ConfigError: recordings/tests/sub/test_agent/test_agent.yaml: the test is marked"
         " headerlock_pin, but its recording is not pinned; re-record it:"
         " pytest --snapshot-update tests/sub/test_agent.py::test_agent"]
    )  # fmt: skip
    run(project, "--snapshot-update", "tests/sub/test_agent.py").assert_outcomes(passed=1)
    assert load_wire_recording(recording(project, *SUB_FILE)).pinned
    run(project, "tests/sub/test_agent.py").assert_outcomes(passed=1)
