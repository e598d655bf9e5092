"""A remembered file's value is served only while the same regular file is there
(``FileMemo.get_regular``, which a replay's header lock is read through: one ``stat``
both says whether the file exists and stamps it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from headerlock.formats.file_memo import FileMemo


def _memo_reads(memo: FileMemo[str], path: Path, reads: list[str]) -> str:
    def read() -> str:
        reads.append(path.read_text())
        return reads[-1]

    return memo.get_regular(path, read, absent=lambda: "absent")


def test_a_regular_file_is_read_once_while_it_stays_and_again_once_changed(
    tmp_path: Path,
) -> None:
    memo: FileMemo[str] = FileMemo()
    path, reads = tmp_path / "headers.lock.yaml", list[str]()
    assert _memo_reads(memo, path, reads) == "absent" and reads == []
    path.write_text("one")
    assert _memo_reads(memo, path, reads) == "one" == _memo_reads(memo, path, reads)
    assert reads == ["one"]
    (tmp_path / "new").write_text("two, longer")
    os.replace(tmp_path / "new", path)
    assert _memo_reads(memo, path, reads) == "two, longer" and len(reads) == 2
    path.unlink()
    assert _memo_reads(memo, path, reads) == "absent"  # never the value kept before


def test_a_directory_or_a_path_through_a_file_is_no_file(tmp_path: Path) -> None:
    memo: FileMemo[str] = FileMemo()
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("x")
    for where in (tmp_path / "dir", tmp_path / "file" / "below", tmp_path / "a\x00b"):
        assert _memo_reads(memo, where, []) == "absent"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads through permissions")
def test_a_file_that_cannot_be_stated_for_another_reason_is_read_for_its_error(
    tmp_path: Path,
) -> None:
    closed = tmp_path / "closed"
    closed.mkdir()
    (closed / "lock").write_text("x")
    closed.chmod(0)
    try:
        with pytest.raises(PermissionError):
            _memo_reads(FileMemo(), closed / "lock", [])
    finally:
        closed.chmod(0o700)
