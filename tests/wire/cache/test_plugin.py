"""``pytest --headerlock-cache[=fail]`` and ini ``headerlock_cache`` in a user's project
(pytester, in process): the summary reports every wire test's session from the bytes
sent, unpinned included; ``fail`` fails the tests whose session breaks."""

from __future__ import annotations

import openai  # noqa: F401  (loaded once here: the in-process runs reuse it)
import pytest

from tests.wire.agents import CLOSED

TESTS = f'''
import os

import openai
import pytest

LONG = " ".join(f"Rule {{n}}: be exact and cite the file." for n in range(160))
SCRIPT = [{{"text": "one"}}, {{"text": "two"}}, {{"text": "three"}}]


def tool(name):
    return {{"type": "function", "function": {{"name": name, "parameters": {{"type": "object"}}}}}}


def agent(orders):
    client = openai.OpenAI(base_url="{CLOSED}", api_key="sk-test-not-a-real-key-0001", max_retries=0)
    messages = [{{"role": "system", "content": LONG}}]
    for turn, names in enumerate(orders):
        messages.append({{"role": "user", "content": f"question {{turn}}"}})
        reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=[tool(n) for n in names])
        messages.append({{"role": "assistant", "content": reply.choices[0].message.content}})


@pytest.mark.headerlock_wire(script=SCRIPT)
def test_stable(headerlock_wire):
    agent([["a", "b"]] * 3)


@pytest.mark.headerlock_wire(script=SCRIPT)
def test_moved(headerlock_wire):
    agent([["a", "b"], ["a", "b"], ["b", "a"]])


def test_plain():
    assert True
'''


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_agent=TESTS)
    assert pytester.runpytest_inprocess("--snapshot-update", "-p", "no:cacheprovider").ret == 0
    return pytester


def test_the_summary_reports_every_wire_test_unpinned_included(project: pytest.Pytester) -> None:
    result = project.runpytest_inprocess("--headerlock-cache", "-p", "no:cacheprovider")
    assert result.ret == 0
    out = result.stdout.str()
    section = out[out.index("headerlock cache report") :]
    assert section.count("cache report: test_agent.py::") == 2
    assert (
        "cache report: test_agent.py::test_moved (recordings/test_agent/test_moved.yaml)" in section
    )
    assert (
        "request 3 tools[0] (b) byte " in section
        and ": tools-reordered: order a, b -> b, a" in section
    )
    assert "headerlock cache: 2 wire tests, 1 with findings" in section
    assert "test_plain" not in section
    quiet = project.runpytest_inprocess("-p", "no:cacheprovider")
    assert quiet.ret == 0 and "headerlock cache report" not in quiet.stdout.str()


def test_fail_fails_the_test_whose_session_breaks(project: pytest.Pytester) -> None:
    result = project.runpytest_inprocess("--headerlock-cache=fail", "-p", "no:cacheprovider")
    assert result.ret == 1
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "FAILED test_agent.py::test_moved" in out
    assert "CacheBreakError" in out and "tools-reordered" in out


@pytest.mark.parametrize(
    ("ini", "ret", "failed"), [("fail", 1, 1), ("report", 0, 0), ("off", 0, 0)]
)
def test_the_ini_value_turns_it_on(
    project: pytest.Pytester, ini: str, ret: int, failed: int
) -> None:
    project.makeini(f"[pytest]\nheaderlock_cache = {ini}\n")
    result = project.runpytest_inprocess("-p", "no:cacheprovider")
    assert result.ret == ret
    result.assert_outcomes(passed=3 - failed, failed=failed)
    assert ("headerlock cache report" in result.stdout.str()) == (ini != "off")


def test_a_bad_ini_value_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nheaderlock_cache = loud\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        "headerlock: headerlock_cache = 'loud': expected report, fail or off" in result.stderr.str()
    )
