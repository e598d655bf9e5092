"""Accurate verdicts on a tool reorder (issue 27): a flake says so and writes no pending
file (accepting it would lock in one hash seed's order); an order the user fixed (now
sorted by name, the recording's not) says "the order changed; re-record or accept" and
writes the pending file."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from headerlock.errors import WireMismatch
from headerlock.formats.pending import pending_path
from headerlock.wire import lock

URL = "http://127.0.0.1:9/v1/chat/completions"  # never reached: the lock answers


def send(names: list[str]) -> None:
    tools = [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
        for n in names
    ]
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": tools}
    httpx.post(URL, json=body)


def replayed(path: Path, recorded: list[str], sent: list[str], *, pin: bool) -> str:
    """Record ``recorded``, replay sending ``sent``: the mismatch's message. (Pinned: an
    unpinned recording of this lock keeps the tool names, not their order.)"""
    with lock(path, mode="record", pin=pin, script=[{"text": "ok"}]):
        send(recorded)
    with pytest.raises(WireMismatch) as failure, lock(path, mode="replay", pending=True):
        send(sent)
    return str(failure.value)


def test_a_reorder_that_is_not_sorted_is_a_flake_with_no_pending_file(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    message = replayed(path, ["search", "fetch", "summarize"], ["summarize", "search", "fetch"],
                       pin=True)  # fmt: skip
    assert "an order flake, not a change to re-record, so no pending file is written" in message
    assert "headerlock flakes" in message
    assert "re-record or accept" not in message and "headerlock review" not in message
    assert not pending_path(path).exists()


def test_a_reorder_into_the_sorted_order_is_a_change_to_re_record_or_accept(
    tmp_path: Path,
) -> None:
    path = tmp_path / "agent.yaml"
    message = replayed(path, ["search", "fetch", "summarize"], ["fetch", "search", "summarize"],
                       pin=True)  # fmt: skip
    assert "the order changed; re-record or accept" in message
    assert "flake" not in message
    assert pending_path(path).exists()
    assert str(pending_path(path)) in message


def test_a_sorted_recording_sent_unsorted_is_a_flake(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    message = replayed(path, ["fetch", "search"], ["search", "fetch"], pin=True)
    assert "an order flake" in message
    assert not pending_path(path).exists()


PYTEST_AGENT = """
import os

import httpx
import pytest


@pytest.mark.headerlock_pin
@pytest.mark.headerlock_wire(script=[{"text": "ok"}])
def test_agent(headerlock_wire):
    names = os.environ.get("AGENT_TOOLS", "search,fetch,summarize").split(",")
    tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
             for n in names]
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": tools}
    httpx.post("http://127.0.0.1:9/v1/chat/completions", json=body)
"""


def test_a_pytest_order_flake_names_its_test_and_writes_no_pending_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENT_TOOLS", raising=False)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_agent=PYTEST_AGENT)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=1)
    monkeypatch.setenv("AGENT_TOOLS", "summarize,search,fetch")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "Find it with `headerlock flakes test_agent.py::test_agent`" in text
    assert "re-record it: pytest --snapshot-update test_agent.py::test_agent" in text
    assert not list(pytester.path.rglob("*.new"))
