"""A scenario whose replay differs leaves ``recordings/<name>.yaml.new``; ``headerlock
review`` takes it (the CLI in-process, over the bundled text-turn scenario)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from headerlock.cli import main
from headerlock.formats.pending import pending_path

BUNDLED = Path(__file__).resolve().parents[2] / "fixtures" / "text-turn.yaml"


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


def test_a_changed_scenario_is_pending_until_reviewed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fixtures").mkdir()
    fixture = tmp_path / "fixtures" / "text-turn.yaml"
    shutil.copy(BUNDLED, fixture)
    assert run("record")[0] == 0
    recording = tmp_path / "recordings" / "text-turn.yaml"
    before = recording.read_bytes()
    fixture.write_text(fixture.read_text().replace("Answer in one line.", "Answer in one word."))
    code, out = run("replay")
    assert code == 1
    assert "pending: recordings/text-turn.yaml.new holds the recording this run would make" in out
    assert recording.read_bytes() == before and pending_path(recording).is_file()
    code, out = run("review", "--list")
    assert (code, out.splitlines()[0]) == (
        1,
        "recordings/text-turn.yaml.new: changes recordings/text-turn.yaml (scenario, 8 events)",
    )
    assert run("review", "--accept-all")[0] == 0
    assert not pending_path(recording).exists() and recording.read_bytes() != before
    code, out = run("replay")
    assert code == 0, out
    assert run("review", "--list") == (0, "0 pending changes below recordings\n")


def test_accepting_runs_the_class_guard_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fixtures").mkdir()
    for name in ("text-turn", "tool-turn"):  # text-turn pins class 'default'
        shutil.copy(BUNDLED.with_name(f"{name}.yaml"), tmp_path / "fixtures")
    assert run("record")[0] == 0
    recording = tmp_path / "recordings" / "tool-turn.yaml"
    before = recording.read_bytes()
    fixture = tmp_path / "fixtures" / "tool-turn.yaml"
    original = fixture.read_text()
    asked = original.replace("What do my notes say?", "What do my notes hold?")
    fixture.write_text(asked.replace("Answer in one line.", "Answer at length."))
    assert run("replay", "tool-turn")[0] == 1
    capsys.readouterr()
    assert pending_path(recording).is_file()
    code, _ = run("review", "--accept-all")
    err = capsys.readouterr().err
    assert code == 1
    assert len(err.splitlines()) == 1, err
    assert err.startswith(
        "headerlock: recordings/tool-turn.yaml.new: the pin guard failed:"
        " tool-turn: request/header at seq 4 differs from the pinned header of class"
        " 'default' (text-turn) after restore"
    )
    assert recording.read_bytes() == before and pending_path(recording).is_file()
    fixture.write_text(asked)  # back in line with its class: the guard passes
    assert run("review", "--accept-all")[0] == 0
    assert recording.read_bytes() != before and not pending_path(recording).exists()
    assert run("replay")[0] == 0
