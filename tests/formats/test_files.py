"""Files on disk: atomic writes keep modes and leave nothing behind; reads refuse non-files."""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import stat
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from headerlock.errors import (
    HeaderlockError,
    InputFileError,
    OutputFileError,
    RecordingError,
    SerializationError,
    YamlError,
)
from headerlock.formats import atomic, strict_yaml
from headerlock.formats.atomic import TEMP_MARKER, atomic_write, remove_stale_temp_files
from headerlock.formats.recording import (
    Recording,
    load_recording,
    save_recording,
    write_recording_text,
)
from headerlock.formats.strict_yaml import MAX_BYTES, read_text
from tests.support import run_cli as cli

ROOT = Path(__file__).parents[2]
GOOD_FIXTURE = (ROOT / "fixtures" / "text-turn.yaml").read_text()
GOOD_RECORDING = (ROOT / "recordings" / "text-turn.yaml").read_text()
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes and FIFOs")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's project: fixtures/ and recordings/ with one pinned scenario."""
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "recordings").mkdir()
    (tmp_path / "fixtures" / "case.yaml").write_text(GOOD_FIXTURE)
    (tmp_path / "recordings" / "case.yaml").write_text(
        GOOD_RECORDING.replace("scenario: text-turn", "scenario: case")
    )
    return tmp_path


def names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def recording(project: Path) -> Recording:
    return load_recording(project / "recordings" / "case.yaml")


# -- modes -----------------------------------------------------------------------------


@posix_only
@pytest.mark.parametrize("mode", [0o644, 0o600, 0o640, 0o664, 0o755])
def test_rewriting_keeps_the_files_mode(project: Path, mode: int) -> None:
    path = project / "recordings" / "case.yaml"
    path.chmod(mode)
    save_recording(recording(project), path)
    assert stat.S_IMODE(path.stat().st_mode) == mode
    atomic_write(path, "changed: true\n")
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert names(path.parent) == ["case.yaml"]


@posix_only
@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_the_umasks_mode(project: Path, mask: int, mode: int) -> None:
    path = project / "recordings" / "new" / "case.yaml"
    old = os.umask(mask)
    try:
        save_recording(recording(project), path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == mode


@posix_only
def test_the_cli_keeps_a_recordings_mode(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = project / "recordings" / "case.yaml"
    path.chmod(0o644)
    path.write_text(path.read_text().replace("header_class: default", "header_class: other"))
    code, output = cli(project, capsys, "record", "case")
    assert code == 0, output
    assert "header_class: default" in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert names(path.parent) == ["case.yaml"]


# -- failures mid-write ----------------------------------------------------------------


def _fail(error: BaseException) -> Callable[..., Any]:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise error

    return fail


class _Os:
    """The ``os`` module as one module sees it, with some functions replaced."""

    def __init__(self, **replaced: Callable[..., Any]) -> None:
        self.__dict__.update(replaced)

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)


def _break(monkeypatch: pytest.MonkeyPatch, module: Any, **replaced: Callable[..., Any]) -> None:
    if "fsync" in replaced:  # what makes the bytes durable: fdatasync where there is one
        replaced.setdefault("fdatasync", replaced["fsync"])
    monkeypatch.setattr(module, "os", _Os(**replaced))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        ("replace", OSError(errno.EXDEV, "Invalid cross-device link"), "Invalid cross-device link"),
        ("fsync", OSError(errno.EIO, "Input/output error"), "Input/output error"),
        ("write", OSError(errno.ENOSPC, "No space left on device"), "(the disk is full)"),
        ("open", OSError(errno.EROFS, "Read-only file system"), "Read-only file system"),
        ("open", PermissionError(errno.EACCES, "Permission denied"), "Permission denied"),
    ],
)
def test_a_failed_write_is_one_line_keeps_the_old_bytes_and_leaves_no_temp_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, call: str, error: OSError, message: str
) -> None:
    path = project / "recordings" / "case.yaml"
    before = path.read_bytes()
    changed = dataclasses.replace(recording(project), header_class="other")
    _break(monkeypatch, atomic, **{call: _fail(error)})
    with pytest.raises(OutputFileError) as info:
        save_recording(changed, path)
    text = str(info.value)
    assert text.startswith(f"{path}: cannot write: ")
    assert message in text
    assert text.endswith("the old file is kept")
    assert "\n" not in text
    assert isinstance(info.value, HeaderlockError)
    assert path.read_bytes() == before
    assert names(path.parent) == ["case.yaml"]


