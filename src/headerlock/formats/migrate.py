"""``headerlock migrate``: rewrite headerlock's files of an older format version.

Each path is a file or a directory (searched at any depth for ``*.yaml`` and
``*.yaml.new``). A file is migrated when it is one of headerlock's (``schema``: a
wire recording, a scenario recording, a header lock, a fixture, or a pending file of
one of them) at an older version: it is read through the schema's steps and written
again as headerlock writes it now, atomically, under the recording's write lock, and
only when it did not change since it was read. A pending file's ``base`` line follows
its recording's new bytes (it stays reviewable). Any other file is left alone; a file
that cannot be read, or says a version newer than this headerlock knows, is one line
naming it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from headerlock.errors import HeaderlockError, InputFileError, YamlError
from headerlock.formats import schema
from headerlock.formats.atomic import atomic_write
from headerlock.formats.pending import SUFFIX, base_of, pending_path, read_pending
from headerlock.formats.strict_yaml import loads, read_text
from headerlock.formats.wire_recording import (
    WIRE_MAX_BYTES,
    WIRE_MAX_DEPTH,
    is_wire_data,
    parse_wire_recording,
)
from headerlock.formats.write_lock import write_unless_changed

Status = Literal["current", "migrate", "foreign", "error"]


@dataclass(frozen=True, slots=True)
class Found:
    """What one file is and what ``migrate`` does with it."""

    path: Path
    status: Status
    kind: str = ""
    version: int | None = None
    text: str | None = None
    """The file's new text (``status == "migrate"``)."""
    old: bytes = b""
    """The file's bytes when read (a write happens only if they are still these)."""
    error: str = ""

    def line(self, *, check: bool) -> str:
        """The line ``migrate`` prints for this file."""
        where = self.path.as_posix()
        if self.status == "error":
            return f"{where}: {self.error}"
        done = "would migrate" if check else "migrated"
        return f"{where}: {self.kind} format version {self.version} -> {done}"


def files(paths: Sequence[Path]) -> Iterator[Path]:
    """The files under ``paths`` that may be headerlock's, each once, sorted per path."""
    seen: set[Path] = set()
    for path in paths:
        found = (
            [path]
            if not path.is_dir()
            else sorted(p for p in path.rglob("*") if p.name.endswith((".yaml", ".yaml" + SUFFIX)))
        )
        for item in found:
            if item not in seen and not item.is_dir():
                seen.add(item)
                yield item


def _kind(data: Any) -> schema.FileKind | None:
    """The kind of loaded data (``None``: not headerlock's)."""
    if not isinstance(data, dict):
        return None
    if is_wire_data(data):
        return schema.WIRE
    if data.get("kind") == "header-lock":
        return schema.HEADER_LOCK
    if "kind" in data:
        return None
    if {"version", "scenario", "events"} <= set(data):
        return schema.SCENARIO
    if "steps" in data:
        return schema.FIXTURE
    return None


def _rewriter(kind: schema.FileKind) -> Callable[[str, str], str]:
    """How a file of ``kind`` at an older version is written now (only kinds with
    steps have one)."""
    if kind is schema.WIRE:
        return lambda text, where: parse_wire_recording(text, path=where).to_text()
    raise AssertionError(f"{kind.name} has steps but no rewriter")  # pragma: no cover


def _text(path: Path) -> tuple[str, str, bytes]:
    """``(head, body, bytes)``: a pending file's comment lines and its recording text,
    or no head and the whole text."""
    if path.name.endswith(SUFFIX):
        pending = read_pending(path)
        raw = path.read_bytes()
        head = "\n".join(raw.decode("utf-8").split("\n")[: pending.header_lines]) + "\n"
        return head, pending.text, raw
    text = read_text(path, max_bytes=WIRE_MAX_BYTES, missing="no such file")
    return "", text, text.encode("utf-8")


