"""Header classes, pins and guards of ``headerlock_wire`` tests, and verdicts that
cannot be hidden, in a user's own project driven through pytester.

The user's tests call the real ``openai`` SDK against the loopback model server
(``model_server``, on 127.0.0.1): ``pytest --snapshot-update`` records what it
answers, a plain ``pytest`` replays with no request reaching it. What the agents
send comes from environment variables, so a test here changes one prompt or one
tool schema between the record run and the replay.
"""

from __future__ import annotations

import pytest

import headerlock.testing.plugin.wire_fixture  # noqa: F401  (loaded once: in-process runs reuse it)
from tests.model_server import ModelServer

AGENT = '''
import json
import os

import openai

PLANNER = "You plan. Answer with a numbered plan."
EXECUTOR = "You execute one step.\\nUse the tools."


def search_tool():
    param = os.environ.get("AGENT_PARAM", "q")
    return {
        "type": "function",
        "function": {
            "name": "search",
            "description": os.environ.get("AGENT_DESCRIPTION", "Search the notes."),
            "parameters": {
                "type": "object",
                "properties": {param: {"type": os.environ.get("AGENT_PARAM_TYPE", "string")}},
                "required": [param],
            },
        },
    }


def fetch_tool():
    return {
        "type": "function",
        "function": {"name": "fetch", "parameters": {"type": "object", "properties": {}}},
    }


def tools():
    listed = [search_tool(), fetch_tool()]
    return listed[::-1] if os.environ.get("AGENT_REVERSED") else listed


def ask(system, prompt, tools=None):
    client = openai.OpenAI(
        base_url=os.environ["AGENT_BASE_URL"], api_key="sk-test-not-a-real-key-0001", max_retries=0
    )
    extra = {} if tools is None else {"tools": tools}
    reply = client.chat.completions.create(
        model="gpt-test",
        messages=[{"role": "system", "content": system}, {"role": "user", "content": prompt}],
        **extra,
    )
    return reply.choices[0].message.content


def changed(name, default):
    """What an unpinned test's agent was changed to send (the pin keeps the recorded one)."""
    return os.environ.get(name, default)
'''

PINNED = """
import pytest
from agent import EXECUTOR, PLANNER, ask, changed, tools


def test_plan(headerlock_wire):
    assert ask(changed("PLAN_SYSTEM", PLANNER), "plan the trip") == "ok"


def test_execute(headerlock_wire):
    assert ask(changed("EXECUTE_SYSTEM", EXECUTOR), "step 1", tools()) == "ok"


@pytest.mark.headerlock_pin
def test_pinned(headerlock_wire):
    assert ask(PLANNER, "plan") == "ok"
    assert ask(EXECUTOR, "step", tools()) == "ok"
    assert len(headerlock_wire.requests) == 2
"""

UNPINNED = """
import pytest
from agent import PLANNER, ask


def test_one(headerlock_wire):
    assert ask(PLANNER, "one") == "ok"


def test_two(headerlock_wire):
    assert ask(PLANNER, "two") == "ok"


@pytest.mark.headerlock_wire(header_class="tests/test_pinned.py")
def test_joins_the_pinned_class(headerlock_wire):
    assert ask(PLANNER, "three") == "ok"
"""

HIDING = """
import os

import openai
import pytest
from agent import PLANNER, ask

HIDE = os.environ.get("HIDE", "")


class Hidden(BaseException):
    pass


def agent():
    try:
        return ask(PLANNER, os.environ.get("PROMPT", "hello"))
    except openai.BadRequestError:  # headerlock's 400 on a mismatch
        if HIDE == "skip":
            pytest.skip("the model is having a bad day")
        if HIDE == "xfail":
            pytest.xfail("known to be flaky")
        if HIDE == "base":
            raise Hidden("nothing to see") from None
        if HIDE == "exit":
            pytest.exit("stopping here", returncode=0)
        if HIDE == "swallow":
            return "ok"
        raise


@pytest.mark.xfail(reason="expected to fail", strict=False)
def test_marked(headerlock_wire):
    answer = agent()
    if HIDE == "marker":
        raise AssertionError("the agent failed as expected")
    assert answer == "ok"


def test_plain(headerlock_wire):
    assert agent() == "ok"
"""

INI = """[pytest]
testpaths = tests
pythonpath = tests
addopts = -p no:randomly -p no:cacheprovider
asyncio_default_fixture_loop_scope = function
"""

REQUESTS = ("tests", "test_pinned")


