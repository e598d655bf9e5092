"""Scrub, tokenize and restore."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from headerlock.agent import TOOL_ORDER_REST, ToolSchema, order_tools
from headerlock.errors import ConfigError, RecordingError
from headerlock.formats import placeholders, secrets
from headerlock.formats.recording import load_recording
from headerlock.formats.scrub import (
    find_secret,
    scrub_events,
    scrub_transcript,
)
from headerlock.formats.secrets import (
    MIN_SECRET_LENGTH,
    REDACT_ENV_VAR,
    redact_env,
    secret_env,
    secret_values,
)
from headerlock.runtime.header import RequestHeader
from headerlock.testing.scenario.pins import restore_header
from headerlock.testing.scenario.project import Project

FIXTURES = Path(__file__).parents[2] / "fixtures"
RECORDINGS = Path(__file__).parents[2] / "recordings"


def raw_runs() -> list[tuple[str, list[dict[str, Any]], str]]:
    """Unscrubbed events of every bundled spine/stdio scenario (replayed, no network)."""
    project = Project(FIXTURES, RECORDINGS)
    runs = []
    for scenario in project.scenarios():
        if scenario.app == "acp":
            continue
        _, output = asyncio.run(project.replay(scenario))
        runs.append((scenario.name, output.events, output.workspace))
    return runs


RUNS = raw_runs()


def test_placeholders_ids_times_and_paths() -> None:
    events: list[dict[str, Any]] = [
        {"seq": 1, "type": "request/header", "data": {"header": {"config": {}, "system": "S", "tools": [{"name": "a"}]}, "reason": "initial"}},
        {"seq": 2, "type": "assistant/message", "data": {"content": "", "tool_calls": [{"id": "call_x9", "name": "a", "arguments": {"p": "/ws/f"}}]}},
        {"seq": 3, "type": "tool/result", "data": {"id": "call_x9", "name": "a", "content": "read /ws/f"}},
        {"seq": 4, "type": "request/header-delta", "data": {"tools": {"added": [{"name": "b", "description": "B"}], "removed": ["a"]}, "system": {"keep_start": 0, "keep_end": 0, "insert": ["new"]}}},
        {"seq": 5, "type": "turn/end", "data": {"turn": 1, "reason": {"kind": "stop", "step": 1}, "elapsed_ms": 17}},
    ]  # fmt: skip
    scrubbed = scrub_events(events, workspace="/ws")
    assert scrubbed[0]["data"]["header"] == {
        "config": {},
        "system": placeholders.SYSTEM,
        "tools": placeholders.TOOLS,
    }
    assert scrubbed[1]["data"]["tool_calls"][0] == {
        "id": "<<id:1>>",
        "name": "a",
        "arguments": {"p": "<<workspace>>/f"},
    }
    assert scrubbed[2]["data"] == {"id": "<<id:1>>", "name": "a", "content": "read <<workspace>>/f"}
    assert scrubbed[3]["data"] == {
        "tools": {"added": ["b"], "removed": ["a"]},
        "system": {"keep_start": 0, "keep_end": 0, "insert": placeholders.SYSTEM},
    }
    assert scrubbed[4]["data"]["elapsed_ms"] == 0
    assert [e["seq"] for e in scrubbed] == [1, 2, 3, 4, 5]
    assert events[0]["data"]["header"]["system"] == "S", "the input is not modified"
    pinned = scrub_events(events, pinned=True, workspace="/ws")
    assert pinned[0]["data"]["header"]["tools"] == [{"name": "a"}]
    assert scrub_transcript([{"toolCallId": "call_x9", "cwd": "/ws"}], events, workspace="/ws") == [
        {"toolCallId": "<<id:1>>", "cwd": "<<workspace>>"}
    ]


def test_scrub_is_idempotent_on_real_runs() -> None:
    assert RUNS
    for name, events, workspace in RUNS:
        for pinned in (False, True):
            once = scrub_events(events, pinned=pinned, workspace=workspace)
            assert scrub_events(once, pinned=pinned, workspace=workspace) == once, name


@settings(max_examples=40)
@given(st.sampled_from(RUNS), st.randoms(use_true_random=False))
def test_scrub_is_idempotent_on_mutated_runs(run: Any, rng: Any) -> None:
    _, events, workspace = run
    mutated = [dict(e) for e in events]
    rng.shuffle(mutated)
    once = scrub_events(mutated, workspace=workspace)
    assert scrub_events(once, workspace=workspace) == once


def test_restore_fills_the_placeholders_back_with_the_pinned_header() -> None:
    tools = (ToolSchema("read", "R"), ToolSchema("bash", "B"), ToolSchema("todo_write", "T"))
    for policy in (None, ["todo_write", TOOL_ORDER_REST]):
        header = RequestHeader({"model": "m"}, "system text", order_tools(tools, policy))
        scrubbed = scrub_events(
            [{"seq": 1, "type": "request/header", "data": {"header": header.to_data()}}]
        )[0]["data"]["header"]
        assert (scrubbed["system"], scrubbed["tools"]) == ("<<system>>", "<<tools>>")
        restored = restore_header(header, policy)
        assert scrubbed["config"] == header.to_data()["config"]  # config is kept as sent
        assert restored == header
    # a member of the class with its own tool_order gets the pin's tools in that order
    pin = RequestHeader({"model": "m"}, "s", order_tools(tools, None))
    member = restore_header(pin, ["todo_write", TOOL_ORDER_REST])
    assert [t.name for t in member.tools] == ["todo_write", "bash", "read"]


# -- secrets ---------------------------------------------------------------------------

KEYS = {
    "HEADERLOCK_API_KEY": "hl-secret-0123456789",
    "OPENAI_API_KEY": "sk-openai-0123456789",
    "ANTHROPIC_API_KEY": "sk-ant-0123456789",
}


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv(REDACT_ENV_VAR, raising=False)
    # a Bedrock test earlier in this process left botocore's signing secrets behind
    monkeypatch.setattr(secrets, "_signing", [])
    return KEYS


def leaky_events(*values: str) -> list[dict[str, Any]]:
    joined = " ".join(values)
    return [
        {"seq": 1, "type": "request/header", "data": {"header": {"config": {"model": f"m {joined}"}, "system": f"S {joined}", "tools": [{"name": "a", "description": joined}]}, "reason": "initial"}},
        {"seq": 2, "type": "user/message", "data": {"content": f"my key is {joined}", joined: "as a key"}},
        {"seq": 3, "type": "tool/result", "data": {"id": "c1", "name": "a", "content": f"env: {joined}", "error": True}},
        {"seq": 4, "type": "turn/end", "data": {"turn": 1, "reason": {"kind": "error", "step": 1, "message": f"denied for {joined}"}}},
    ]  # fmt: skip


@pytest.mark.parametrize("pinned", [False, True])
def test_credentials_become_secret_placeholders_in_every_field(
    keys: dict[str, str], pinned: bool
) -> None:
    events = leaky_events(*keys.values())
    scrubbed = scrub_events(events, pinned=pinned)
    text = repr(scrubbed)
    assert not any(value in text for value in keys.values())
    assert scrubbed[1]["data"]["content"] == "my key is <<secret>> <<secret>> <<secret>>"
    assert "<<secret>> <<secret>> <<secret>>" in scrubbed[1]["data"]
    assert scrubbed[3]["data"]["reason"]["message"] == "denied for <<secret>> <<secret>> <<secret>>"
    assert scrubbed[0]["data"]["header"]["config"]["model"].startswith("m <<secret>>")
    if pinned:
        assert scrubbed[0]["data"]["header"]["system"].startswith("S <<secret>>")
    assert scrub_events(scrubbed, pinned=pinned) == scrubbed, "idempotent"
    transcript = scrub_transcript([{"text": keys["OPENAI_API_KEY"]}], events, workspace=None)
    assert transcript == [{"text": "<<secret>>"}]


def test_short_and_empty_values_are_not_secrets(
    keys: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "short")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    assert len("short") < MIN_SECRET_LENGTH
    assert secret_values() == (keys["HEADERLOCK_API_KEY"],)
    assert scrub_events(leaky_events("short"))[1]["data"]["content"] == "my key is short"


def test_listed_variables_are_secrets(
    keys: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_TOKEN", "my-token-0123456789")
    monkeypatch.setenv("DB_PASSWORD", "db-password-0123")
    content = scrub_events(leaky_events("my-token-0123456789 db-password-0123"))[1]["data"]
    assert content["content"] == "my key is my-token-0123456789 db-password-0123"
    monkeypatch.setenv(REDACT_ENV_VAR, "MY_TOKEN, DB_PASSWORD")
    content = scrub_events(leaky_events("my-token-0123456789 db-password-0123"))[1]["data"]
    assert content["content"] == "my key is <<secret>> <<secret>>"
    monkeypatch.delenv(REDACT_ENV_VAR)
    undo = redact_env(["MY_TOKEN"])
    try:
        assert secret_env()["my-token-0123456789"] == "MY_TOKEN"
    finally:
        undo()
    assert "my-token-0123456789" not in secret_env()
    with pytest.raises(ConfigError, match="--redact-env: 'A=B' is not an environment variable"):
        redact_env(["TOKEN A=B"])


def test_a_recording_that_holds_a_secret_is_refused_without_showing_it(
    keys: dict[str, str], tmp_path: Path
) -> None:
    text = (RECORDINGS / "tool-turn.yaml").read_text()
    assert "Buy milk." in text
    path = tmp_path / "tool-turn.yaml"
    path.write_text(text.replace("Buy milk.", f"Buy milk. {keys['OPENAI_API_KEY']}", 1))
    with pytest.raises(RecordingError) as info:
        load_recording(path)
    message = str(info.value)
    assert "holds the value of OPENAI_API_KEY; a secret must never be committed" in message
    assert message.startswith(f"{path}: events[")
    assert keys["OPENAI_API_KEY"] not in message
    assert find_secret({"a": [{keys["OPENAI_API_KEY"]: 1}]}) == ("a[0], a key", "OPENAI_API_KEY")


PYTEST_PROJECT_PLUGIN = """
import os
from headerlock.agent import ToolSchema

def plugin(ctx):
    ctx.tools.register(ToolSchema("env", "Show a variable."), lambda a: os.environ["MY_TOKEN"])
"""


def test_the_ini_option_lists_secrets_for_pytest(tmp_path: Path) -> None:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "token.yaml").write_text(
        "pin: true\nconfig: {model: demo}\nplugins: [hl_env_tool:plugin]\nsteps: [{prompt: go}]\n"
        "model: [{tool_calls: [{name: env}]}, {text: ok}]\n"
    )
    (tmp_path / "hl_env_tool.py").write_text(PYTEST_PROJECT_PLUGIN)
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\ntestpaths = fixtures\nheaderlock_redact_env = MY_TOKEN\n"
    )
    env = {**os.environ, "MY_TOKEN": "my-token-0123456789"}
    env.pop(REDACT_ENV_VAR, None)
    command = [sys.executable, "-P", "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    for extra in (["--snapshot-update"], []):
        result = subprocess.run(
            [*command, *extra], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, result.stdout + result.stderr
    written = (tmp_path / "recordings" / "token.yaml").read_text()
    assert "my-token-0123456789" not in written
    assert 'content: "<<secret>>"' in written