def inspect(path: Path) -> Found:
    """Read ``path`` and say what ``migrate`` would do with it (never raises for a
    file it cannot read: an ``error`` naming why)."""
    where = path.as_posix()
    try:
        head, body, raw = _text(path)
        data = loads(body, path=where, max_depth=WIRE_MAX_DEPTH)
        kind = _kind(data)
        if kind is None:
            return Found(path, "foreign")
        found = data.get("version", 1) if kind is schema.FIXTURE else data.get("version")
        schema.upgrade(kind, {**data, "version": found})  # a newer version: refused
        if found == kind.version:
            return Found(path, "current", kind.name, found)
        text = head + _rewriter(kind)(body, where)
        return Found(path, "migrate", kind.name, found, text, raw)
    except schema.VersionError as error:
        return Found(path, "error", error=error.reason)
    except YamlError as error:
        return Found(path, "error", error=_yaml_reason(error))
    except HeaderlockError as error:
        return Found(path, "error", error=_reason(str(error), where))
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        return Found(path, "error", error=f"cannot read it: {reason}")


def _yaml_reason(error: YamlError) -> str:
    return f"line {error.line}: {error.reason}" if error.line else error.reason


def _reason(message: str, where: str) -> str:
    return " ".join(message.removeprefix(f"{where}: ").split())


def write(found: Found) -> str | None:
    """Write a file ``inspect`` found to migrate (under its write lock, only when its
    bytes are still those it had); returns its pending file's new ``base`` line value
    when the recording's pending file followed it."""
    assert found.text is not None and found.status == "migrate"
    path = found.path
    old_base = "sha256:" + hashlib.sha256(found.old).hexdigest()

    def unchanged() -> bool:
        try:
            return path.read_bytes() == found.old
        except OSError:
            return False

    write_unless_changed(
        path,
        lambda: atomic_write(path, found.text or "", max_bytes=WIRE_MAX_BYTES + 4096),
        unchanged=unchanged,
        since="`headerlock migrate` read it",
    )
    if path.name.endswith(SUFFIX):
        return None
    return _follow(pending_path(path), old_base, base_of(path))


_BASE_LINE: Final = "# base: "


def _follow(pending: Path, old_base: str, new_base: str) -> str | None:
    """Point ``pending``'s base at its recording's new bytes when it pointed at the old."""
    try:
        raw = pending.read_bytes()
    except OSError:
        return None
    lines = raw.decode("utf-8", errors="replace").split("\n")
    if len(lines) < 2 or lines[1] != _BASE_LINE + old_base or pending.is_symlink():
        return None
    lines[1] = _BASE_LINE + new_base
    text = "\n".join(lines)
    write_unless_changed(
        pending,
        lambda: atomic_write(pending, text),
        unchanged=lambda: pending.read_bytes() == raw,
        since="`headerlock migrate` read it",
    )
    return new_base


EXIT_OK: Final = 0
EXIT_WOULD_CHANGE: Final = 1
EXIT_BAD_INPUT: Final = 2


def migrate_command(paths: Sequence[Path], *, check: bool, say: Callable[[str], None]) -> int:
    """Migrate (``check``: only name) the older files under ``paths``; the exit code:
    0 nothing (else) to do, 1 ``check`` found files to migrate, 2 a file could not be read
    or migrated (each named on one line; the others are still migrated). No ``paths``:
    the project's recordings/ and fixtures/."""
    paths = default_paths(paths)
    counts = {"migrate": 0, "current": 0, "foreign": 0, "error": 0}
    for path in paths:
        if not path.exists() and not path.is_symlink():
            say(f"{path.as_posix()}: no such file or directory")
            counts["error"] += 1
    for path in files([p for p in paths if p.exists()]):
        found = inspect(path)
        if found.status == "migrate" and not check:
            try:
                write(found)
            except HeaderlockError as error:
                found = Found(path, "error", error=_reason(str(error), path.as_posix()))
        counts[found.status] += 1
        if found.status in ("migrate", "error"):
            say(found.line(check=check))
    done = "to migrate" if check else "migrated"
    say(
        f"{counts['migrate']} {done}, {counts['current']} current,"
        f" {counts['foreign']} not headerlock's (left alone), {counts['error']} failed"
    )
    if counts["error"]:
        return EXIT_BAD_INPUT
    return EXIT_WOULD_CHANGE if check and counts["migrate"] else EXIT_OK


def default_paths(paths: Sequence[Path]) -> list[Path]:
    """``migrate``'s PATHs, or the project's recordings/ and fixtures/ (bad input when
    neither is here)."""
    if paths:
        return list(paths)
    found = [p for p in (Path("recordings"), Path("fixtures")) if p.is_dir()]
    if not found:
        raise InputFileError(
            "no recordings/ or fixtures/ here: run it from the project root, or name the"
            " files and folders to migrate",
            path=".",
        )
    return found