@pytest.fixture
def project(
    pytester: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    """A user's project: ``tests/agent.py`` and ``tests/test_pinned.py``, its agents at
    the loopback model server, which answers every request ``ok``."""
    for name in (
        "AGENT_PARAM", "AGENT_DESCRIPTION", "AGENT_PARAM_TYPE", "AGENT_REVERSED", "PLAN_SYSTEM",
        "EXECUTE_SYSTEM", "HIDE", "PROMPT",
    ):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    pytester.makeini(INI)
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "agent.py").write_text(AGENT)
    (pytester.path / "tests" / "test_pinned.py").write_text(PINNED)
    model_server.script([{"text": "ok"}] * 100)
    monkeypatch.setenv("AGENT_BASE_URL", model_server.base_url)
    return pytester


def run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest_inprocess(*args)


def recorded(project: pytest.Pytester, model_server: ModelServer, *args: str) -> int:
    """Record the project (or ``args``); the number of requests the model server saw."""
    result = run(project, "--snapshot-update", *args)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    return len(model_server.hits)


# -- the guard -------------------------------------------------------------------------


def test_unpinned_tests_pass_the_guard_with_either_of_the_pins_headers(
    project: pytest.Pytester, model_server: ModelServer
) -> None:
    hits = recorded(project, model_server)
    result = run(project, "-v")
    result.assert_outcomes(passed=3)  # the planner and the executor: two pinned headers
    assert len(model_server.hits) == hits  # replay reached no server
    assert "headerlock: unchecked" not in result.stdout.str()
    assert "could not check" not in result.stdout.str()


def test_a_changed_system_prompt_in_an_unpinned_test_fails_the_class_guard(
    project: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded(project, model_server)
    monkeypatch.setenv("EXECUTE_SYSTEM", "You execute one step.\nUse the tools freely.")
    # its replay fails on its header lock; re-recording it alone fails the class guard
    result = run(project, "--snapshot-update", "tests/test_pinned.py::test_execute")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "tests/test_pinned.py::test_execute: request 1 of 1 does not carry a pinned header"
            " of header class 'tests/test_pinned.py' after restore (pin:"
            " tests/test_pinned.py::test_pinned, recordings/tests/test_pinned/test_pinned.yaml):",
            "  request 1 (openai.chat) system: differs from the pin's request 2 (pin -> this test):",
            "      line 2: 'Use the tools.' -> 'Use the tools freely.'",
            "If the change is intended, re-record the pin: pytest --snapshot-update"
            " tests/test_pinned.py::test_pinned; a test that sends another header belongs to"
            ' another class: @pytest.mark.headerlock_wire(header_class="...")',
            "FAILED tests/test_pinned.py::test_execute*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        pytest.param(
            "AGENT_PARAM", "query",
            [
                "  request 1 (openai.chat) tools, tool search: differs from the pin's request 2"
                " (pin -> this test):",
                "      search.function.parameters.properties: {'q': {'type': 'string'}}"
                " -> {'query': {'type': 'string'}}",
                "      search.function.parameters.required[0]: 'q' -> 'query'",
            ],
            id="renamed-parameter",
        ),
        pytest.param(
            "AGENT_PARAM_TYPE", "integer",
            [
                "  request 1 (openai.chat) tools, tool search: differs from the pin's request 2"
                " (pin -> this test):",
                "      search.function.parameters.properties.q.type: 'string' -> 'integer'",
            ],
            id="retyped-parameter",
        ),
        pytest.param(
            "AGENT_DESCRIPTION", "Search every note.",
            [
                "  request 1 (openai.chat) tools, tool search: differs from the pin's request 2"
                " (pin -> this test):",
                "      search.function.description: 'Search the notes.' -> 'Search every note.'",
            ],
            id="changed-description",
        ),
    ],
)  # fmt: skip
def test_a_changed_tool_schema_in_an_unpinned_test_fails_the_class_guard(
    project: pytest.Pytester,
    model_server: ModelServer,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    expected: list[str],
) -> None:
    recorded(project, model_server)
    monkeypatch.setenv(variable, value)
    # re-recorded alone, the test is checked against its pin's file
    result = run(project, "--snapshot-update", "tests/test_pinned.py::test_execute")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "tests/test_pinned.py::test_execute: request 1 of 1 does not carry a pinned header*",
            *expected,
            "If the change is intended, re-record the pin:*",
        ]
    )


