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


def test_deferred_directory_syncs_happen_once_per_directory_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(atomic, "_deferring", 0)  # this test run's own session defers too
    monkeypatch.setattr(atomic, "_pending", set())
    synced: list[Path] = []
    monkeypatch.setattr(atomic, "_fsync_dir", synced.append)
    atomic_write(tmp_path / "now.yaml", "a: 1\n")
    assert synced == [tmp_path]  # not deferred: after the write
    outer = atomic.defer_directory_syncs()
    inner = atomic.defer_directory_syncs()
    for i in range(10):
        atomic_write(tmp_path / "b" / f"{i}.yaml", f"i: {i}\n")
        atomic_write(tmp_path / "a" / f"{i}.yaml", f"i: {i}\n")
    assert (tmp_path / "b" / "9.yaml").read_text() == "i: 9\n"  # written and renamed now
    inner()
    assert synced == [tmp_path]  # the outer deferral still holds them
    outer()
    outer()  # a second call does nothing
    assert synced == [tmp_path, tmp_path / "a", tmp_path / "b"]
    atomic_write(tmp_path / "later.yaml", "c: 1\n")
    assert synced[-1] == tmp_path


def test_a_pytest_session_syncs_its_recordings_directory_at_its_end(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(atomic, "_deferring", 0)  # as in a process of its own
    monkeypatch.setattr(atomic, "_pending", set())
    pytester.makepyfile(
        test_writes="""
        from headerlock.formats import atomic

        def test_write(tmp_path):
            synced = []
            real, atomic._fsync_dir = atomic._fsync_dir, synced.append
            try:
                atomic.atomic_write(tmp_path / "r.yaml", "a: 1\\n")
            finally:
                atomic._fsync_dir = real
            assert synced == [] and str(tmp_path) in atomic._pending
        """
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert not atomic._pending and not atomic._deferring  # synced when the session ended
