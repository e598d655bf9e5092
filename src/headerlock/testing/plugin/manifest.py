"""``pytest --headerlock-manifest PATH`` (ini ``headerlock_manifest``): the run's usage
manifest (``headerlock.formats.manifest``), written atomically at the end of the session.

The controller writes it from the session's books (``Updates``), which already hold
every xdist worker's. An interrupted session writes a complete manifest that says so
(or, killed, none: the write is atomic). ``headerlock unused`` merges the CI jobs'.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from headerlock.errors import HeaderlockError
from headerlock.formats.manifest import (
    Manifest,
    SpaceEntry,
    digest_lines,
    recordings_listing,
    write_manifest,
)
from headerlock.testing.plugin.ledger import Ledger
from headerlock.testing.plugin.unused import Outcome
from headerlock.testing.plugin.updates import Updates

OPTION = "headerlock_manifest"


def manifest_path(config: pytest.Config) -> Path | None:
    """Where this run writes its manifest: ``--headerlock-manifest`` (relative to the
    working directory) or the ini key (relative to the rootdir); ``None`` for neither."""
    given = getattr(config.option, OPTION, None)
    if given:
        return Path(config.invocation_params.dir) / str(given)
    value = str(config.getini(OPTION) or "").strip()
    return config.rootpath / value if value else None


def _outcome(outcome: Outcome | None) -> str:
    if outcome is None or (not outcome.finished and not outcome.failed):
        return "unfinished"
    if outcome.failed:
        return "failed"
    return "skipped" if outcome.skipped else "passed"


class ManifestWriter:
    """Writes the manifest at the end of the session, last (controller only; a part of
    the session when the run writes one)."""

    def __init__(self, config: pytest.Config, updates: Updates, path: Path) -> None:
        self.config = config
        self.updates = updates
        self.path = path
        self.root = config.rootpath.resolve()
        self.listing = recordings_listing(updates.recordings)
        self.error: str | None = None
        self.written = False

    def _rel(self, path: str | Path) -> str:
        return Path(os.path.relpath(Path(path).resolve(), self.root)).as_posix()

    def write(self, session: pytest.Session) -> None:
        """Write the manifest of the books now; a failure fails a green session."""
        try:
            write_manifest(self.path, self.manifest(int(session.exitstatus)))
        except HeaderlockError as error:
            self.error = f"headerlock: could not write the manifest: {error}"
            if session.exitstatus == 0:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return
        self.written = True

    def lines(self) -> list[str]:
        """The summary's manifest part: where it went, or why it could not."""
        if self.error is not None:
            return [self.error]
        if not self.written:
            return []
        shown = os.path.relpath(self.path, self.config.invocation_params.dir)
        return [f"headerlock: manifest written to {Path(shown).as_posix()}"]

    def manifest(self, exitstatus: int) -> Manifest:
        """The manifest of the session's books now."""
        updates = self.updates
        ledger: Ledger = updates.ledger
        outcomes = updates.outcomes
        tests = {i: _outcome(outcomes.get(i)) for i in ledger.selected | set(outcomes)}
        return Manifest(
            headerlock=_version(),
            rootdir_name=self.root.name,
            recordings=self._rel(updates.recordings),
            fixtures=self._rel(updates.fixtures),
            listing={"count": len(self.listing), "sha256": digest_lines(self.listing)},
            collected=tuple(sorted(ledger.collected)),
            spaces=tuple(
                SpaceEntry(
                    root,
                    space.kind,
                    space.key if space.kind == "module" else self._rel(space.key),
                    None if space.items is None else tuple(space.items),
                )
                for root, space in sorted(ledger.spaces.items())
            ),
            selection=self._selection(),
            interrupted=exitstatus == pytest.ExitCode.INTERRUPTED,
            exitstatus=exitstatus,
            lost_workers=tuple(updates.lost_workers),
            tests=tests,
            used={self._rel(p): tuple(sorted(ids)) for p, ids in ledger.claims.items()},
            skipped={
                i: self._rel(ledger.paths[i])
                for i, outcome in tests.items()
                if outcome == "skipped" and i in ledger.paths
            },
            written=tuple(self._rel(p) for p in ledger.written),
            pending=tuple(self._rel(p) for p in ledger.pending),
            stale=tuple(self._stale()),
            kept={self._rel(p): i for p, i in ledger.kept.items()},
        )

    def _selection(self) -> dict[str, Any]:
        option = self.config.option
        randomly = self.config.pluginmanager.has_plugin("randomly")
        workers = getattr(option, "numprocesses", None)
        return {
            "paths": list(self.config.args),
            "keyword": getattr(option, "keyword", "") or "",
            "markexpr": getattr(option, "markexpr", "") or "",
            "deselect": list(getattr(option, "deselect", None) or ()),
            "splits": getattr(option, "splits", None),
            "group": getattr(option, "group", None),
            "randomly_seed": getattr(option, "randomly_seed", None) if randomly else None,
            "workers": workers if isinstance(workers, int | str) else None,
        }

    def _stale(self) -> list[str]:
        """The pending files below the recordings that are stale now."""
        from headerlock.formats.pending import SUFFIX, read_pending  # loads YAML: at the end

        stale = []
        for path in sorted(self.updates.recordings.rglob(f"*.yaml{SUFFIX}")):
            try:
                if read_pending(path).stale:
                    stale.append(self._rel(path))
            except (HeaderlockError, OSError):
                continue
        return stale


def _version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("headerlock")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def manifest_writer(config: pytest.Config, updates: Updates) -> ManifestWriter | None:
    """The writer when this run (the controller, not an xdist worker) writes a manifest."""
    path = manifest_path(config)
    if path is None or hasattr(config, "workerinput"):
        return None
    if path.is_dir():
        raise pytest.UsageError(f"headerlock: --headerlock-manifest {path}: is a directory")
    return ManifestWriter(config, updates, path)
