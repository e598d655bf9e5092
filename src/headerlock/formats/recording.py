"""Recordings: what a run produced, as canonical YAML in ``recordings/<name>.yaml``."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from headerlock.errors import (
    CorruptLogError,
    InputFileError,
    OutputFileError,
    RecordingError,
    SerializationError,
    YamlError,
)
from headerlock.formats import placeholders, schema
from headerlock.formats.atomic import atomic_write
from headerlock.formats.canonical_yaml import dump_chunks
from headerlock.formats.explain import changed_paths
from headerlock.formats.scrub import find_secret, is_scrubbed, scrub_events
from headerlock.formats.strict_yaml import MAX_BYTES, dumps, loads, read_text
from headerlock.runtime.session import check_events_data

FORMAT_VERSION: Final = schema.SCENARIO.version
_KEYS: Final = {
    "version",
    "scenario",
    "app",
    "pinned",
    "header_class",
    "events",
    "transcript",
    "headers",
}
_HEADER_ID: Final = re.compile(r"[0-9a-f]{12}")
_REQUIRED: Final = ("version", "scenario", "app", "pinned", "header_class", "events")


@dataclass(frozen=True, slots=True)
class Recording:
    """A normalized run: the session log and, for ACP scenarios, the client transcript."""

    scenario: str
    app: str
    pinned: bool
    header_class: str
    events: list[dict[str, Any]]
    transcript: list[dict[str, Any]] | None = field(default=None)
    headers: tuple[str, ...] | None = field(default=None)
    """Unpinned, in a class with no pin: the ids of the run's full headers, in order,
    in the header lock beside the recording (``formats.header_lock``)."""

    def to_data(self) -> dict[str, Any]:
        """Plain data, ``transcript`` omitted when absent."""
        data: dict[str, Any] = {
            "version": FORMAT_VERSION,
            "scenario": self.scenario,
            "app": self.app,
            "pinned": self.pinned,
            "header_class": self.header_class,
            "events": self.events,
        }
        if self.transcript is not None:
            data["transcript"] = self.transcript
        if self.headers is not None:
            data["headers"] = list(self.headers)
        return data

    def to_text(self) -> str:
        """Canonical YAML text."""
        return dumps(self.to_data())

    def same_text(self, other: Recording) -> bool:
        """``self.to_text() == other.to_text()``, compared a chunk at a time (neither
        whole text is built)."""
        return same_chunks(dump_chunks(self.to_data()), dump_chunks(other.to_data()))


def same_chunks(left: Iterable[str], right: Iterable[str]) -> bool:
    """Whether two streams of text pieces join to the same string."""
    a_pieces, b_pieces = iter(left), iter(right)
    a = b = ""
    while True:
        while not a:
            piece = next(a_pieces, None)
            if piece is None:
                break
            a = piece
        while not b:
            piece = next(b_pieces, None)
            if piece is None:
                break
            b = piece
        if not a or not b:
            return not a and not b
        size = min(len(a), len(b))
        if a[:size] != b[:size]:
            return False
        a, b = a[size:], b[size:]


def recording_from_data(data: Any, *, path: str) -> Recording:
    """Validate loaded data; errors say what is wrong and where."""
    if not isinstance(data, Mapping):
        raise RecordingError(f"a recording is a mapping, got {type(data).__name__}", path=path)
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise RecordingError(f"unknown key {unknown[0]!r}", path=path)
    for key in _REQUIRED:
        if key not in data:
            raise RecordingError(f"missing key {key!r}", path=path)
    try:
        data, _ = schema.upgrade(schema.SCENARIO, dict(data))
    except schema.VersionError as error:
        raise RecordingError(error.reason, path=path) from None
    for key, kind in (("scenario", str), ("app", str), ("pinned", bool), ("header_class", str)):
        if not isinstance(data[key], kind):
            raise RecordingError(f"{key} must be a {kind.__name__}, got {data[key]!r}", path=path)
    events = data["events"]
    if not isinstance(events, list):
        raise RecordingError("events must be a list", path=path)
    try:
        check_events_data(events)
    except CorruptLogError as error:
        raise RecordingError(f"events: {error}", path=path) from None
    transcript = data.get("transcript")
    if transcript is not None and not isinstance(transcript, list):
        raise RecordingError("transcript must be a list", path=path)
    headers = data.get("headers")
    if headers is not None and (
        not isinstance(headers, list)
        or not all(isinstance(h, str) and _HEADER_ID.fullmatch(h) for h in headers)
    ):
        raise RecordingError("headers must be a list of 12-hex-digit header ids", path=path)
    leaked = find_secret({"events": events, "transcript": transcript})
    if leaked is not None:
        raise RecordingError(
            f"{leaked[0]} holds the value of {leaked[1]}; a secret must never be committed:"
            f" rotate it and re-record (secrets are written as {placeholders.SECRET})",
            path=path,
        )
    if not data["pinned"] and not is_scrubbed(events):
        scrubbed = scrub_events(events)
        if scrubbed != events:
            where = "; ".join(changed_paths({"events": events}, {"events": scrubbed})[:3])
            raise RecordingError(
                f"unpinned recording is not normalized (scrubbing changes {where}); re-record it"
                " instead of editing it",
                path=path,
            )
    return Recording(
        scenario=data["scenario"],
        app=data["app"],
        pinned=data["pinned"],
        header_class=data["header_class"],
        events=list(events),
        transcript=list(transcript) if transcript is not None else None,
        headers=tuple(headers) if headers is not None else None,
    )


def parse_recording(text: str, *, path: str) -> Recording:
    """Parse and validate recording text."""
    if not text.strip():
        raise RecordingError("file is empty", path=path)
    try:
        data = loads(text, path=path)
    except YamlError as error:
        raise RecordingError(
            error.reason, path=f"{path}:{error.line}" if error.line else path
        ) from None
    return recording_from_data(data, path=path)


def load_recording(path: Path) -> Recording:
    """Read and validate ``path``."""
    try:
        text = read_text(path, missing="no such recording")
    except YamlError as error:
        raise RecordingError(error.reason, path=str(path)) from None
    return parse_recording(text, path=str(path))


def save_recording(recording: Recording, path: Path) -> None:
    """Write ``recording`` atomically; see ``write_recording_text``."""
    try:
        text = recording.to_text()
    except SerializationError as error:
        raise SerializationError(f"{path}: {error}; nothing written") from None
    write_recording_text(path, text)


def write_recording_text(path: Path, text: str) -> None:
    """Write recording ``text`` atomically, refusing what ``load_recording`` would refuse.

    Larger than ``MAX_BYTES`` or not a valid recording is an ``OutputFileError``
    naming ``path``, raised before anything is written (the old file stays).
    """
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        raise OutputFileError(
            f"recording is {size} bytes, more than the limit of {MAX_BYTES} that reading"
            " accepts; nothing written",
            path=str(path),
        )
    try:
        parse_recording(text, path=str(path))
    except InputFileError as error:
        raise OutputFileError(
            f"the recording would not load back ({error.reason}); nothing written",
            path=str(path),
        ) from None
    atomic_write(path, text, max_bytes=MAX_BYTES)
