"""The interactive review: each pending change in turn, one key to decide it.

Shows ``[i/n]`` and the change's line, its readable diff, then asks
``a accept, r reject, s skip, q quit``; one key is enough (the terminal is put in
cbreak mode for the review), Enter is not needed. End of input quits.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO

from headerlock.errors import HeaderlockError
from headerlock.testing.review.apply import Change, accept, diff, read_change, reject

if TYPE_CHECKING:
    from headerlock.testing.scenario.project import Project

PROMPT: Final = "a accept, r reject, s skip, q quit > "
KEYS: Final = frozenset("arsq")


@dataclass(slots=True)
class Tally:
    """What a review did."""

    accepted: int = 0
    rejected: int = 0
    skipped: int = 0
    left: int = 0
    refused: int = 0
    """Skipped because accepting refused it, or the pending file was invalid."""

    def line(self) -> str:
        """One summary line."""
        return (
            f"review: {self.accepted} accepted, {self.rejected} rejected,"
            f" {self.skipped} skipped, {self.left} not reviewed"
        )


@contextlib.contextmanager
def _cbreak(stream: TextIO) -> Iterator[None]:
    """One key at a time from a terminal (no Enter); unchanged elsewhere."""
    try:
        import termios
        import tty

        fd = stream.fileno()
        saved = termios.tcgetattr(fd)
    except (ImportError, OSError, ValueError):
        yield
        return
    try:
        tty.setcbreak(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _key(stdin: TextIO, out: TextIO) -> str:
    """The next decision key; ``q`` at the end of input."""
    while True:
        out.write(PROMPT)
        out.flush()
        char = os.read(stdin.fileno(), 1).decode(errors="replace")
        if not char:
            out.write("\n")
            return "q"
        key = char.lower()
        out.write(f"{char if char.isprintable() else ''}\n")
        if key in KEYS:
            return key
        out.write("  press a, r, s or q\n")


def review(
    paths: Sequence[Path],
    stdin: TextIO,
    out: TextIO,
    project: Project | None = None,
    *,
    read: Callable[[Path], Change] = read_change,
) -> Tally:
    """Review ``paths`` one by one on a terminal (accepting runs ``project``'s guard;
    ``read`` reads each pending file); returns the tally."""
    with _cbreak(stdin):  # the whole time: a key typed ahead is not held for a newline
        return _review(paths, stdin, out, project, read)


def _review(
    paths: Sequence[Path],
    stdin: TextIO,
    out: TextIO,
    project: Project | None,
    read: Callable[[Path], Change],
) -> Tally:
    tally = Tally(left=len(paths))
    for index, path in enumerate(paths, 1):
        try:
            change = read(path)
        except HeaderlockError as error:
            tally.left -= 1
            tally.skipped += 1
            tally.refused += 1
            out.write(f"\n[{index}/{len(paths)}] not reviewed: {error}\n")
            continue
        out.write(f"\n[{index}/{len(paths)}] {change.line()}\n")
        out.write(diff(change).rstrip("\n") + "\n")
        key = _key(stdin, out)
        if key == "q":
            break
        tally.left -= 1
        if key == "s":
            tally.skipped += 1
            continue
        if key == "r":
            reject(change)
            tally.rejected += 1
            out.write(f"  rejected: removed {path.as_posix()}\n")
            continue
        try:
            written = accept(change, project)
        except HeaderlockError as error:
            tally.skipped += 1
            tally.refused += 1
            out.write(f"  not accepted: {error}\n")
            continue
        tally.accepted += 1
        out.write(f"  accepted: wrote {written.as_posix()}\n")
    out.write(tally.line() + "\n")
    out.flush()
    return tally
