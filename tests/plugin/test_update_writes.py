"""A passed test's recording is written at its teardown, and every guarantee a user
relies on holds on a real session: every recording is on disk, whole, when the session
ends (also when it is interrupted: each passed test's recording, byte for byte, and no
temp file left), a refused write fails its test's teardown with the write's own error and
the exit status (also on an xdist worker), and the same traffic gives the same bytes
(pytester, a real model server, real processes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from headerlock.formats.atomic import TEMP_MARKER
from tests.model_server import ModelServer

TESTS = 12
AGENT = """
import os
from pathlib import Path

import openai
import pytest


def ask(text):
    client = openai.OpenAI(
        base_url=os.environ["AGENT_BASE_URL"], api_key="sk-test-not-a-real-key-0001", max_retries=0
    )
    return client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": text}]
    )


@pytest.mark.parametrize("n", range(TESTS))
def test_agent(headerlock_wire, n):
    ask(f"question {n}")
    if n == int(os.environ.get("CLASH", "-1")):  # another writer got there first
        Path(f"recordings/tests/test_agent/test_agent%5b{n}%5d.yaml").write_text("theirs\\n")


def test_zz_stop(headerlock_wire):
    ask("last")
    if os.environ.get("INTERRUPT"):
        raise KeyboardInterrupt
""".replace("TESTS", str(TESTS))


def _recording(project: Path, n: int) -> Path:
    return project / "recordings" / "tests" / "test_agent" / f"test_agent%5b{n}%5d.yaml"


def _files(project: Path) -> dict[str, bytes]:
    root = project / "recordings"
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def project(
    pytester: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    pytester.makeini("[pytest]\ntestpaths = tests\naddopts = -p no:randomly -p no:cacheprovider\n")
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_agent.py").write_text(AGENT)
    model_server.script([{"text": "ok"}] * 500)
    monkeypatch.setenv("AGENT_BASE_URL", model_server.base_url)
    for name in ("CLASH", "INTERRUPT"):
        monkeypatch.delenv(name, raising=False)
    return pytester


def test_every_passed_tests_recording_is_on_disk_when_the_session_ends(
    project: pytest.Pytester,
) -> None:
    project.runpytest_inprocess("--snapshot-update").assert_outcomes(passed=TESTS + 1)
    written = _files(project.path)
    assert len(written) == TESTS + 2  # and the header lock
    assert all(b"kind: wire" in text for name, text in written.items() if name.endswith("%5d.yaml"))
    again = project.runpytest_inprocess("--snapshot-update")  # the same traffic
    again.assert_outcomes(passed=TESTS + 1)
    again.stdout.fnmatch_lines(["headerlock: 0 recordings written, 13 unchanged"])
    assert _files(project.path) == written


def test_a_refused_write_fails_its_test_with_the_writes_error(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLASH", "3")
    result = project.runpytest_inprocess("--snapshot-update", "-rE")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=TESTS + 1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_agent[[]3[]]*",
            "headerlock: recordings/tests/test_agent/test_agent%5b3%5d.yaml: changed on disk"
            " since this session started (another process wrote it*",
            "*short test summary info*",
            "ERROR tests/test_agent.py::test_agent[[]3[]] - headerlock: recordings/*",
        ]
    )
    assert _recording(project.path, 3).read_text() == "theirs\n"  # the other writer's, kept
    assert all(_recording(project.path, n).is_file() for n in range(TESTS))
    result.stdout.fnmatch_lines(  # not a green session: nothing removed
        ["headerlock: no unused recording removed: 1 item failed (*::test_agent[[]3[]])"]
    )


def test_an_interrupted_session_still_writes_every_passed_tests_recording(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.runpytest_inprocess("--snapshot-update").assert_outcomes(passed=TESTS + 1)
    whole = _files(project.path)
    for path in (project.path / "recordings").rglob("test_agent*.yaml"):
        path.unlink()
    monkeypatch.setenv("INTERRUPT", "1")
    result = project.runpytest_subprocess("--snapshot-update")  # Ctrl-C: not in-process
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert _files(project.path) == whole  # each passed test's recording, byte for byte
    leftovers = [n for n in os.listdir(_recording(project.path, 0).parent) if TEMP_MARKER in n]
    assert leftovers == []


@pytest.mark.slow
def test_a_refused_write_on_an_xdist_worker_still_fails_its_test(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLASH", "3")
    result = project.runpytest_subprocess("--snapshot-update", "-rE", "-n", "2", "-p", "xdist")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=TESTS + 1, errors=1)
    result.stdout.fnmatch_lines(["ERROR tests/test_agent.py::test_agent[[]3[]] - headerlock: *"])
    result.stdout.fnmatch_lines([f"headerlock: {TESTS} recordings written, 0 unchanged"])