@pytest.mark.parametrize("call", ["write", "fsync", "replace", "fchmod"])
def test_ctrl_c_mid_write_leaves_no_temp_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    path = project / "recordings" / "case.yaml"
    before = path.read_bytes()
    if not hasattr(os, call):
        pytest.skip(f"no os.{call} here")
    _break(monkeypatch, atomic, **{call: _fail(KeyboardInterrupt())})
    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, "new: bytes\n")
    assert path.read_bytes() == before
    assert names(path.parent) == ["case.yaml"]
    assert not atomic._ours, "a temp file is still registered as in use"


def test_a_failed_write_of_a_new_file_says_nothing_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _break(monkeypatch, atomic, fsync=_fail(OSError(errno.ENOSPC, "No space left on device")))
    with pytest.raises(OutputFileError, match=r"the disk is full\); nothing written$"):
        atomic_write(tmp_path / "new.yaml", "a: 1\n")
    assert names(tmp_path) == []


@posix_only
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores modes")
def test_a_read_only_directory_is_a_one_line_error(project: Path) -> None:
    directory = project / "recordings"
    path = directory / "case.yaml"
    before = path.read_bytes()
    directory.chmod(0o555)
    try:
        with pytest.raises(OutputFileError, match="cannot write: Permission denied"):
            atomic_write(path, "new: bytes\n")
    finally:
        directory.chmod(0o755)
    assert path.read_bytes() == before
    assert names(directory) == ["case.yaml"]


def test_a_directory_in_the_way_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "case.yaml").mkdir()
    with pytest.raises(OutputFileError, match=r"case\.yaml: cannot write: Is a directory"):
        atomic_write(tmp_path / "case.yaml", "a: 1\n")
    assert names(tmp_path) == ["case.yaml"]


