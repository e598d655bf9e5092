"""Text from recordings and models reaches the terminal with control and bidi characters
escaped (issue 32): the pytest report (terminal and junit XML) and the review diff."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from headerlock.formats.pending import write_pending
from tests.hostile import HEADERLOCK, PINNED, cli, write
from tests.model_server import ModelServer
from tests.plugin.test_review import _read_until

AGENT = """
import os

import openai
import pytest


@pytest.mark.headerlock_pin
def test_agent(headerlock_wire):
    client = openai.OpenAI(base_url=os.environ["AGENT_BASE_URL"], api_key="sk-test-not-a-real-key-0001", max_retries=0)
    messages = [{"role": "system", "content": os.environ["SYSTEM"]}, {"role": "user", "content": "hi"}]
    client.chat.completions.create(model="gpt-test", messages=messages)
"""


def test_a_mismatch_report_escapes_what_the_model_request_held(
    pytester: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\ntestpaths = tests\naddopts = -p no:randomly -p no:cacheprovider\n")
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_agent.py").write_text(AGENT)
    model_server.script([{"text": "ok"}] * 10)
    monkeypatch.setenv("AGENT_BASE_URL", model_server.base_url)
    monkeypatch.setenv("SYSTEM", "You are plain.")
    pytester.runpytest_inprocess("--snapshot-update").assert_outcomes(passed=1)
    monkeypatch.setenv("SYSTEM", "You are \u202eliam\x1b]0;x\x07.")
    result = pytester.runpytest_inprocess("--junitxml=report.xml", "-rA")
    result.assert_outcomes(failed=1)
    shown = "\n".join(result.outlines + result.errlines)
    xml = (pytester.path / "report.xml").read_text(encoding="utf-8")
    for text in (shown, xml):
        assert "\u202e" not in text and "\x1b" not in text and "\x07" not in text
    assert "\\u202eliam\\x1b]0;x\\x07." in shown  # the excerpt of the sent bytes


def test_the_review_diff_escapes_what_the_recording_holds(tmp_path: Path) -> None:
    write(tmp_path, {"fixtures/z-pin.yaml": PINNED})
    assert cli(tmp_path, "record").returncode == 0
    recording = tmp_path / "recordings" / "z-pin.yaml"
    text = recording.read_text()
    assert "hello" in text
    write_pending(recording, text.replace("hello", "hello \u202eevil"))
    leader, follower = os.openpty()
    process = subprocess.Popen(
        [*HEADERLOCK, "review"], cwd=tmp_path, stdin=follower, stdout=follower,
        stderr=follower, close_fds=True,
    )  # fmt: skip
    os.close(follower)
    seen = bytearray()
    try:
        _read_until(leader, b"q quit > ", seen)
        os.write(leader, b"s")
        _read_until(leader, b"not reviewed", seen)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    screen = seen.decode()
    assert "hello \\u202eevil" in screen
    assert "\u202e" not in screen
