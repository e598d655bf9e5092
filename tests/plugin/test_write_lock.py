"""One lock and one staleness base for every writer of a recording, raced for real.

A ``pytest --snapshot-update`` process and ``headerlock review --accept`` processes write
the same recordings. Each of the twenty tests of the update waits at a synchronisation
point (a file the race creates) after its session began; then the accept of its
recording runs first, or after the update wrote, or both go at once. Whatever the order,
one of the two results is on disk whole, and the other writer failed naming the
recording.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import openai
import pytest

from headerlock import wire
from headerlock.errors import RecordingRunError
from headerlock.formats.pending import pending_path, read_pending
from tests.model_server import ModelServer

RACES = 20
AGENT = """
import os
import time
from pathlib import Path

import openai
import pytest


CLASSES = [
    pytest.param(n, marks=[pytest.mark.headerlock_pin, pytest.mark.headerlock_wire(header_class=f"c{n}")])
    for n in range(20)
]


@pytest.mark.parametrize("n", CLASSES)
def test_race(headerlock_wire, n):
    gate = os.environ.get("RACE_GATE")
    if gate:  # the synchronisation point: the session began, the accept may start
        Path(gate, f"started-{n}").touch()
        while not Path(gate, f"go-{n}").exists():
            time.sleep(0.005)
    client = openai.OpenAI(base_url=os.environ["AGENT_BASE_URL"], api_key="sk-test-not-a-real-key-0001", max_retries=0)
    messages = [{"role": "system", "content": os.environ["SYSTEM"]}, {"role": "user", "content": "hi"}]
    client.chat.completions.create(model="gpt-test", messages=messages)
"""
HEADERLOCK = str(Path(sys.executable).with_name("headerlock"))


def _project(
    pytester: pytest.Pytester,
    model_server: ModelServer,
    monkeypatch: pytest.MonkeyPatch,
    agent: str,
    *,
    replies: int,
) -> None:
    """A user's project of ``tests/test_agent.py`` (``agent``), its model ``replies`` times
    "ok", no race gate set."""
    pytester.makeini("[pytest]\ntestpaths = tests\naddopts = -p no:randomly -p no:cacheprovider\n")
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_agent.py").write_text(agent)
    model_server.script([{"text": "ok"}] * replies)
    monkeypatch.setenv("AGENT_BASE_URL", model_server.base_url)
    monkeypatch.delenv("RACE_GATE", raising=False)


def _recording(project: Path, n: int) -> Path:
    return project / "recordings" / "tests" / "test_agent" / f"test_race%5b{n}%5d.yaml"


def _wait(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.005)


def _written(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while "You are the updated prompt." not in path.read_text(encoding="utf-8"):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{path} was never updated"
        time.sleep(0.005)


@pytest.mark.slow
def test_a_concurrent_accept_and_update_leave_one_whole_result_and_the_other_fails(
    pytester: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(pytester, model_server, monkeypatch, AGENT, replies=200)
    monkeypatch.setenv("SYSTEM", "You are the first prompt.")
    pytester.runpytest_inprocess("--snapshot-update").assert_outcomes(passed=RACES)
    monkeypatch.setenv("SYSTEM", "You are the accepted prompt.")
    pytester.runpytest_subprocess().assert_outcomes(failed=RACES)  # a pending file each
    accepted = {
        n: read_pending(pending_path(_recording(pytester.path, n))).text for n in range(RACES)
    }

    gate = pytester.path / "gate"
    gate.mkdir()
    env = {**os.environ, "RACE_GATE": str(gate), "SYSTEM": "You are the updated prompt."}
    update = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--snapshot-update", "-rA", "-q"],
        cwd=pytester.path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    accepts: dict[int, subprocess.CompletedProcess[str]] = {}
    for n in range(RACES):
        _wait(gate / f"started-{n}", update)
        path = _recording(pytester.path, n)
        start = [HEADERLOCK, "review", "--accept", path.relative_to(pytester.path).as_posix()]
        if n % 3 == 1:  # the update writes first: the accept starts once it has
            (gate / f"go-{n}").touch()
            _written(path, update)
        racer = subprocess.Popen(
            start, cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        if n % 3 == 0:  # the accept writes first: the update goes on once it has
            racer.wait(timeout=60)
        (gate / f"go-{n}").touch()  # n % 3 == 2: both at once
        out, err = racer.communicate(timeout=60)
        accepts[n] = subprocess.CompletedProcess(racer.args, racer.returncode, out, err)
    output, _ = update.communicate(timeout=120)

    winners = {"accept": 0, "update": 0}
    for n, accept in accepts.items():
        path = _recording(pytester.path, n)
        shown = path.relative_to(pytester.path).as_posix()
        text = path.read_text(encoding="utf-8")
        test_failed = any(  # its teardown wrote, so a refused write is an error there
            line.startswith(("FAILED ", "ERROR ")) and f"::test_race[{n}] " in line
            for line in output.splitlines()
        )
        if accept.returncode == 0:  # the accept wrote: the update wrote nothing and failed
            winners["accept"] += 1
            on_disk = [w for w in ("first", "accepted", "updated") if f"the {w} prompt" in text]
            assert text == accepted[n], (n, on_disk, accept.stdout, output)
            assert test_failed, (n, output)
            assert f"{shown}: changed on disk since this session started" in output
        else:  # the update wrote: the accept was refused as stale, its file kept
            winners["update"] += 1
            assert accept.returncode == 1, accept.stderr
            assert "stale" in accept.stderr and shown in accept.stderr, accept.stderr
            assert "You are the updated prompt." in text, n
            assert not test_failed, (n, output)
            assert pending_path(path).exists()
    assert update.returncode == (1 if winners["accept"] else 0), output
    assert winners["accept"] and winners["update"], winners  # both orders were raced


def test_a_recording_lock_writes_nothing_over_a_recording_changed_while_it_ran(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "chat.yaml"
    model_server.script([{"text": "ok"}])
    client = openai.OpenAI(
        base_url=model_server.base_url, api_key="sk-test-not-a-real-key-0001", max_retries=0
    )
    recording = wire.lock(path, mode="record")
    recording.__enter__()
    client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "hi"}])
    path.write_text("another writer's bytes\n")  # e.g. an accept, meanwhile
    with pytest.raises(RecordingRunError, match="changed on disk since this lock opened"):
        recording.__exit__(None, None, None)
    assert path.read_text() == "another writer's bytes\n"


GATED_AT_TEARDOWN = """
import os
import time
from pathlib import Path

