"""The README's "Testing your own agent" examples run as written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests import docs

pytest.importorskip("openai")

EXAMPLES = docs.examples("example")


def test_the_lock_example_records_then_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(EXAMPLES["lock"], "README.md:lock", "exec"), {"__name__": "readme_lock"})
    text = (tmp_path / "recordings" / "agent.yaml").read_text()
    assert "kind: wire" in text
    assert "sk-test" not in text


@pytest.mark.slow
def test_the_pytest_example_records_then_replays(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent=EXAMPLES["pytest"])
    recorded = pytester.runpytest_subprocess("--snapshot-update", "-p", "no:randomly")
    recorded.assert_outcomes(passed=1)
    assert list((pytester.path / "recordings").rglob("*.yaml"))
    replayed = pytester.runpytest_subprocess("-p", "no:randomly")
    replayed.assert_outcomes(passed=1)
    locks = list((pytester.path / "recordings").rglob("headers.lock.yaml"))
    assert len(locks) == 1 and "You are terse." in locks[0].read_text()
    edited = EXAMPLES["pytest"].replace('"You are terse."', '"You are terse. Answer in English."')
    (pytester.path / "test_agent.py").write_text(edited)
    changed = pytester.runpytest_subprocess("-p", "no:randomly")
    changed.assert_outcomes(failed=1)
    shown = EXAMPLES["header-change"].replace("tests/test_agent", "test_agent")
    changed.stdout.fnmatch_lines([f"*{line.strip()}*" for line in shown.splitlines()])


def _record_then_replay(project: Path) -> None:
    """``headerlock record``, then ``headerlock replay``, in ``project``: both exit 0."""
    for command in ("record", "replay"):
        result = subprocess.run(
            [sys.executable, "-m", "headerlock", command],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stdout + result.stderr


def test_the_fixture_example_records_and_replays(tmp_path: Path) -> None:
    agent = EXAMPLES["lock"].split("# Record:")[0]  # the agent half of the lock example
    (tmp_path / "my_agent.py").write_text(agent)
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "hello.yaml").write_text(EXAMPLES["fixture"] + "\n")
    _record_then_replay(tmp_path)


def test_the_fixture_http_example_answers_the_agents_embeddings_call(tmp_path: Path) -> None:
    (tmp_path / "my_rag.py").write_text(EXAMPLES["fixture-http-agent"] + "\n")
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "rag.yaml").write_text(EXAMPLES["fixture-http"] + "\n")
    _record_then_replay(tmp_path)
