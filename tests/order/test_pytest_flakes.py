"""``headerlock flakes`` on pytest tests: a user's ``headerlock_wire`` tests run in fresh
pytest processes under varied hash seeds, sealed, and a tool list built from a ``set``
is caught (issue 27), which ``assert_order_invariant`` cannot see."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from headerlock.runtime.plugins import subprocess_env

AGENT = """
import httpx
import pytest

NAMES = ["search", "fetch", "summarize", "translate", "classify"]
TOOLS = {
    n: {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in NAMES
}


def agent(names):
    tools = [TOOLS[n] for n in ORDER(names)]
    body = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "hi"}],
            "tools": tools}
    httpx.post("http://127.0.0.1:9/v1/chat/completions", json=body).raise_for_status()


@pytest.mark.headerlock_wire(script=[{"text": "done"}])
def test_set_tools(headerlock_wire):
    agent(NAMES)


def test_not_a_wire_test():
    raise AssertionError("flakes runs only the headerlock_wire tests")


def test_order_check():
    from headerlock.wire import assert_order_invariant

    assert_order_invariant(agent, NAMES, script=[{"text": "done"}] * 200)
"""


def project(pytester: pytest.Pytester, order: str) -> Path:
    """A user's project: ``tests/test_agent.py`` whose agent orders its tools by ``order``."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    tests = pytester.mkdir("tests")
    (tests / "test_agent.py").write_text(f"ORDER = {order}\n{AGENT}")
    return pytester.path


def flakes(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "headerlock", "flakes", *args],
        cwd=cwd, env=subprocess_env(), capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def row(result: subprocess.CompletedProcess[str], test: str) -> list[str]:
    """The table row of ``test``: test, runs, distinct, first differing path."""
    lines = [line for line in result.stdout.splitlines() if line.startswith(test + " ")]
    assert len(lines) == 1, result.stdout + result.stderr
    return lines[0].split(maxsplit=3)


def test_a_set_built_tool_list_flakes_by_node_id(pytester: pytest.Pytester) -> None:
    # The order check varies registration order in one process; whether that moves a
    # set's iteration order depends on the process's hash seed (collisions), so it may or
    # may not see this agent. headerlock flakes, which varies the seed, always does.
    cwd = project(pytester, "set")
    result = flakes(cwd, "tests/test_agent.py::test_set_tools", "--runs", "6")
    assert result.returncode == 1, result.stdout + result.stderr
    _, runs, distinct, path = row(result, "tests/test_agent.py::test_set_tools")
    assert (runs, int(distinct) > 1) == ("6", True)
    assert path.startswith("request 1 tools order: ")
    assert "test_not_a_wire_test" not in result.stdout
    assert "distinct request headers" in result.stdout
    assert "#1: PYTHONHASHSEED=0" in result.stdout
    assert not (cwd / "recordings").exists()  # scripted, sealed: nothing recorded


@pytest.mark.parametrize("selection", [["tests/test_agent.py"], ["-k", "set_tools"]])
def test_a_module_path_and_k_select_the_same_way(
    pytester: pytest.Pytester, selection: list[str]
) -> None:
    cwd = project(pytester, "set")
    result = flakes(cwd, *selection, "--runs", "2")
    assert result.returncode == 1, result.stdout + result.stderr
    assert row(result, "tests/test_agent.py::test_set_tools")[1:3] == ["2", "2"]
    assert "test_not_a_wire_test" not in result.stdout


def test_a_sorted_agent_replayed_from_its_recording_does_not_flake(
    pytester: pytest.Pytester,
) -> None:
    cwd = project(pytester, "sorted")
    pytester.runpytest("--snapshot-update", "-k", "set_tools").assert_outcomes(passed=1)
    recording = cwd / "recordings" / "tests" / "test_agent" / "test_set_tools.yaml"
    lock = recording.parent / "headers.lock.yaml"
    before, locked = recording.read_bytes(), lock.read_bytes()
    result = flakes(cwd, "tests/test_agent.py::test_set_tools", "--runs", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert row(result, "tests/test_agent.py::test_set_tools")[1:] == ["2", "1", "-"]
    assert recording.read_bytes() == before
    assert lock.read_bytes() == locked  # nothing recorded: no pending file, no new header
    assert sorted(p.name for p in recording.parent.iterdir()) == [lock.name, recording.name]


def test_a_test_that_cannot_run_sealed_is_bad_input(pytester: pytest.Pytester) -> None:
    cwd = project(pytester, "sorted")
    text = (cwd / "tests" / "test_agent.py").read_text()
    (cwd / "tests" / "test_agent.py").write_text(text.replace('script=[{"text": "done"}]', ""))
    result = flakes(cwd, "tests/test_agent.py::test_set_tools", "--runs", "1")
    assert result.returncode == 2, result.stdout + result.stderr
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("headerlock: tests/test_agent.py::test_set_tools: sent no model")
    assert "no wire recording at" in error and "no script=" in error


def test_no_argument_and_no_fixtures_runs_the_projects_tests(pytester: pytest.Pytester) -> None:
    cwd = project(pytester, "sorted")
    result = flakes(cwd, "--runs", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert row(result, "tests/test_agent.py::test_set_tools")[1:] == ["1", "1", "-"]


def test_a_scenario_name_still_names_a_scenario(tmp_path: Path) -> None:
    result = flakes(tmp_path, "no-such-scenario", "--runs", "1")
    assert result.returncode == 2
    assert "fixtures" in result.stderr and "pytest" not in result.stderr
