"""Hostile corpus, ``app: wire`` fixtures (issue 19): ``entry:`` goes through the guard of
``plugins:`` (project code only: no built-in, standard-library or installed package's
callable, on record, replay and plain pytest), and an entry call is bounded by
``turn_timeout`` (the blocked agent thread never keeps the process alive, and the guards
never run the timed-out scenario again)."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from tests import docs
from tests.hostile import PYTEST, cli, no_traceback, one_line_error, pytest_env, tree, write

pytest.importorskip("httpx2")

AGENT = """\
import asyncio, os, time
from os import system as reexported
from yaml import unsafe_load as reexported_yaml

def agent(prompt):
    if os.environ.get("HX_HANG"):
        time.sleep(1000)
    return "done"

async def agent_async(prompt):
    if os.environ.get("HX_HANG"):
        await asyncio.sleep(1000)
    return "done"
"""
UNSAFE = "\"!!python/object/apply:os.system ['touch pwned']\""
"""A prompt that runs ``touch pwned`` when PyYAML's unsafe loader reads it."""
PROMPTS = {
    "os:system": "touch pwned",
    "builtins:exec": "open('pwned', 'w').close()",
    "subprocess:getoutput": "touch pwned",
    "agent:reexported": "touch pwned",
    "yaml:unsafe_load": UNSAFE,
    "agent:reexported_yaml": UNSAFE,
}
INSTALLED = "comes from an installed package (headerlock.demo is the one allowed)"


def fixture(entry: str, prompt: str = "hi", extra: str = "") -> str:
    return f"app: wire\npin: true\nconfig:\n  entry: {entry}\n{extra}steps:\n  - prompt: {prompt}\nmodel: []\n"


def project(root: Path, entry: str = "agent:agent", extra: str = "") -> Path:
    """A project whose ``case`` scenario calls ``entry``, recorded with a harmless entry."""
    write(root, {"agent.py": AGENT, "fixtures/case.yaml": fixture("agent:agent", extra=extra)})
    recorded = cli(root, "record")  # its guards fail (the agent sends no request to pin)
    assert "[1/1] recorded case" in recorded.stdout, recorded.stdout + recorded.stderr
    (root / "fixtures" / "case.yaml").write_text(fixture(entry, PROMPTS.get(entry, "hi"), extra))
    return root


