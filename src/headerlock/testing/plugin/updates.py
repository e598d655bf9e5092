"""Updates are transactions: the session's recording books (a part of the session,
``headerlock.testing.plugin.session``; the hooks call its methods).

- ``claim_recording(item)`` returns where a Python test's recording lives; calling it
  claims the file for the item, and two tests claiming one file is an error.
- ``stage(item, path, text)`` (under ``--snapshot-update``) holds a new recording
  until the item has passed setup, call and teardown; only then is it written
  (atomically). A failed, skipped or interrupted item writes nothing and its
  report says which recording was kept.
- At the end the deciding process (the only one, or the xdist controller once
  every worker reported) finds unused recordings and removes them only when
  the whole session ran green (``headerlock.testing.plugin.unused``), never one
  created or changed after the session started (another session's), nor one of a
  space whose items ran on a worker that was lost.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePath
from typing import Any

import pytest

from headerlock.errors import ConfigError, HeaderlockError, RecordingClashError
from headerlock.formats.atomic import atomic_write
from headerlock.formats.write_lock import write_unless_changed
from headerlock.testing.plugin.ledger import Ledger, Space, SpaceKind
from headerlock.testing.plugin.names import module_key, name_in_file, python_recording_path
from headerlock.testing.plugin.state import session_of
from headerlock.testing.plugin.unused import (
    Outcome,
    RecordingsSnapshot,
    Stamp,
    find_unused,
    remove,
    session_problem,
    space_ran_whole,
    stamp_of,
)

_STAGED = pytest.StashKey[list["Staged"]]()
_PASSED = pytest.StashKey[bool]()
WORKER_OUTPUT = "headerlock"


@dataclass(frozen=True, slots=True)
class Staged:
    """A recording waiting for its item to pass: the text and how to write it."""

    path: Path
    text: str
    write: Callable[[], None]
    booked: bool = True
    """Counted as a recording written (a header lock's merge is not)."""


def updates_of(config: pytest.Config) -> Updates:
    """The session's books (``HeaderlockSession.books``)."""
    return session_of(config).books


def claim_recording(item: pytest.Item, *, fixture: str = "headerlock_wire") -> Path:
    """``recordings/<test file without .py>/<test name>.yaml`` for a Python test, claimed
    for ``item`` on behalf of ``fixture``; raises ``RecordingClashError`` when another
    test (or another fixture of this test) already uses the file."""
    return updates_of(item.config).claim_python(item, fixture)


def claim(item: pytest.Item, path: Path) -> None:
    """Note that ``item`` uses the recording at ``path`` (a scenario's recording)."""
    updates_of(item.config).ledger.claim(_key(path), item.nodeid)


def note_matched(item: pytest.Item, path: Path) -> None:
    """Note that ``item`` replayed the recording at ``path`` and it matched."""
    updates_of(item.config).ledger.matched.add(_key(path))


def stage(
    item: pytest.Item, path: Path, text: str, write: Callable[[], None] | None = None
) -> bool:
    """Write ``text`` to ``path`` once ``item`` has passed (``write`` does the writing;
    default: an atomic write). Equal bytes on disk are left alone: whether it was staged."""
    updates = updates_of(item.config)
    if path.is_file() and path.read_bytes() == text.encode("utf-8", "surrogatepass"):
        updates.ledger.unchanged.add(_key(path))
        return False
    action = write if write is not None else (lambda: atomic_write(path, text))
    item.stash.setdefault(_STAGED, []).append(Staged(path, text, action))
    return True


def stage_after(item: pytest.Item, path: Path, action: Callable[[], None]) -> None:
    """Run ``action`` (it writes ``path``, not a recording: a header lock) once ``item``
    has passed, after its recordings are written."""
    item.stash.setdefault(_STAGED, []).append(Staged(path, "", action, booked=False))


def recording_name_of(item: pytest.Item) -> str:
    """The ``headerlock_name`` marker's name, else the test's name in its file
    (``Class.test[param]``)."""
    marker = item.get_closest_marker("headerlock_name")
    if marker is not None:
        args = marker.args
        if len(args) != 1 or not isinstance(args[0], str) or not args[0]:
            raise ConfigError(
                f"{item.nodeid}: headerlock_name takes one non-empty string, got"
                f" {', '.join(map(repr, args)) or 'nothing'}",
                key="headerlock_name",
            )
        name = args[0]
    else:
        chain = item.listchain()
        modules = [i for i, node in enumerate(chain) if isinstance(node, pytest.Module)]
        start = modules[-1] + 1 if modules else len(chain) - 1
        name = name_in_file([node.name for node in chain[start:]])
    from headerlock.formats.header_lock import unreserved  # loads YAML: not at start-up

    return unreserved(name, item.nodeid)


def _key(path: Path) -> str:
    """The ledger's key of a recording: its resolved path, resolved once per process for
    each absolute path (a relative one is taken from the current directory first): a
    session asks five times per test, and resolving reads every directory of the path."""
    where = os.path.join(os.getcwd(), path)  # an absolute path stays as it is
    key = _RESOLVED.get(where)
    if key is None:
        if len(_RESOLVED) >= MAX_RESOLVED:
            _RESOLVED.clear()
        key = _RESOLVED[where] = str(Path(where).resolve())
    return key


_RESOLVED: dict[str, str] = {}
MAX_RESOLVED = 65_536


def shown_path(path: Path | str) -> str:
    absolute = Path(path).resolve()
    try:
        return absolute.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return absolute.as_posix()


class Updates:
    """The session's books (one per pytest process); the hooks feed it the collection,
    the reports and the xdist workers' books, in that order."""

    def __init__(
        self, config: pytest.Config, *, recordings: Path, fixtures: Path, update: bool
    ) -> None:
        self.config = config
        self.recordings = recordings
        self.fixtures = fixtures
        self.update = update
        self.is_worker = hasattr(config, "workerinput")
        self.ledger = Ledger()
        self.outcomes: dict[str, Outcome] = {}
        self.started = RecordingsSnapshot.take(recordings)
        """The recordings as this process found them: an update writes only those still so."""
        self.snapshot = None if self.is_worker else self.started
        self._wrote: dict[str, Stamp] = {}
        self.unused: list[Path] = []
        self.fresh: list[Path] = []
        """Unused in this session's books, but written after it started: kept."""
        self.removed: list[Path] = []
        self.remove_errors: list[str] = []
        self.problem: str | None = None
        self.partial = False
        self._children: dict[str, list[tuple[str, bool]]] = {}
        self._roots: dict[str, tuple[SpaceKind, str]] = {}
        self._owners: dict[str, list[str]] = {}
        self._users: dict[str, dict[str, str]] = {}
        self._workers_merged: set[str] = set()
        self._lost: list[str] = []
        self._lost_names: set[str] = set()
        self._ran_on: dict[str, str | None] = {}
        """The xdist worker each item's reports came from (``None``: no worker)."""
        self._module_keys: dict[Path, PurePath] = {}
        self._places: dict[tuple[PurePath, str], Path] = {}
        """Each recording path made (``python_path``), by its module key and name: the
        collection makes every test's once, and the test's claim asks again."""
        self.header_locks: set[Path] = set()
        """The header locks this process's updates add to (``wire_headers``): each drops
        the headers no recording refers to any more when the updates end."""

    @property
    def lost_workers(self) -> list[str]:
        """The xdist workers that went down, each with why (``gw1: crashed``)."""
        return list(self._lost)

    # -- where a Python test's recording lives ---------------------------------------

    def python_path(self, item: pytest.Item) -> Path:
        """The recording ``item`` uses (see ``recording_name_of``)."""
        place = (self._module_key(item.path), recording_name_of(item))
        path = self._places.get(place)
        if path is None:
            if len(self._places) >= MAX_RESOLVED:
                self._places.clear()
            path = self._places[place] = python_recording_path(self.recordings, *place)
        return path

    def _module_key(self, path: Path) -> PurePath:
        if path not in self._module_keys:
            self._module_keys[path] = module_key(path, self.config.rootpath)
        return self._module_keys[path]

    def claim_python(self, item: pytest.Item, fixture: str) -> Path:
        """``python_path(item)``, claimed; a file shared with another test is an error."""
        path = self.python_path(item)
        key = _key(path)
        users = self._users.setdefault(key, {})
        others = sorted({*self._owners.get(key, ()), *users} - {item.nodeid})
        if others:
            raise RecordingClashError(
                f"{item.nodeid} and {others[0]} would both write {shown_path(path)}; give one of"
                " them another name with @pytest.mark.headerlock_name(...); nothing written",
                path=shown_path(path),
                owners=[item.nodeid, *others],
            )
        previous = users.setdefault(item.nodeid, fixture)
        if previous != fixture:
            raise RecordingClashError(
                f"{item.nodeid} uses both {previous} and {fixture}, which would write the"
                f" same file {shown_path(path)}; nothing written",
                path=shown_path(path),
                owners=[item.nodeid],
            )
        self.ledger.claim(key, item.nodeid)
        return path

    def _writable(self, entry: Staged) -> bool:
        """Whether ``entry`` may be written: its recording is unchanged since this session
        began, or another writer left there the very bytes it holds (nobody's update is
        lost; the write still merges its headers)."""
        if self._unchanged(entry.path):
            return True
        try:
            return entry.path.read_bytes() == entry.text.encode("utf-8", "surrogatepass")
        except OSError:
            return False

    def _unchanged(self, path: Path) -> bool:
        """Whether the recording at ``path`` is still what this process found (or last
        wrote) there."""
        key = _key(path)
        if key in self._wrote:
            return path.exists() and stamp_of(path) == self._wrote[key]
        started = self.started
        if started.saw(path):
            return started.unchanged(path)
        return not path.exists() or not started.covers(path)  # created since, where it looked

    # -- collection ------------------------------------------------------------------

    def collected(self, collector: pytest.Collector, report: pytest.CollectReport) -> None:
        """Note what ``collector`` collected (before ``--lf`` narrows it)."""
        if isinstance(collector, pytest.Directory) and _same(collector.path, self.fixtures):
            self._roots[collector.nodeid] = ("fixtures", _key(self.fixtures))
        elif isinstance(collector, pytest.Module) and collector.path.suffix == ".py":
            key = self._module_key(collector.path).as_posix()
            self._roots[collector.nodeid] = ("module", key)
        if report.passed:
            self._children[collector.nodeid] = [
                (node.nodeid, isinstance(node, pytest.Item)) for node in report.result
            ]

    def collection_finished(self, session: pytest.Session) -> None:
        """The selection is final: note the spaces and who owns which recording."""
        self.ledger.selected = {item.nodeid for item in session.items}
        self.ledger.collected = {
            nodeid for children in self._children.values() for nodeid, item in children if item
        }
        for root, (kind, key) in self._roots.items():
            self.ledger.spaces[root] = Space(kind, key, self._items_under(root))
        for item in session.items:
            if not isinstance(item, pytest.Function) or item.path.suffix != ".py":
                continue
            try:
                key = _key(self.python_path(item))
            except HeaderlockError:
                continue  # reported when the test claims its recording
            self.ledger.paths[item.nodeid] = key
            self._owners.setdefault(key, []).append(item.nodeid)

    def _items_under(self, root: str) -> list[str] | None:
        items: list[str] = []
        stack = [root]
        while stack:
            children = self._children.get(stack.pop())
            if children is None:
                return None  # a collector below was never collected: not whole
            for nodeid, is_item in children:
                (items if is_item else stack).append(nodeid)
        return items

    # -- running ---------------------------------------------------------------------

    def made_report(self, item: pytest.Item, report: pytest.TestReport) -> None:
        """``item``'s report of a phase: after its teardown, write what it staged when
        every phase passed."""
        if not report.passed:
            item.stash[_PASSED] = False
            if report.failed and self.update:
                self._note_kept(item, report)
        if report.when == "teardown":
            staged = item.stash.get(_STAGED, [])
            item.stash[_STAGED] = []
            if item.stash.get(_PASSED, True):
                self._commit(item, report, staged)

    def _note_kept(self, item: pytest.Item, report: pytest.TestReport) -> None:
        owned = {key for key, ids in self.ledger.claims.items() if item.nodeid in ids}
        if item.nodeid in self.ledger.paths:
            owned.add(self.ledger.paths[item.nodeid])
        kept = sorted(k for k in owned if Path(k).is_file() and k not in self.ledger.kept)
        for key in kept:
            self.ledger.kept[key] = item.nodeid
        if kept:
            names = ", ".join(shown_path(k) for k in kept)
            report.sections.append(
                ("headerlock", f"kept {names}: this test failed, so its recording was not updated")
            )

    def _commit(self, item: pytest.Item, report: pytest.TestReport, staged: list[Staged]) -> None:
        for entry in staged:
            existed = entry.path.is_file()
            try:
                if not entry.booked:  # a header lock merge: it locks and merges by itself
                    entry.write()
                    continue
                write_unless_changed(
                    entry.path,
                    entry.write,
                    unchanged=partial(self._writable, entry),
                    since="this session started",
                )
                self._wrote[_key(entry.path)] = stamp_of(entry.path)
            except (HeaderlockError, OSError) as error:
                report.outcome = "failed"
                report.longrepr = f"headerlock: {error}"
                return
            self.ledger.written.add(_key(entry.path))
            if existed:
                self.ledger.changed.add(_key(entry.path))

    def logged(self, report: pytest.TestReport) -> None:
        """Note a phase's outcome (on the xdist controller: a worker's report)."""
        node = getattr(report, "node", None)  # set by xdist on the controller
        self._ran_on[report.nodeid] = None if node is None else _worker_name(node)
        outcome = self.outcomes.setdefault(report.nodeid, Outcome())
        if report.failed:
            outcome.failed = True
        elif report.skipped:
            outcome.skipped = True
        if report.when == "teardown":
            outcome.finished = True

    # -- the end ---------------------------------------------------------------------

    def node_down(self, node: Any, error: object) -> None:
        """An xdist worker ended: merge its books, note it when it was lost."""
        name = _worker_name(node)
        if error:
            self._lost.append(f"{name}: {error}")
            self._lost_names.add(name)
        data = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT)
        if data is not None and name not in self._workers_merged:
            self._workers_merged.add(name)
            self.ledger.merge(Ledger.from_data(data))

    def finish(self, session: pytest.Session, exitstatus: int) -> None:
        """A worker hands its books to the controller; the deciding process finds the
        unused recordings and removes them when the session allows it."""
        self._prune_header_locks()
        if self.is_worker:
            self.config.workeroutput[WORKER_OUTPUT] = self.ledger.to_data()  # type: ignore[attr-defined]
            return
        unused = find_unused(
            self.ledger,
            self.outcomes,
            recordings=self.recordings,
            fixtures=self.fixtures,
            incomplete=self._incomplete(),
        )
        snapshot = self.snapshot
        self.fresh = [p for p in unused if snapshot is not None and not snapshot.unchanged(p)]
        self.unused = [p for p in unused if p not in self.fresh]
        self.problem = session_problem(
            self.ledger,
            self.outcomes,
            exitstatus=int(exitstatus),
            lost_workers=self._lost,
            narrowed_by=_narrowing_option(self.config),
        )
        self.partial = any(
            not space_ran_whole(space, self.ledger, self.outcomes)
            for space in self.ledger.spaces.values()
        )
        if self.update and self.problem is None and self.unused:
            self.removed, errors = remove(self.unused, root=self.recordings)
            self.remove_errors += errors
        warn_only = bool(getattr(self.config.option, "warn_unused_snapshots", False))
        if self.unused and not self.update and not warn_only and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.remove_errors and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _prune_header_locks(self) -> None:
        """Each header lock this process added to keeps exactly the headers its directory's
        recordings refer to (one read of the directory per lock, not one per test; a lock
        is always a superset of them meanwhile, so an interrupted session loses nothing)."""
        from headerlock.formats.header_lock import exclusive, merge_lock

        for lock in sorted(self.header_locks):
            if not lock.is_file():
                continue
            try:
                with exclusive(lock):
                    merge_lock(lock, {})
            except (HeaderlockError, OSError) as error:
                self.remove_errors.append(
                    f"the headers no recording refers to from {shown_path(lock)}: {error}"
                )
        self.header_locks.clear()

    def _incomplete(self) -> set[str]:
        """The items whose books a lost worker took with it (every item when it is not
        known which worker ran what)."""
        if not self._lost_names:
            return set()
        if None in self._ran_on.values():
            return set(self._ran_on) | self.ledger.collected
        return {i for i, name in self._ran_on.items() if name in self._lost_names}


def _worker_name(node: object) -> str:
    """An xdist worker's id (``gw0``)."""
    return str(getattr(getattr(node, "gateway", None), "id", node))


def _same(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve()


def _narrowing_option(config: pytest.Config) -> str | None:
    for option, flag in (("lf", "--lf"), ("stepwise", "--stepwise")):
        if getattr(config.option, option, False):
            return flag
    return None
