"""Hostile corpus, ``app: wire`` fixtures (issue 19): ``entry:`` goes through the guard of
``plugins:`` (project code only, on record, replay and plain pytest), and an entry call is
bounded by ``turn_timeout`` (the blocked agent thread never keeps the process alive)."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from tests.hostile import PYTEST, cli, no_traceback, one_line_error, pytest_env, tree, write

pytest.importorskip("httpx2")

AGENT = """\
import asyncio, os, time
from os import system as reexported

def agent(prompt):
    if os.environ.get("HX_HANG"):
        time.sleep(1000)
    return "done"

async def agent_async(prompt):
    if os.environ.get("HX_HANG"):
        await asyncio.sleep(1000)
    return "done"
"""
PROMPTS = {
    "os:system": "touch pwned",
    "builtins:exec": "open('pwned', 'w').close()",
    "subprocess:getoutput": "touch pwned",
    "agent:reexported": "touch pwned",
}


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
        else "is a built-in function"
    )
    assert f"config.entry: entry {entry!r} {reason}, not project code" in line, line
    assert "fixtures/case.yaml" in line
    assert not (root / "pwned").exists()
    assert tree(root) == before


@pytest.mark.parametrize("entry", ["os:system", "builtins:exec"])
def test_a_stdlib_or_builtin_entry_is_refused_by_plain_pytest(tmp_path: Path, entry: str) -> None:
    root = project(tmp_path, entry)
    result = pytest_in(root)
    assert result.returncode != 0, result.stdout
    assert f"entry {entry!r} is a built-in function, not project code" in result.stdout
    assert not (root / "pwned").exists()


def test_the_entry_guard_matches_the_plugin_guard() -> None:
    from headerlock.errors import ConfigError
    from headerlock.testing.wire.agent_entry import resolve_entry

    for spec in ("os:system", "builtins:exec", "subprocess:run", "pathlib:Path"):
        with pytest.raises(ConfigError, match=f"entry '{spec}' (is a built-in|comes from the)"):
            resolve_entry(spec)
    assert callable(resolve_entry("headerlock.demo.wire_agent:run"))


@pytest.mark.parametrize("entry", ["agent:agent", "agent:agent_async"])
@pytest.mark.parametrize("command", ["record", "replay"])
def test_a_blocking_entry_fails_at_its_turn_timeout(
    tmp_path: Path, command: str, entry: str
) -> None:
    root = project(tmp_path, entry, extra="  turn_timeout: 2\n")
    before = tree(root / "recordings")
    started = time.monotonic()
    result = cli(root, command, HX_HANG="1", timeout=60)
    took = time.monotonic() - started
    no_traceback(result)
    assert result.returncode == 1, result.stdout + result.stderr
    assert took < 2 + 8, f"{command} took {took:.1f}s against a 2s turn_timeout"
    assert (
        f"scenario 'case': turn 1: entry {entry!r} did not return within 2s (turn_timeout)"
        in result.stdout
    ), result.stdout
    assert tree(root / "recordings") == before, "the old recording is kept"


def test_a_blocking_entry_fails_its_pytest_item_at_the_timeout(tmp_path: Path) -> None:
    root = project(tmp_path, "agent:agent", extra="  turn_timeout: 2\n")
    started = time.monotonic()
    result = pytest_in(root, "--durations=0", "-vv", HX_HANG="1")
    took = time.monotonic() - started
    assert result.returncode == 1, result.stdout
    assert "entry 'agent:agent' did not return within 2s (turn_timeout)" in result.stdout
    item = re.search(r"([\d.]+)s call +fixtures/case.yaml::replay", result.stdout)
    assert item is not None and float(item[1]) < 2 + 3, result.stdout
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
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert "turn_timeout" in readme and "default 300" in readme