def pytest_in(root: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    (root / "pytest.ini").write_text("[pytest]\ntestpaths = fixtures\naddopts = -p no:randomly\n")
    return subprocess.run(
        [*PYTEST, "-q", *args],
        cwd=root,
        env=pytest_env(**extra),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("entry", list(PROMPTS))
@pytest.mark.parametrize("command", ["record", "replay"])
def test_a_stdlib_or_builtin_entry_is_refused_on_the_command_line(
    tmp_path: Path, command: str, entry: str
) -> None:
    root = project(tmp_path, entry)
    before = tree(root)
    result = cli(root, command)
    assert result.returncode == 2, result.stdout + result.stderr
    line = one_line_error(result)
    reason = (
        "comes from the Python standard library"
        if "subprocess" in entry
        else INSTALLED
        if "yaml" in entry
        else "is a built-in function"
    )
    assert f"config.entry: entry {entry!r} {reason}, not project code" in line, line
    assert "fixtures/case.yaml" in line
    assert not (root / "pwned").exists()
    assert tree(root) == before


@pytest.mark.parametrize("entry", ["os:system", "builtins:exec", "yaml:unsafe_load"])
def test_a_stdlib_or_builtin_entry_is_refused_by_plain_pytest(tmp_path: Path, entry: str) -> None:
    root = project(tmp_path, entry)
    result = pytest_in(root)
    assert result.returncode != 0, result.stdout
    reason = INSTALLED if "yaml" in entry else "is a built-in function"
    assert f"entry {entry!r} {reason}, not project code" in result.stdout
    assert not (root / "pwned").exists()


def test_the_entry_guard_matches_the_plugin_guard() -> None:
    from headerlock.errors import ConfigError, PluginError
    from headerlock.runtime.plugins import resolve_plugin
    from headerlock.testing.wire.agent_entry import resolve_entry

    for spec in ("os:system", "builtins:exec", "subprocess:run", "pathlib:Path"):
        with pytest.raises(ConfigError, match=f"entry '{spec}' (is a built-in|comes from the)"):
            resolve_entry(spec)
    for spec in ("yaml:unsafe_load", "pytest:main", "httpx2:post"):
        with pytest.raises(ConfigError, match=re.escape(f"entry '{spec}' {INSTALLED}")):
            resolve_entry(spec)
        with pytest.raises(PluginError, match=re.escape(f"plugin '{spec}' {INSTALLED}")):
            resolve_plugin(spec)
    assert callable(resolve_entry("headerlock.demo.wire_agent:run"))


@pytest.mark.parametrize("entry", ["agent:agent", "agent:agent_async"])
@pytest.mark.parametrize("command", ["record", "replay"])
def test_a_blocking_entry_fails_at_its_turn_timeout(
    tmp_path: Path, command: str, entry: str
) -> None:
    root = project(tmp_path, entry, extra="  turn_timeout: 3\n")
    before = tree(root / "recordings")
    started = time.monotonic()
    result = cli(root, command, HX_HANG="1", timeout=60)
    took = time.monotonic() - started
    no_traceback(result)
    assert result.returncode == 1, result.stdout + result.stderr
    # the blocked agent thread does not keep the process alive (the run ends long before
    # the 60 s bound: the slack is the interpreter's start on a loaded machine), and one
    # timeout, never a second: the guards do not run the timed-out pin again
    assert took < 3 + 25, f"{command} took {took:.1f}s against a 3s turn_timeout"
    failure = f"scenario 'case': turn 1: entry {entry!r} did not return within 3s (turn_timeout)"
    assert result.stdout.count(failure) == 1, result.stdout
    assert result.stdout.count("did not return within") == 1, result.stdout
    assert "its run did not complete (above), so it is not run again" in result.stdout
    assert tree(root / "recordings") == before, "the old recording is kept"


def test_a_blocking_entry_fails_its_pytest_item_at_the_timeout(tmp_path: Path) -> None:
    root = project(tmp_path, "agent:agent", extra="  turn_timeout: 2\n")
    started = time.monotonic()
    result = pytest_in(root, "--durations=0", "-vv", HX_HANG="1")
    took = time.monotonic() - started
    assert result.returncode == 1, result.stdout
    assert "entry 'agent:agent' did not return within 2s (turn_timeout)" in result.stdout
    item = re.search(r"([\d.]+)s call +fixtures/case.yaml::replay", result.stdout)
    # it ends at the timeout, far before the agent's 1000 s sleep (slack for a loaded machine)
    assert item is not None and float(item[1]) < 2 + 20, result.stdout
    # the guards item does not run the timed-out pin again (a second timeout)
    assert "its run did not complete (above), so it is not run again" in result.stdout
    assert not re.search(r"[\d.]+s call +fixtures::headerlock-guards", result.stdout)
    assert took < 60, "the abandoned agent thread does not keep pytest alive"


@pytest.mark.parametrize("value", ["0", "-1", ".nan", ".inf", "soon"])
def test_a_bad_turn_timeout_is_refused(tmp_path: Path, value: str) -> None:
    root = project(tmp_path)
    (root / "fixtures" / "case.yaml").write_text(
        fixture("agent:agent", extra=f"  turn_timeout: {value}\n")
    )
    result = cli(root, "replay")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "fixtures/case.yaml:5: config.turn_timeout:" in one_line_error(result)


def test_turn_timeout_defaults_to_300_seconds() -> None:
    from headerlock.testing.wire.agent_entry import TURN_TIMEOUT
    from headerlock.testing.wire.driver import WireAppConfig

    assert WireAppConfig(entry="agent:agent").turn_timeout == TURN_TIMEOUT == 300.0
    readme = docs.text()
    assert "turn_timeout" in readme and "default 300" in readme


LEAKY = """\
import os

import openai

KEY = "sk-agent-key-ffffffffffff6666"


def agent(prompt):
    client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key=KEY, max_retries=0)
    reply = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": prompt}]
    )
    if os.environ.get("HX_CRASH"):
        raise RuntimeError(f"crashed holding {KEY}")
    return reply.choices[0].message.content
"""


@pytest.mark.parametrize("command", ["record", "replay"])
def test_an_agent_error_message_never_prints_the_key_its_sdk_sent(
    tmp_path: Path, command: str
) -> None:
    pytest.importorskip("openai")
    key = "sk-agent-key-ffffffffffff6666"
    case = "app: wire\npin: true\nconfig:\n  entry: leaky:agent\nsteps:\n  - prompt: hi\n"
    write(tmp_path, {"leaky.py": LEAKY, "fixtures/case.yaml": f"{case}model:\n  - text: hello\n"})
    recorded = cli(tmp_path, "record")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    before = tree(tmp_path / "recordings")
    result = cli(tmp_path, command, HX_CRASH="1")
    no_traceback(result)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "the agent leaky:agent raised at turn 1: RuntimeError: crashed holding <<secret>>" in (
        result.stdout
    )
    assert key not in result.stdout + result.stderr
    assert tree(tmp_path / "recordings") == before
