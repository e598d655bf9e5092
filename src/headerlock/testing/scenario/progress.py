"""Progress of long command-line runs: count, rate and time left, on terminals only.

On a terminal the status line (``[######........] 12/40 runs  3.1/s  ETA 0:09``)
is rewritten in place and erased at the end; anywhere else (a CI log, a pipe)
it stays silent, or, for ``every_tenth``, writes a plain line per tenth of the
work (``progress: 12/40 runs``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

CLEAR = "\r\x1b[K"
"""Back to the start of the line and erase it."""


def eta(seconds: float) -> str:
    """``0:09``, ``12:30`` or ``1:02:03``."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """The status line of a run of ``total`` items (``noun`` names them)."""

    def __init__(
        self,
        out: TextIO,
        total: int,
        noun: str,
        *,
        every_tenth: bool = False,
        width: int = 20,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.out, self.total, self.noun, self.width = out, total, noun, width
        self.every_tenth = every_tenth
        self.clock = clock
        self.tty = _isatty(out)
        self.started = clock()
        self.done = 0
        self.last_tenth = 0
        self.shown = False

    def text(self) -> str:
        """The status line (without control characters)."""
        total = max(self.total, 1)
        filled = self.width * min(self.done, total) // total
        bar = "#" * filled + "." * (self.width - filled)
        line = f"[{bar}] {self.done}/{self.total} {self.noun}"
        elapsed = self.clock() - self.started
        if self.done and elapsed > 0:
            rate = self.done / elapsed
            line += f"  {rate:.1f}/s"
            if self.done < self.total:
                line += f"  ETA {eta((self.total - self.done) / rate)}"
        return line

    def update(self, done: int, total: int | None = None) -> None:
        """``done`` items of ``total`` (default: the total given at the start) are finished."""
        self.done = done
        if total is not None:
            self.total = total
        if self.tty:
            self.draw()
        elif self.every_tenth:
            tenth = done * 10 // max(self.total, 1)
            if tenth > self.last_tenth or done == self.total:
                self.last_tenth = tenth
                print(f"progress: {done}/{self.total} {self.noun}", file=self.out, flush=True)

    def draw(self) -> None:
        """Show the status line again (a terminal only)."""
        if self.tty:
            self.out.write(CLEAR + self.text())
            self.out.flush()
            self.shown = True

    def clear(self) -> None:
        """Erase the status line, to print a line of output above it."""
        if self.shown:
            self.out.write(CLEAR)
            self.out.flush()
            self.shown = False

    def finish(self) -> None:
        """Erase the status line for good."""
        self.clear()


def _isatty(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False
