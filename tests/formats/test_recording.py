"""Recordings on disk: validation and tampering."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from headerlock.errors import OutputFileError, RecordingError
from headerlock.formats.recording import load_recording, save_recording

RECORDINGS = Path(__file__).parents[2] / "recordings"


def copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / f"{name}.yaml"
    target.write_bytes((RECORDINGS / f"{name}.yaml").read_bytes())
    return target


def test_committed_recordings_load_and_are_canonical() -> None:
    for path in sorted(RECORDINGS.glob("*.yaml")):
        recording = load_recording(path)
        assert recording.to_text() == path.read_text(encoding="utf-8"), path.name


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "version: 1",
            "version: 2",
            "recording format version 2 is newer than this headerlock reads (1); upgrade headerlock",
        ),
        ("version: 1", "version: 0", "unknown recording format version 0"),
        ("version: 1", "version: one", "version must be an integer, got 'one'"),
        ("pinned: false", "pinned: no_such", "pinned must be a bool"),
        ("scenario: tool-turn", "scenario: tool-turn\nextra: 1", "unknown key 'extra'"),
        (
            '      tools: "<<tools>>"',
            "      tools: []",
            "unpinned recording is not normalized (scrubbing changes events[3].data.header.tools: [] -> '<<tools>>')",
        ),
        (
            '      id: "<<id:1>>"\n      name: read\n    turn',
            "      id: call_1\n      name: read\n    turn",
            "unpinned recording is not normalized",
        ),
        ("  seq: 2\n", "  seq: 7\n", "events: corrupt log at seq 7: expected seq 2, got 7"),
    ],
)
def test_tampering_fails_with_a_clear_message(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    path = copy(tmp_path, "tool-turn")
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(RecordingError) as info:
        load_recording(path)
    assert str(info.value).startswith(str(path))
    assert message in str(info.value)


def test_a_missing_event_is_caught(tmp_path: Path) -> None:
    path = copy(tmp_path, "tool-turn")
    lines = path.read_text().split("\n- data:")
    path.write_text("\n- data:".join(lines[:3] + lines[4:]))
    with pytest.raises(RecordingError, match="expected seq 3, got 4"):
        load_recording(path)


def test_crlf_and_bom_read_identically(tmp_path: Path) -> None:
    path = copy(tmp_path, "tool-turn")
    original = load_recording(path)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
    assert load_recording(path) == original


def test_save_renames_a_complete_file_over_the_old_one_and_leaves_no_temp_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recording = load_recording(RECORDINGS / "tool-turn.yaml")
    new = (RECORDINGS / "tool-turn.yaml").read_bytes()
    target = copy(tmp_path, "text-turn")
    old = target.read_bytes()
    real_replace = os.replace
    renames: list[tuple[Path, bytes, bytes]] = []

    def failing_replace(source: str | os.PathLike[str], dest: str | os.PathLike[str]) -> None:
        # What a reader could see at the moment of the rename.
        renames.append((Path(source).parent, Path(source).read_bytes(), Path(dest).read_bytes()))
        raise OSError(errno.EIO, "injected rename failure")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OutputFileError, match=r"text-turn\.yaml"):
        save_recording(recording, target)
    assert renames == [(tmp_path, new, old)]
    assert target.read_bytes() == old
    assert [p.name for p in tmp_path.iterdir()] == ["text-turn.yaml"]

    monkeypatch.setattr(os, "replace", real_replace)
    save_recording(recording, target)
    assert target.read_bytes() == new
    assert [p.name for p in tmp_path.iterdir()] == ["text-turn.yaml"]


def test_missing_and_empty(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match="no such recording"):
        load_recording(tmp_path / "none.yaml")
    (tmp_path / "empty.yaml").write_text("\n")
    with pytest.raises(RecordingError, match=r"empty\.yaml: file is empty"):
        load_recording(tmp_path / "empty.yaml")
