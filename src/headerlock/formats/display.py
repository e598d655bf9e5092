"""Text from a recording, fixture or model made safe for a terminal: ``escaped``.

A recorded tool name, model name or message may hold terminal control sequences (ESC,
OSC), other control characters or bidirectional overrides (U+202E) that would rewrite
what a reader sees. Every such character becomes a visible escape (``\\x1b``,
``\\u202e``); line breaks and tabs stay. Used once at each output boundary: the command
line's streams (``EscapedStream``) and the pytest report text (the plugin's report hook
and summary lines). The HTML report escapes for HTML instead.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Iterator
from typing import Any, Final, TextIO, cast

_UNSAFE: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def _escape(match: re.Match[str]) -> str:
    point = ord(match.group())
    return f"\\x{point:02x}" if point <= 0xFF else f"\\u{point:04x}"


def escaped(text: str) -> str:
    """``text`` with control and bidi characters escaped (newlines and tabs kept)."""
    return _UNSAFE.sub(_escape, text)


class EscapedStream:
    """A text stream writing ``escaped`` text to ``raw`` (everything else: ``raw``'s)."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(escaped(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def raw_stream(stream: TextIO) -> TextIO:
    """The stream below an ``EscapedStream`` (for headerlock's own control sequences,
    such as the progress line's); ``stream`` itself otherwise."""
    return stream.raw if isinstance(stream, EscapedStream) else stream


def escaping(stream: TextIO) -> TextIO:
    """``stream`` writing escaped text (itself when it already does)."""
    return stream if isinstance(stream, EscapedStream) else cast(TextIO, EscapedStream(stream))


@contextlib.contextmanager
def escaped_output(out: TextIO | None = None) -> Iterator[TextIO]:
    """In the block ``sys.stdout`` and ``sys.stderr`` write escaped text; yields ``out``
    (default: the standard output) doing the same."""
    for stream in (sys.stdout, sys.stderr):  # what an encoding lacks: a backslash escape
        if stream in (sys.__stdout__, sys.__stderr__) and isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = escaping(sys.stdout), escaping(sys.stderr)
    try:
        yield escaping(out or saved[0])
    finally:
        sys.stdout, sys.stderr = saved