def test_a_pin_without_a_recording_cannot_check_and_says_so(
    project: pytest.Pytester, model_server: ModelServer
) -> None:
    result = run(project, "--snapshot-update", "tests/test_pinned.py::test_plan")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "headerlock: header class 'tests/test_pinned.py': the guard could not check"
            " tests/test_pinned.py::test_plan: its pin tests/test_pinned.py::test_pinned has no"
            " recording yet (recordings/tests/test_pinned/test_pinned.yaml); record it:"
            " pytest --snapshot-update tests/test_pinned.py::test_pinned"
        ]
    )


def test_under_snapshot_update_the_pin_records_first_and_its_class_follows(
    project: pytest.Pytester, model_server: ModelServer
) -> None:
    recorded(project, model_server)
    source = project.path / "tests" / "agent.py"
    source.write_text(AGENT.replace("Use the tools.", "Use the tools well."))  # every test
    result = run(project, "--snapshot-update", "-v")
    result.assert_outcomes(passed=3)  # the pin ran first, its class was checked against it
    result.stdout.fnmatch_lines(
        ["*test_pinned.py::test_pinned PASSED*", "*test_pinned.py::test_plan PASSED*"]
    )
    text = (project.path / "recordings" / "tests" / "test_pinned" / "test_pinned.yaml").read_text()
    assert "Use the tools well." in text
    run(project).assert_outcomes(passed=3)


def test_a_test_joins_another_module_s_class_with_header_class(
    project: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project.path / "tests" / "test_unpinned.py").write_text(UNPINNED)
    recorded(project, model_server)
    monkeypatch.setenv("PLAN_SYSTEM", "You plan.")  # test_plan only: its own class's pin
    source = project.path / "tests" / "test_unpinned.py"
    source.write_text(UNPINNED.replace('ask(PLANNER, "three")', 'ask("You plan.", "three")'))
    result = run(
        project,
        "--snapshot-update",
        "tests/test_pinned.py::test_plan",
        "tests/test_unpinned.py::test_joins_the_pinned_class",
    )
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "tests/test_unpinned.py::test_joins_the_pinned_class: request 1 of 1 does not carry"
            " a pinned header of header class 'tests/test_pinned.py' after restore*",
            "      line 1: 'You plan. Answer with a numbered plan.' -> 'You plan.'",
        ]
    )
    assert "FAILED tests/test_pinned.py::test_plan" in result.stdout.str()


def test_two_pins_in_a_class_are_a_usage_error_naming_both(project: pytest.Pytester) -> None:
    source = project.path / "tests" / "test_pinned.py"
    source.write_text(
        PINNED.replace("def test_plan(", "@pytest.mark.headerlock_pin\ndef test_plan(")
    )
    result = run(project, "--snapshot-update")
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(
        [
            "*ConfigError: header class 'tests/test_pinned.py' has 2 pinned tests"
            " (tests/test_pinned.py::test_plan, tests/test_pinned.py::test_pinned); keep exactly"
            " one @pytest.mark.headerlock_pin*"
        ]
    )
    assert not (project.path / "recordings").exists()


# -- unchecked classes -----------------------------------------------------------------


def test_a_class_without_a_pin_is_checked_by_its_header_lock_not_named_unchecked(
    project: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project.path / "tests" / "test_unpinned.py").write_text(UNPINNED)
    recorded(project, model_server)
    result = run(project)
    result.assert_outcomes(passed=6)
    assert "headerlock: unchecked" not in result.stdout.str()
    monkeypatch.setenv("AGENT_DESCRIPTION", "Search every note.")  # no test of it sends tools
    source = project.path / "tests" / "agent.py"
    source.write_text(AGENT.replace("You plan. Answer", "You plan. Reply"))
    result = run(project, "tests/test_unpinned.py")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["*header of request 1 (openai.chat) differs from the locked one*"])


def test_headerlock_require_pin_fails_every_test_of_an_unchecked_class(
    project: pytest.Pytester, model_server: ModelServer
) -> None:
    (project.path / "tests" / "test_unpinned.py").write_text(UNPINNED)
    recorded(project, model_server)
    project.makeini(f"{INI}headerlock_require_pin = true\n")
    result = run(project)
    result.assert_outcomes(passed=4, failed=2)
    result.stdout.fnmatch_lines(
        [
            "header class 'tests/test_unpinned.py' has no pinned test, so nothing checks*:"
            " tests/test_unpinned.py::test_one, tests/test_unpinned.py::test_two"
            " (headerlock_require_pin = true)",
            "FAILED tests/test_unpinned.py::test_one*",
            "FAILED tests/test_unpinned.py::test_two*",
        ]
    )


