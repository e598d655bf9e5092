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
