"""Hostile corpus, command line (issue 19): a plugin that exits, raises or recurses, Ctrl-C,
bad recordings, a symlinked recording and ``HEADERLOCK_TIMEOUT``; every case ends with its
documented exit code and no traceback, and keeps the old recording bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile import (
    PINNED,
    cli,
    interrupt,
    no_traceback,
    one_line_error,
    scenario as fixture,
    start_cli,
    tree,
    wait_for,
    write,
)

PLUGINS = """\
import asyncio, os, sys, time

def _on():
    return bool(os.environ.get("HX_CRASH"))

def exits(ctx):
    if _on():
        sys.exit(0)

async def exits_async(ctx):
    if _on():
        sys.exit(0)

def raises(ctx):
    if _on():
        raise RuntimeError("boom")

def recurses(ctx):
    def deeper(n):
        return deeper(n + 1) + 1
    if _on():
        deeper(0)

def _started():
    with open("started", "w") as marker:
        marker.write(str(os.getpid()))

def blocks(ctx):
    if _on():
        _started()
        time.sleep(1000)

async def blocks_async(ctx):
    if _on():
        _started()
        await asyncio.sleep(1000)
"""
CRASHING = ["exits", "exits_async", "raises", "recurses"]
PERSONA = "config: {model: demo}"


def crash_project(root: Path, plugins: list[str]) -> Path:
    """One scenario per plugin (``a-<plugin>``), then a pinned ``z-pin``, all recorded."""
    files = {"plug.py": PLUGINS, "fixtures/z-pin.yaml": PINNED}
    for name in plugins:
        text = fixture(f"plug:{name}").replace(PERSONA, "config: {model: demo, persona: Be brief.}")
        files[f"fixtures/a-{name.replace('_', '-')}.yaml"] = text
    write(root, files)
    result = cli(root, "record")
    assert result.returncode == 0, result.stdout + result.stderr
    return root


@pytest.mark.parametrize("command", ["replay", "record"])
def test_a_plugin_that_exits_raises_or_recurses_fails_its_scenario_only(
    tmp_path: Path, command: str
) -> None:
    project = crash_project(tmp_path, CRASHING)
    before = tree(project / "recordings")
    result = cli(project, command, HX_CRASH="1")
    no_traceback(result)
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    for name, cause in [
        ("a-exits", "SystemExit"),
        ("a-exits-async", "SystemExit"),
        ("a-raises", "RuntimeError: boom"),
        ("a-recurses", "RecursionError"),
    ]:
        line = next(line for line in out.splitlines() if f"FAIL {name} " in f"{line} ")
        assert line.startswith("[") and name in line, out
        assert cause in out.split(line, 1)[1].splitlines()[1], out
    assert "z-pin" in out.splitlines()[-2], out  # then the guards line
    after = tree(project / "recordings")
    assert {k: after[k] for k in before if k.startswith("a-")} == {
        k: v for k, v in before.items() if k.startswith("a-")
    }, "the old recordings are kept"


@pytest.mark.parametrize("plugin", ["blocks", "blocks_async"])
@pytest.mark.parametrize("command", ["record", "replay"])
def test_ctrl_c_ends_record_and_replay_with_one_line_and_exit_130(
    tmp_path: Path, command: str, plugin: str
) -> None:
    project = crash_project(tmp_path, [plugin])
    before = tree(project / "recordings")
    process = start_cli(project, command, HX_CRASH="1")
    wait_for((project / "started").exists, what="the scenario to block")
    code, out, err, took = interrupt(process)
    assert code == 130, (out, err)
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("headerlock: interrupted"), err
    assert took < 5
    assert tree(project / "recordings") == before


def test_bad_recordings_on_replay_are_one_stderr_line_per_file(tmp_path: Path) -> None:
    project = crash_project(tmp_path, ["exits", "raises"])
    (project / "recordings" / "a-exits.yaml").write_text("version: 1\nfoo: [\n")
    (project / "recordings" / "z-pin.yaml").write_text("bad: a: b\n")
    result = cli(project, "replay")
    assert result.returncode == 2, result.stdout + result.stderr
    no_traceback(result)
    lines = result.stderr.splitlines()
    assert sorted(lines) == [
        "headerlock: recordings/a-exits.yaml:3: did not find expected node content",
        "headerlock: recordings/z-pin.yaml:1: mapping values are not allowed in this context",
    ], result.stderr
    assert "did not find" not in result.stdout and "mapping values" not in result.stdout


def test_record_refuses_a_symlinked_recording_and_writes_neither_link_nor_target(
    tmp_path: Path,
) -> None:
    project = crash_project(tmp_path, ["exits"])
    store = project / "store"
    store.mkdir()
    link = project / "recordings" / "z-pin.yaml"
    (store / "z-pin.yaml").write_bytes(link.read_bytes())
    link.unlink()
    link.symlink_to(Path("..") / "store" / "z-pin.yaml")
    stored = (store / "z-pin.yaml").read_bytes()
    fixture_path = project / "fixtures" / "z-pin.yaml"
    fixture_path.write_text(fixture_path.read_text().replace("Be brief.", "Be terse."))
    result = cli(project, "record")
    assert result.returncode == 2, result.stdout + result.stderr
    no_traceback(result)
    assert result.stderr.splitlines() == [
        "headerlock: recordings/z-pin.yaml: is a symbolic link; headerlock writes only files"
        " it owns, never through a link: put the file itself there; nothing written"
    ]
    assert "[2/2] FAIL z-pin (nothing written)" in result.stdout
    assert link.is_symlink(), "the link is kept"
    assert (store / "z-pin.yaml").read_bytes() == stored, "its target is not written"
    assert [p.name for p in (project / "recordings").iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "-inf", "abc", "1e999"])
def test_headerlock_timeout_must_be_a_positive_finite_number(tmp_path: Path, value: str) -> None:
    project = crash_project(tmp_path, [])
    before = tree(project)
    result = cli(
        project,
        "record",
        "--live",
        HEADERLOCK_BASE_URL="http://127.0.0.1:9/v1",
        HEADERLOCK_TIMEOUT=value,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    line = one_line_error(result)
    assert f"HEADERLOCK_TIMEOUT must be a positive finite number of seconds, got {value!r}" in line
    assert tree(project) == before


@pytest.mark.parametrize("value", ["nan", "-1"])
@pytest.mark.parametrize(
    "command", [("replay",), ("record",), ("flakes", "--runs", "1"), ("run-once", "z-pin")]
)
def test_every_command_running_an_agent_checks_headerlock_timeout(
    tmp_path: Path, command: tuple[str, ...], value: str
) -> None:
    """Not only ``record --live``: a run that would pass must not hide a bad value."""
    project = crash_project(tmp_path, [])
    before = tree(project)
    result = cli(project, *command, HEADERLOCK_TIMEOUT=value)
    assert result.returncode == 2, result.stdout + result.stderr
    line = one_line_error(result)
    assert f"HEADERLOCK_TIMEOUT must be a positive finite number of seconds, got {value!r}" in line
    assert tree(project) == before


def test_headerlock_timeout_accepts_positive_seconds() -> None:
    from headerlock.runtime.adapters.openai_compat import OpenAICompatAdapter

    pytest.importorskip("openai")
    adapter = OpenAICompatAdapter.from_env(
        environ={"HEADERLOCK_BASE_URL": "http://x", "HEADERLOCK_TIMEOUT": "2.5"}
    )
    assert adapter.timeout == 2.5
