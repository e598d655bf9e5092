"""Which recordings are unused, and whether this session may remove them.

A recording is unused when its owner space was collected whole, every item in
it was selected and ran to its end without failing, and nothing used the file:
in a module's ``recordings/<module key>/``, a file no test claimed (a skipped
test keeps the file it would use); in ``recordings/*.yaml``, a file whose
fixture does not exist. Only files that hold a recording count. Removal needs
more: ``--snapshot-update`` and a session that ran every selected item to its
end, green, with no interruption, no ``-x``/``--maxfail`` stop, no worker lost
and nothing deselected (``session_problem``). The items a lost xdist worker ran took
their books with it: their spaces are not whole. And a file another session wrote
after this one started (``RecordingsSnapshot``) is never this session's to remove.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from headerlock.testing.plugin.ledger import Ledger, Space


@dataclass(slots=True)
class Outcome:
    """How an item ran, from its reports: to its end (teardown), failed, skipped."""

    finished: bool = False
    failed: bool = False
    skipped: bool = False


def _ran_green(nodeid: str, outcomes: Mapping[str, Outcome]) -> bool:
    outcome = outcomes.get(nodeid)
    return outcome is not None and outcome.finished and not outcome.failed


def space_ran_whole(space: Space, ledger: Ledger, outcomes: Mapping[str, Outcome]) -> bool:
    """Whether every item of ``space`` was collected, selected and ran green."""
    if not space.items:
        return False  # not collected whole, or a file --lf skipped (no items at all)
    return all(i in ledger.selected and _ran_green(i, outcomes) for i in space.items)


def _yaml_files(directory: Path) -> list[tuple[Path, str]]:
    """The ``*.yaml`` files directly in ``directory`` (not hidden, not a header lock),
    sorted, each with its real path (``str(path.resolve())``): one ``scandir``, whose
    entries know a link and a plain file without a system call each."""
    from headerlock.formats.header_lock import LOCK_NAME

    try:
        with os.scandir(directory) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return []
    real: str | None = None
    found: list[tuple[Path, str]] = []
    for entry in entries:
        name = entry.name
        if not name.endswith(".yaml") or name[:1] == "." or name == LOCK_NAME:
            continue
        try:
            if not entry.is_file():
                continue
        except OSError:
            continue
        if entry.is_symlink():
            key = os.path.realpath(entry.path)
        else:
            real = real or os.path.realpath(os.path.abspath(directory))
            key = os.path.join(real, name)
        found.append((directory / name, key))
    return found


def looks_like_recording(path: Path) -> bool:
    """Whether ``path`` holds a headerlock recording (scenario or wire, any version): only
    such files are ever removed, whatever else shares the directory."""
    from headerlock.errors import HeaderlockError
    from headerlock.formats.strict_yaml import load_file

    try:
        data = load_file(path)
    except HeaderlockError:
        return False
    if not isinstance(data, Mapping) or "version" not in data:
        return False
    return "events" in data or data.get("kind") == "wire"


def resolver() -> Callable[[Path], str]:
    """A function giving ``str(path.resolve())`` that resolves each folder once (for
    this one pass: folders may change between passes), following the file itself when
    it is a link: the same answer, far fewer system calls over thousands of files."""
    folders: dict[str, str] = {}

    def resolved(path: Path) -> str:
        folder = os.path.abspath(path.parent)
        real = folders.get(folder)
        if real is None:
            real = folders[folder] = os.path.realpath(folder)
        full = os.path.join(real, path.name)
        return os.path.realpath(full) if os.path.islink(full) else full

    return resolved


def find_unused(
    ledger: Ledger,
    outcomes: Mapping[str, Outcome],
    *,
    recordings: Path,
    fixtures: Path,
    incomplete: Collection[str] = (),
) -> list[Path]:
    """Unused recordings in the spaces this session ran whole, sorted; a space with an
    item in ``incomplete`` (run by a worker whose books were lost) is not whole."""
    claimed = set(ledger.claims)
    unused: set[Path] = set()
    for space in ledger.spaces.values():
        if not space_ran_whole(space, ledger, outcomes):
            continue
        if any(item in incomplete for item in space.items or ()):
            continue
        if space.kind == "module":
            keep = claimed | {
                ledger.paths[i]
                for i in space.items or ()
                if i in ledger.paths and outcomes[i].skipped
            }
            directory = recordings / space.key
            unused.update(p for p, real in _yaml_files(directory) if real not in keep)
        else:
            for path, real in _yaml_files(recordings):
                owner = fixtures / path.name
                if not owner.is_file() and real not in claimed:
                    unused.add(path)
    return sorted(p for p in unused if looks_like_recording(p))


def session_problem(
    ledger: Ledger,
    outcomes: Mapping[str, Outcome],
    *,
    exitstatus: int,
    lost_workers: Iterable[str] = (),
    narrowed_by: str | None = None,
) -> str | None:
    """Why this session may not remove recordings, or ``None`` when it may."""
    failed = sorted(i for i, o in outcomes.items() if o.failed)
    if failed:
        noun = "item" if len(failed) == 1 else "items"
        return f"{len(failed)} {noun} failed ({failed[0]}{', ...' if len(failed) > 1 else ''})"
    lost = sorted(lost_workers)
    if lost:
        return f"a pytest-xdist worker went down ({lost[0]})"
    if exitstatus == 2:
        return "the session was interrupted"
    unfinished = sorted(i for i in ledger.selected if not _ran_green(i, outcomes))
    if unfinished:
        noun = "item" if len(unfinished) == 1 else "items"
        return (
            f"{len(unfinished)} selected {noun} did not run to the end"
            f" ({unfinished[0]}{', ...' if len(unfinished) > 1 else ''}; -x, --maxfail or a stop)"
        )
    if exitstatus != 0:
        return f"the session did not pass (exit status {exitstatus})"
    if narrowed_by is not None:
        return f"{narrowed_by} narrows the run"
    deselected = len(ledger.collected - ledger.selected)
    if deselected:
        noun = "item was" if deselected == 1 else "items were"
        return f"{deselected} collected {noun} not selected (-k, -m, --deselect or node ids)"
    return None


def remove(paths: Iterable[Path], *, root: Path) -> tuple[list[Path], list[str]]:
    """Delete ``paths`` and any directory below ``root`` they leave empty; the removed
    paths and one message per file that could not be removed."""
    from headerlock.formats.header_lock import exclusive, lock_path, merge_lock

    removed: list[Path] = []
    errors: list[str] = []
    for path in paths:
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as error:
            errors.append(f"{path.as_posix()}: {error.strerror or error}")
            continue
        removed.append(path)
    for directory in sorted({p.parent for p in removed}):
        lock = lock_path(directory)
        if lock.is_file():
            with exclusive(lock):
                merge_lock(lock, {})  # the headers only removed recordings referred to go
    top = root.resolve()
    for directory in sorted({p.parent.resolve() for p in removed}, reverse=True):
        if directory != top and top in directory.parents:
            with contextlib.suppress(OSError):
                directory.rmdir()  # only when empty
    return removed, errors


GRAIN_NS: Final = 2_000_000_000
"""The coarsest common file-time grain (FAT's 2 s): a change this close to the snapshot
may leave every time stamp as it was."""
Stamp = tuple[int, int, int, int, int]
"""A file's device, inode, size, modification and change time (ns)."""


def _stamp(info: os.stat_result) -> Stamp:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def stamp_of(path: Path) -> Stamp:
    """The stamp of the file at ``path`` now (``OSError`` when there is none)."""
    return _stamp(path.stat())


def _all_yaml(directory: Path) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Every ``*.yaml`` below ``directory``, with the folder it is in, walked as
    ``os.walk`` walks (a link to a folder is not followed) past hidden names: one
    ``scandir`` per folder, whose entries know a link without a system call."""
    folders = [os.fspath(directory)]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                is_folder = entry.is_dir()
            except OSError:
                is_folder = False
            if is_folder:
                if not entry.is_symlink():
                    folders.append(entry.path)
            elif entry.name.endswith(".yaml"):
                yield folder, entry


@dataclass(frozen=True, slots=True)
class RecordingsSnapshot:
    """The recordings as this session found them: a stamp of each file (inode, size,
    times) and, for a file touched within ``GRAIN_NS`` of the snapshot, its digest (a
    coarse clock may hide a change made in the same tick). A file created, replaced or
    changed since is another session's: never removed as unused by this one."""

    started_ns: int
    stamps: Mapping[str, tuple[Stamp, str | None]]
    root: Path | None = None
    """The recordings directory it looked in (resolved)."""

    @classmethod
    def take(cls, recordings: Path) -> RecordingsSnapshot:
        """The snapshot of every ``*.yaml`` below ``recordings`` now."""
        started = time.time_ns()
        stamps: dict[str, tuple[Stamp, str | None]] = {}
        real: dict[str, str] = {}
        """Each folder's real path (``resolver``'s answer, from the walk's own entries)."""
        for folder, entry in _all_yaml(recordings):
            try:
                info = entry.stat()
            except OSError:
                continue
            if entry.is_symlink():
                key = os.path.realpath(entry.path)
            else:
                found = real.get(folder)
                if found is None:
                    found = real[folder] = os.path.realpath(os.path.abspath(folder))
                key = os.path.join(found, entry.name)
            recent = max(info.st_mtime_ns, info.st_ctime_ns) >= started - GRAIN_NS
            stamps[key] = (_stamp(info), _digest(Path(entry.path)) if recent else None)
        return cls(started, stamps, recordings.resolve())

    def recent(self, ns: int) -> bool:
        """Whether time ``ns`` is within a clock grain of the snapshot (or after it)."""
        return ns >= self.started_ns - GRAIN_NS

    def covers(self, path: Path) -> bool:
        """Whether the snapshot looked where ``path`` is (below its root, not hidden)."""
        if self.root is None:
            return False
        try:
            parts = path.resolve().relative_to(self.root).parts
        except ValueError:
            return False
        return not any(part.startswith(".") for part in parts)

    def saw(self, path: Path) -> bool:
        """Whether ``path`` was there when the snapshot was taken."""
        return str(path.resolve()) in self.stamps

    def unchanged(self, path: Path) -> bool:
        """Whether ``path`` is the very file the snapshot saw, as it was then."""
        seen = self.stamps.get(str(path.resolve()))
        if seen is None:
            return False
        try:
            info = path.stat()
        except OSError:
            return False
        stamp, digest = seen
        return _stamp(info) == stamp and (digest is None or _digest(path) == digest)
