"""The ``headerlock`` command line."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from headerlock.cli import main

ROOT = Path(__file__).parents[1]
SPINE = ["text-turn", "tool-turn", "ordered-turn", "error-turn", "reorder-turn"]


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(args), out=out)
    return code, out.getvalue()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "fixtures").mkdir()
    for name in SPINE:
        shutil.copy(ROOT / "fixtures" / f"{name}.yaml", tmp_path / "fixtures")
    return tmp_path


def dirs(root: Path) -> list[str]:
    return ["--fixtures", str(root / "fixtures"), "--recordings", str(root / "recordings")]


def test_demo_records_replays_and_shows_tool_orders() -> None:
    code, out = run("demo")
    assert code == 0, out
    assert "request/header (initial) seq 4: todo_write, edit, list, write, read" in out
    assert "request/header (fallback) seq 10: write, todo_write, read, list, edit" in out
    assert 'turn 1 failed: tool_order lists unregistered tool "ghost"' in out
    assert "[7/7] ok   tool-turn (spine)" in out
    assert out.rstrip().endswith("pins fresh: ok")


def test_record_then_replay(project: Path) -> None:
    code, out = run("record", *dirs(project))
    assert code == 0, out
    assert f"[5/5] recorded tool-turn -> {project}/recordings/tool-turn.yaml" in out
    code, out = run("replay", *dirs(project))
    assert code == 0, out
    code, out = run("replay", "tool-turn", *dirs(project))
    assert (code, out.splitlines()[0][:22]) == (0, "[1/1] ok   tool-turn (")


def test_replay_exit_codes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run("record", *dirs(project))
    pinned = project / "recordings" / "text-turn.yaml"
    pinned.write_text(pinned.read_text().replace("Read a UTF-8 text file", "Read a file"))
    code, out = run("replay", *dirs(project))
    assert code == 1
    assert "FAIL text-turn (spine, pinned)" in out
    assert "events[3].data.header.tools.read.description: 'Read a file from the workspace.'" in out
    assert "re-record: headerlock record text-turn" in out
    broken = project / "recordings" / "tool-turn.yaml"
    broken.write_text("version: 1\n")
    code, out = run("replay", *dirs(project))
    assert code == 2
    assert "missing key 'scenario'" in out
    code, _ = run("replay", "no-such", *dirs(project))
    assert code == 2
    assert "no-such.yaml: no such fixture" in capsys.readouterr().err
    code, _ = run("replay", "../escape", *dirs(project))
    assert code == 2
    assert "scenario name '../escape' must match" in capsys.readouterr().err


def test_diff(project: Path) -> None:
    run("record", *dirs(project))
    rec = project / "recordings"
    code, out = run("diff", str(rec / "tool-turn.yaml"), str(rec / "tool-turn.yaml"))
    assert (code, out) == (0, "recordings are identical\n")
    code, out = run("diff", str(rec / "tool-turn.yaml"), str(rec / "text-turn.yaml"))
    assert code == 1
    assert "  ... and 10 more" in out
    assert (
        "events[1].data.content: 'What do my notes say?' -> 'Reply with exactly the word: PONG.'"
        in out
    )


def test_module_entry_point() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "headerlock", "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0
    assert "demo" in result.stdout and "replay" in result.stdout