def test_a_failing_disk_under_the_cli_is_exit_2_not_a_traceback(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = project / "recordings" / "case.yaml"
    path.write_text(path.read_text().replace("header_class: default", "header_class: other"))
    before = path.read_bytes()
    _break(monkeypatch, atomic, write=_fail(OSError(errno.ENOSPC, "No space left on device")))
    code, output = cli(project, capsys, "record", "case")
    assert code != 0
    assert "Traceback" not in output
    assert f"{path}: cannot write: No space left on device (the disk is full)" in output
    assert path.read_bytes() == before
    assert names(path.parent) == ["case.yaml"]


# -- temp files ------------------------------------------------------------------------


def test_temp_files_are_dot_name_headerlock_tmp_random_beside_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    replace = os.replace

    def spy(src: str, dst: Any) -> None:
        seen.append(src)
        replace(src, dst)

    _break(monkeypatch, atomic, replace=spy)
    atomic_write(tmp_path / "case.yaml", "a: 1\n")
    atomic_write(tmp_path / "case.yaml", "a: 2\n")
    assert len(seen) == 2 and seen[0] != seen[1]
    for temp in seen:
        assert Path(temp).parent == tmp_path
        assert re.fullmatch(r"\.case\.yaml\.headerlock-tmp-[0-9a-f]{8}", Path(temp).name)
    assert names(tmp_path) == ["case.yaml"]


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_stale_temp_files_from_a_killed_run_are_removed_by_the_next_write(project: Path) -> None:
    directory = project / "recordings"
    stale = directory / f".case.yaml{TEMP_MARKER}-0123abcd"
    stale.write_text("half a recordi")
    _age(stale, 3600)
    other_stale = directory / f".gone.yaml{TEMP_MARKER}-89abcdef"
    other_stale.write_text("")
    _age(other_stale, 60)
    fresh = directory / f".other.yaml{TEMP_MARKER}-fedcba98"  # another process, mid-write
    fresh.write_text("being written")
    unrelated = directory / ".notes.tmp"
    unrelated.write_text("mine")
    _age(unrelated, 3600)
    a_dir = directory / f".dir{TEMP_MARKER}-00000000"
    a_dir.mkdir()
    _age(a_dir, 3600)
    save_recording(recording(project), directory / "case.yaml")
    assert names(directory) == sorted(["case.yaml", fresh.name, unrelated.name, a_dir.name])


def test_a_temp_file_in_use_by_this_process_is_not_stale(tmp_path: Path) -> None:
    ours = tmp_path / f".a.yaml{TEMP_MARKER}-11111111"
    ours.write_text("")
    _age(ours, 3600)
    atomic._ours.add(os.path.abspath(ours))
    try:
        assert remove_stale_temp_files(tmp_path) == []
    finally:
        atomic._ours.discard(os.path.abspath(ours))
    assert remove_stale_temp_files(tmp_path) == [ours.name]


def test_concurrent_writes_to_one_directory_do_not_remove_each_others_temp_files(
    tmp_path: Path,
) -> None:
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(20):
                atomic_write(tmp_path / f"f{n}.yaml", f"n: {n}\ni: {i}\n" * 200)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    assert names(tmp_path) == sorted(f"f{n}.yaml" for n in range(8))


# -- what the reader would refuse is not written ---------------------------------------


def test_a_recording_larger_than_the_read_limit_is_not_written(project: Path) -> None:
    path = project / "recordings" / "case.yaml"
    before = path.read_bytes()
    text = before.decode() + "#" * (MAX_BYTES + 1 - len(before)) + "\n"
    assert len(text.encode()) == MAX_BYTES + 2
    with pytest.raises(OutputFileError) as info:
        write_recording_text(path, text)
    assert str(info.value) == (
        f"{path}: recording is {MAX_BYTES + 2} bytes, more than the limit of {MAX_BYTES}"
        " that reading accepts; nothing written"
    )
    assert path.read_bytes() == before
    assert names(path.parent) == ["case.yaml"]
    # the reader refuses the same size with the same limit
    big = project / "big.yaml"
    big.write_text(text)
    with pytest.raises(YamlError, match=f"more than the limit of {MAX_BYTES}"):
        read_text(big)


def test_a_big_recording_inside_the_limit_is_written(project: Path) -> None:
    path = project / "recordings" / "case.yaml"
    text = path.read_text()
    padded = text + "#" * (MAX_BYTES - len(text.encode()) - 1) + "\n"
    assert len(padded.encode()) == MAX_BYTES
    write_recording_text(path, padded)
    assert load_recording(path) == recording(project)


def test_atomic_write_max_bytes_counts_utf8_bytes(tmp_path: Path) -> None:
    atomic_write(tmp_path / "a.txt", "é" * 5, max_bytes=10)
    with pytest.raises(OutputFileError, match="would be 12 bytes, more than the limit of 10"):
        atomic_write(tmp_path / "a.txt", "é" * 6, max_bytes=10)
    assert (tmp_path / "a.txt").read_text() == "é" * 5


def test_a_recording_nested_deeper_than_the_reader_allows_is_not_written(project: Path) -> None:
    path = project / "recordings" / "case.yaml"
    before = path.read_bytes()
    good = recording(project)
    deep: dict[str, Any] = {"leaf": 1}
    for _ in range(70):
        deep = {"d": deep}
    events = [dict(e) for e in good.events]
    events[1] = {**events[1], "data": {**events[1]["data"], "extra": deep}}
    bad = dataclasses.replace(good, events=events)
    with pytest.raises(OutputFileError, match="would not load back") as info:
        save_recording(bad, path)
    assert str(info.value).startswith(f"{path}: ")
    assert "\n" not in str(info.value)
    assert path.read_bytes() == before
    assert names(path.parent) == ["case.yaml"]


def test_a_lone_surrogate_is_refused_before_anything_is_written(project: Path) -> None:
    path = project / "recordings" / "case.yaml"
    before = path.read_bytes()
    good = recording(project)
    events = [dict(e) for e in good.events]
    events[1] = {**events[1], "data": {**events[1]["data"], "content": "bad \ud800 text"}}
    bad = dataclasses.replace(good, events=events)
    with pytest.raises(SerializationError, match=r"lone surrogate \(U\+D800\)") as info:
        save_recording(bad, path)
    assert str(info.value).startswith(f"{path}: ")
    assert "\n" not in str(info.value)
    with pytest.raises(OutputFileError, match=r"lone surrogate \(U\+D800, character 4\)"):
        atomic_write(path, "bad \ud800 text")
    assert path.read_bytes() == before
    assert names(path.parent) == ["case.yaml"]


# -- non-regular files are refused before they are read --------------------------------


def _within(seconds: float, call: Callable[[], Any], unblock: Path | None = None) -> Any:
    """``call()`` in a thread; fail (and unblock a FIFO) if it takes longer than ``seconds``."""
    result: list[Any] = []

    def target() -> None:
        try:
            result.append(call())
        except BaseException as error:
            result.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        if unblock is not None:  # open the write end so the blocked reader returns
            fd = os.open(unblock, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        thread.join(5)
        pytest.fail(f"hung for more than {seconds}s")
    return result[0]


@posix_only
@pytest.mark.parametrize("what", ["recording", "fixture"])
def test_a_fifo_is_refused_quickly(project: Path, what: str) -> None:
    path = project / f"{what}s" / "case.yaml"
    path.unlink()
    os.mkfifo(path)
    if what == "recording":
        error = _within(5, lambda: load_recording(path), unblock=path)
        assert isinstance(error, RecordingError)
    else:
        error = _within(5, lambda: read_text(path), unblock=path)
        assert isinstance(error, YamlError)
    assert str(error) == f"{path}: is a FIFO (named pipe), not a regular file"


@posix_only
@pytest.mark.parametrize("what", ["recordings", "fixtures"])
def test_the_cli_refuses_a_fifo_with_exit_2(
    project: Path, capsys: pytest.CaptureFixture[str], what: str
) -> None:
    path = project / what / "case.yaml"
    path.unlink()
    os.mkfifo(path)
    code, output = _within(20, lambda: cli(project, capsys, "replay", "case"), unblock=path)
    assert code == 2, output
    assert f"{path}: " in output
    assert "Traceback" not in output
    if what == "recordings":  # (the fixture's path is checked first by the project)
        assert f"{path}: is a FIFO (named pipe), not a regular file" in output


@posix_only
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_a_device_is_refused(project: Path) -> None:
    path = project / "recordings" / "case.yaml"
    path.unlink()
    path.symlink_to("/dev/zero")
    error = _within(5, lambda: load_recording(path))
    assert isinstance(error, RecordingError)
    assert str(error) == f"{path}: is a character device, not a regular file"


def test_a_directory_is_refused(project: Path) -> None:
    path = project / "recordings" / "case.yaml"
    path.unlink()
    path.mkdir()
    with pytest.raises(RecordingError, match=r"case\.yaml: is a directory, not a regular file"):
        load_recording(path)


@posix_only
def test_a_fifo_swapped_in_after_the_stat_does_not_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    regular = tmp_path / "regular.yaml"
    regular.write_text("a: 1\n")
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)

    def racing_stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        return os.stat(regular if Path(path) == fifo else path, *args, **kwargs)

    _break(monkeypatch, strict_yaml, stat=racing_stat)
    error = _within(5, lambda: read_text(fifo), unblock=fifo)
    assert isinstance(error, InputFileError)
    assert str(error) == f"{fifo}: is a FIFO (named pipe), not a regular file"


def test_a_file_that_grows_past_the_limit_while_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("a: 1\n" * 10)
    with pytest.raises(YamlError, match="more than the limit of 20"):
        read_text(path, max_bytes=20)
