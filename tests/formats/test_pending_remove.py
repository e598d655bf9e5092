"""A green replay removes a stale pending file (``remove_pending``); nothing there is told
without raising (issue 31: every green replay asks). Both ways must do the same to
each thing that can be at the pending path."""

from __future__ import annotations

from pathlib import Path

import pytest

from headerlock.errors import OutputFileError
from headerlock.formats import pending
from headerlock.formats.pending import pending_path, remove_pending


def _outcomes(tmp_path: Path) -> list[object]:
    recording = tmp_path / "test_agent.yaml"
    where, target = pending_path(recording), tmp_path / "target"
    found: list[object] = []

    def remove() -> None:
        try:
            found.append(remove_pending(recording))
        except OutputFileError as error:
            found.append(str(error))
        found.append((where.is_symlink(), where.exists(), target.exists()))

    remove()  # nothing there
    where.write_text("stale")
    remove()
    where.symlink_to(target)  # a dangling link: only the link goes
    remove()
    target.write_text("kept")
    where.symlink_to(target)
    remove()
    where.mkdir()
    remove()  # a directory is named, never removed
    where.rmdir()
    return found


@pytest.mark.parametrize("ask", [True, False])
def test_a_stale_pending_file_is_removed_the_same_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ask: bool
) -> None:
    monkeypatch.setattr(pending, "_NO_EXCEPTION_ASK", ask)
    where = pending_path(tmp_path / "test_agent.yaml").as_posix()
    assert _outcomes(tmp_path) == [
        False, (False, False, False),
        True, (False, False, False),
        True, (False, False, False),
        True, (False, False, True),
        f"{where}: {pending._IS_DIRECTORY}", (False, True, True),
    ]  # fmt: skip
