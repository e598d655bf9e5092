"""File-safe, reversible names for Python-test recordings.

A Python test's recording lives at
``<recordings>/<test file relative to the rootdir, without .py>/<test name>.yaml``.
Every path part is encoded so that distinct names never share a file, on any
filesystem: the output is lowercase only (so case-insensitive filesystems fold
nothing), ``a-z 0-9 _ -`` and inner dots stay as they are, an uppercase ASCII
letter becomes ``+`` and the letter (``TestAgent`` -> ``+test+agent``), and every
other byte of the UTF-8 text becomes ``%xx``. Leading and trailing dots and the
first letter of a Windows device name (``con``, ``nul``, ...) are escaped too.
``decode_part`` reverses it. A part longer than ``MAX_PART`` keeps a prefix and
a hash after ``~`` (a character the encoding never emits) and is not reversible.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import Final

MAX_PART: Final = 120
"""Longest encoded part kept as is (room for ``.yaml`` and temp-file names)."""

_PLAIN: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-.")
_UPPER: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DEVICES: Final = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"com{i}" for i in "123456789"}
    | {f"lpt{i}" for i in "123456789"}
)
_TOKEN: Final = re.compile(r"\+[a-z]|%[0-9a-f]{2}|[a-z0-9_.-]")


def encode_part(text: str) -> str:
    """``text`` as one file-safe, lowercase path part (see the module docstring)."""
    if not text:
        raise ValueError("an empty name has no file name")
    out: list[str] = []
    for index, char in enumerate(text):
        edge = index in (0, len(text) - 1)
        if char in _UPPER:
            out.append("+" + char.lower())
        elif char in _PLAIN and not (char == "." and edge):
            out.append(char)
        else:
            out.extend(f"%{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))
    encoded = "".join(out)
    if encoded.split(".", 1)[0] in _DEVICES:
        encoded = f"%{ord(encoded[0]):02x}{encoded[1:]}"
    if len(encoded) > MAX_PART:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        encoded = f"{encoded[: MAX_PART - 17]}~{digest}"
    return encoded


def decode_part(part: str) -> str | None:
    """The text ``encode_part`` made ``part`` from; ``None`` for a hashed or foreign name."""
    tokens = _TOKEN.findall(part)
    if "".join(tokens) != part:
        return None
    raw = bytearray()
    for token in tokens:
        if token.startswith("+"):
            raw += token[1].upper().encode("ascii")
        elif token.startswith("%"):
            raw.append(int(token[1:], 16))
        else:
            raw += token.encode("ascii")
    try:
        text = raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None
    return text if encode_part(text) == part else None


def module_key(path: Path, rootdir: Path) -> PurePath:
    """The test file ``path`` relative to ``rootdir``, without its suffix, each part encoded."""
    absolute = path.resolve()
    relative: PurePath
    try:
        relative = absolute.relative_to(rootdir.resolve())
    except ValueError:
        relative = PurePath(*absolute.parts[1:])  # outside the rootdir: keep the whole path
    parts = [*relative.parent.parts, relative.stem]
    return PurePath(*(encode_part(p) for p in parts))


def name_in_file(parts: Sequence[str]) -> str:
    """A test's name inside its file from the node names below the module:
    ``Class.test[param]`` (class names are identifiers, so the dots are unambiguous)."""
    return ".".join(parts)


def python_recording_path(recordings: Path, module: PurePath, name: str) -> Path:
    """``<recordings>/<module key>/<encoded name>.yaml``."""
    return recordings / module / f"{encode_part(name)}.yaml"
