"""Writing many files to one directory looks for stale temp files there now and then,
not once per write (which made it quadratic), and still removes them."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from headerlock.formats import atomic
from headerlock.formats.atomic import STALE_SECONDS, TEMP_MARKER, atomic_write


def _stale(directory: Path, name: str) -> Path:
    path = directory / f".{name}{TEMP_MARKER}-0123abcd"
    path.write_text("half a recordi")
    old = time.time() - 3600
    os.utime(path, (old, old))
    return path


def test_many_writes_to_one_directory_look_for_stale_files_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked: list[Path] = []
    scan = atomic.remove_stale_temp_files

    def counted(directory: Path, *, older_than: float = STALE_SECONDS) -> list[str]:
        looked.append(directory)
        return scan(directory, older_than=older_than)

    monkeypatch.setattr(atomic, "remove_stale_temp_files", counted)
    first = _stale(tmp_path, "a.yaml")
    for i in range(50):
        atomic_write(tmp_path / f"f{i}.yaml", f"i: {i}\n")
    assert looked == [tmp_path] and not first.exists()
    atomic_write(tmp_path / "other" / "g.yaml", "x: 1\n")  # another directory: looked at
    assert looked == [tmp_path, tmp_path / "other"]


def test_a_stale_file_left_after_the_last_look_goes_with_a_later_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    atomic_write(tmp_path / "a.yaml", "a: 1\n")
    later = _stale(tmp_path, "b.yaml")  # a killed run's, left after the directory was seen
    atomic_write(tmp_path / "a.yaml", "a: 2\n")
    assert later.exists()  # within STALE_SECONDS of the last look: not looked for again
    now = time.monotonic()
    monkeypatch.setattr(time, "monotonic", lambda: now + STALE_SECONDS)
    atomic_write(tmp_path / "a.yaml", "a: 3\n")
    assert not later.exists() and (tmp_path / "a.yaml").read_text() == "a: 3\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml"]