@pytest.mark.slow
def test_guards_and_the_summary_work_alike_under_xdist(
    project: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project.path / "tests" / "test_unpinned.py").write_text(UNPINNED)
    recorded(project, model_server)
    monkeypatch.setenv("EXECUTE_SYSTEM", "You execute.")
    result = run(project, "-n", "2")
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*header of request 1 (openai.chat) differs from the locked one (system;*",
            "headerlock: header changed: recordings/tests/test_pinned/headers.lock.yaml:"
            " * (system): 1 test (tests/test_pinned.py::test_execute)*",
        ]
    )
    assert "headerlock: unchecked" not in result.stdout.str()
    result = run(project, "-n", "2", "--snapshot-update", "tests/test_pinned.py::test_execute")
    result.assert_outcomes(failed=1)  # re-recorded alone: the class guard still fails it
    result.stdout.fnmatch_lines(
        ["tests/test_pinned.py::test_execute: request 1 of 1 does not carry a pinned header*"]
    )


# -- verdicts cannot be hidden ---------------------------------------------------------


@pytest.mark.parametrize("hide", ["skip", "xfail", "base", "swallow", ""])
def test_a_mismatch_is_a_failure_whatever_the_test_does_after_the_400(
    project: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch, hide: str
) -> None:
    (project.path / "tests" / "test_hiding.py").write_text(HIDING)
    recorded_hits = recorded(project, model_server, "tests/test_hiding.py")
    monkeypatch.setenv("PROMPT", "hello there")
    monkeypatch.setenv("HIDE", hide)
    # without a pending file a mismatch answers an HTTP 400, which the test then hides
    result = run(project, "tests/test_hiding.py", "-rA", "--headerlock-no-pending")
    result.assert_outcomes(failed=2)  # not skipped, not xfailed, not passed
    result.stdout.fnmatch_lines(
        [
            "*headerlock.errors.WireMismatch: wire replay of"
            " recordings/tests/test_hiding/test_marked.yaml does not match the recording*",
            "*request 1 (openai.chat) messages: *hello* -> *hello there*",
            "*If the change is intended, re-record: pytest --snapshot-update"
            " tests/test_hiding.py::test_marked",
        ]
    )
    assert "xfail" not in result.stdout.str().lower().split("short test summary")[-1]
    assert len(model_server.hits) == recorded_hits


def test_an_xfail_marker_does_not_hide_a_mismatch_behind_the_expected_failure(
    project: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project.path / "tests" / "test_hiding.py").write_text(HIDING)
    recorded(project, model_server, "tests/test_hiding.py")
    monkeypatch.setenv("HIDE", "marker")
    run(project, "tests/test_hiding.py").assert_outcomes(passed=1, xfailed=1)  # no mismatch
    monkeypatch.setenv("PROMPT", "hello there")
    result = run(project, "tests/test_hiding.py::test_marked")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*WireMismatch: wire replay of*test_marked.yaml*"])


def test_stopping_the_session_after_a_mismatch_cannot_end_green(
    project: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project.path / "tests" / "test_hiding.py").write_text(HIDING)
    recorded(project, model_server, "tests/test_hiding.py")
    monkeypatch.setenv("PROMPT", "hello there")
    monkeypatch.setenv("HIDE", "exit")
    result = run(project, "tests/test_hiding.py::test_plain", "--headerlock-no-pending")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # pytest.exit(returncode=0) said green
    result.stdout.fnmatch_lines(
        [
            "headerlock: tests/test_hiding.py::test_plain stopped the session after its wire"
            " replay failed:",
            "wire replay of recordings/tests/test_hiding/test_plain.yaml does not match*",
        ]
    )


def test_an_order_sorted_since_the_recording_says_re_record_or_accept(
    project: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded(project, model_server, "tests/test_pinned.py::test_pinned")
    monkeypatch.setenv("AGENT_REVERSED", "1")  # fetch, search: now sorted by name
    result = run(project, "tests/test_pinned.py::test_pinned")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*request 2 (openai.chat) tools: order search, fetch -> fetch, search",
            "*The tools are now sorted by name (the RFC order) and the recording's were not:"
            " the order changed; re-record or accept (headerlock review).",
            "*re-record: pytest --snapshot-update tests/test_pinned.py::test_pinned",
        ]
    )
    assert "flake" not in result.stdout.str()