import openai
import pytest


@pytest.fixture
def gate():
    yield
    gate = os.environ.get("RACE_GATE")
    if gate:  # the recording is staged, not yet written: another session may write it now
        Path(gate, "staged").touch()
        while not Path(gate, "go").exists():
            time.sleep(0.005)


@pytest.mark.headerlock_pin
def test_agent(gate, headerlock_wire):
    client = openai.OpenAI(base_url=os.environ["AGENT_BASE_URL"], api_key="sk-test-not-a-real-key-0001", max_retries=0)
    messages = [{"role": "system", "content": "You are the same prompt."}, {"role": "user", "content": "hi"}]
    client.chat.completions.create(model="gpt-test", messages=messages)
"""


def test_two_updates_that_write_the_same_bytes_both_pass(
    pytester: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recording another session wrote after this one staged its own is not a stale
    base when it holds this session's very bytes: nobody's update is lost, so nothing is
    refused."""
    _project(pytester, model_server, monkeypatch, GATED_AT_TEARDOWN, replies=4)
    gate = pytester.path / "gate"
    gate.mkdir()
    update = [sys.executable, "-m", "pytest", "--snapshot-update", "-q"]
    first = subprocess.Popen(
        update, cwd=pytester.path, env={**os.environ, "RACE_GATE": str(gate)},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    _wait(gate / "staged", first)  # staged while there was no recording
    second = subprocess.run(update, cwd=pytester.path, capture_output=True, text=True)
    assert second.returncode == 0, second.stdout + second.stderr
    path = pytester.path / "recordings" / "tests" / "test_agent" / "test_agent.yaml"
    written = path.read_bytes()
    (gate / "go").touch()
    output, _ = first.communicate(timeout=60)
    assert first.returncode == 0, output
    assert "changed on disk" not in output
    assert path.read_bytes() == written
