"""``headerlock review``: the command's modes and exit codes.

- no flag: interactive, on a terminal only (elsewhere one line points to the flags,
  exit 2);
- ``--list``: one line per pending file; exit 0 when there is none (no recordings
  directory: none), 1 when some;
- ``--accept PATH...`` / ``--accept-all``, ``--reject PATH...`` / ``--reject-all``: a
  PATH names the ``.new`` file or its recording; exit 0 when every one was applied,
  1 when one was refused (stale, partial, or failing the pin guard of its scenario's
  class), 2 for bad input (no such pending file). An invalid pending file is named on
  stderr and left alone while the others are listed, accepted or rejected (exit 2);
  ``--reject PATH`` removes it too;
- interactive: exit 1 when an accept was refused or a pending file was invalid;
- ``--from DIR``: the pending files are the ones at any depth under ``DIR`` (collected
  from CI artifacts), each changing the recording at its path below ``recordings/`` in
  this checkout; accepted through the same path (a stale one is refused); the same
  change from two jobs is reviewed once.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO

from headerlock.errors import InputFileError, RefusedPendingError, StalePendingError
from headerlock.formats.pending import GITIGNORE_LINE
from headerlock.testing.review.apply import Change, accept, read_change, reject
from headerlock.testing.review.find import (
    collected_pending,
    fixtures_dir,
    pending_files,
    recordings_dir,
    resolve,
)
from headerlock.testing.review.terminal import review

if TYPE_CHECKING:
    from headerlock.testing.scenario.project import Project

NOT_A_TERMINAL: Final = (
    "headerlock: review is interactive and needs a terminal; without one use"
    " --list, --accept PATH..., --accept-all, --reject PATH... or --reject-all"
)


def _targets(args: argparse.Namespace, recordings: Path) -> list[Path]:
    named = args.accept or args.reject
    if named:
        return [resolve(path) for path in named]
    return pending_files(recordings)


class _Collected:
    """Pending files collected under ``--from DIR``, each read as a change of the
    checkout's recording at its path below ``recordings/``."""

    def __init__(self, source: Path, recordings: Path, out: TextIO) -> None:
        self.source = source
        self.targets = collected_pending(source, recordings)
        self.paths: list[Path] = []
        self.invalid = 0
        seen: dict[tuple[Path, str, str], Path] = {}
        for path in self.targets:
            try:
                change = self.read(path)
            except InputFileError as error:
                self.invalid += 1
                print(f"headerlock: {one_line(str(error))}; left as it is", file=sys.stderr)
                continue
            key = (self.targets[path], change.pending.base, change.pending.text)
            if key in seen:
                print(
                    f"{path.as_posix()}: the same change as {seen[key].as_posix()}, reviewed once",
                    file=out,
                )
                continue
            seen[key] = path
            self.paths.append(path)

    def read(self, path: Path) -> Change:
        change = read_change(path)
        pending = dataclasses.replace(change.pending, recording=self.targets[path])
        return Change(pending, change.new)

    def named(self, arguments: list[Path]) -> list[Path]:
        """The collected pending files PATHs name (the ``.new`` file or its recording)."""
        chosen = []
        for argument in arguments:
            found = [
                p
                for p in self.paths
                if p.resolve() == argument.resolve()
                or self.targets[p].resolve() == argument.resolve()
            ]
            if not found:
                raise InputFileError(
                    f"{argument}: no pending file for it under {self.source.as_posix()}",
                    path=str(argument),
                )
            chosen += found
        return chosen


def _below(recordings: Path) -> str:
    """Where the pending files were looked for, for the summary lines."""
    missing = "" if recordings.exists() else " (no such directory)"
    return f"below {recordings.as_posix()}{missing}"


def _project(recordings: Path) -> Project:
    """The project whose scenarios' guard an accept runs (imported on first use)."""
    from headerlock.testing.scenario.project import Project

    return Project(fixtures_dir(), recordings, pending=False)


def review_command(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``headerlock review`` with parsed ``args``; returns the exit code."""
    recordings: Path = args.recordings if args.recordings is not None else recordings_dir()
    collected = None if args.source is None else _Collected(args.source, recordings, out)
    read: Callable[[Path], Change] = read_change if collected is None else collected.read
    where = _below(recordings) if collected is None else f"under {args.source.as_posix()}"
    if not (args.list or args.accept or args.accept_all or args.reject or args.reject_all):
        if not (sys.stdin.isatty() and out.isatty()):
            print(NOT_A_TERMINAL, file=sys.stderr)
            return 2
        paths = pending_files(recordings) if collected is None else collected.paths
        if not paths:
            print(f"no pending changes {where}", file=out)
            return 0
        tally = review(paths, sys.stdin, out, _project(recordings), read=read)
        return 1 if tally.refused or (collected and collected.invalid) else 0
    if collected is None:
        paths = _targets(args, recordings)
        if args.reject:  # a named pending file goes, valid or not
            for path in paths:
                path.unlink(missing_ok=True)
                print(f"rejected {path.as_posix()}", file=out)
            return 0
    else:
        named = args.accept or args.reject
        paths = collected.named(named) if named else collected.paths
    changes: list[Change] = []
    invalid = 0 if collected is None else collected.invalid
    for path in paths:  # an invalid one is named and left alone; the others go on
        try:
            changes.append(read(path))
        except InputFileError as error:
            invalid += 1
            print(f"headerlock: {one_line(str(error))}; left as it is", file=sys.stderr)
    if args.list:
        for change in changes:
            print(change.line(), file=out)
        count = len(changes) + invalid
        noun = "change" if count == 1 else "changes"
        print(
            f"{count} pending {noun} {where}"
            + (f" ({invalid} invalid)" if invalid else "")
            + (f" (keep them out of git: {GITIGNORE_LINE} in .gitignore)" if count else ""),
            file=out,
        )
        return 2 if invalid else 1 if changes else 0
    refused = 0
    project = None if args.reject or args.reject_all else _project(recordings)
    for change in changes:
        if args.reject or args.reject_all:
            reject(change)
            print(f"rejected {change.pending.path.as_posix()}", file=out)
            continue
        try:
            written = accept(change, project)
        except (StalePendingError, RefusedPendingError) as error:
            refused += 1
            print(f"headerlock: {error}", file=sys.stderr)
            continue
        print(f"accepted {change.pending.path.as_posix()} -> {written.as_posix()}", file=out)
    if not changes and not invalid:
        print(f"no pending changes {where}", file=out)
    return 2 if invalid else 1 if refused else 0


def one_line(text: str) -> str:
    """``text`` on one line."""
    return " ".join(text.split())
