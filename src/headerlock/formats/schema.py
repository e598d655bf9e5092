"""Every kind of file headerlock writes or reads, its format version, and the steps
that bring an older file to the current version.

=====================  ==========================  =========  =========================
kind                   where                       version    how a file says so
=====================  ==========================  =========  =========================
``wire``               ``recordings/**/*.yaml``    3          ``kind: wire``, ``version``
``scenario``           ``recordings/<name>.yaml``  1          ``version`` (no ``kind``)
``header-lock``        ``headers.lock.yaml``       1          ``kind: header-lock``
``fixture``            ``fixtures/<name>.yaml``    1          ``version`` (optional: 1)
``manifest``           ``--headerlock-manifest``   1          JSON ``format``/``version``
``pending``            ``<recording>.yaml.new``    its own's  the recording after ``#`` lines
=====================  ==========================  =========  =========================

A step is a pure function of loaded data, from version ``n`` to ``n + 1``: readers
apply the steps in memory (``upgrade``), so an older file still replays, and
``headerlock migrate`` writes the result (``formats.migrate``). A version newer than
the current one is refused with the file named: this headerlock cannot know it.

Wire version 2 (streams as text): a stream's ``events`` list of flow mappings became
its ``stream`` text, one event per line (``stream_text``), served without parsing.
Wire version 3 (continuations): a request whose messages begin with an earlier
request's whole list may say ``continues: N`` and list only the messages after it
(``wire_continuations``); a version 2 file, every list whole, is version 3 data as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from headerlock.formats.sse import SseEvent
from headerlock.formats.stream_text import stream_text

Step = Callable[[dict[str, Any]], dict[str, Any]]
"""Data of version ``n`` (the top mapping, read-only) to data of version ``n + 1``."""


@dataclass(frozen=True, slots=True)
class FileKind:
    """One kind of file: its name, its current version and the steps up to it."""

    name: str
    version: int
    noun: str
    """What messages call a file of the kind."""
    steps: Mapping[int, Step] = field(default_factory=dict)
    """From version ``n`` (the key) to ``n + 1``."""

    def oldest(self) -> int:
        """The oldest version a step leads from (the current one when there is none)."""
        return min(self.steps, default=self.version)


def _sse_event(item: Any) -> Any:
    """A version 1 event mapping as an ``SseEvent`` (``None``: not a well-formed one)."""
    if not isinstance(item, Mapping) or not set(item) <= {"event", "id", "json", "text"}:
        return None
    kinds = [k for k in ("json", "text") if k in item]
    name, event_id = item.get("event"), item.get("id")
    if len(kinds) != 1 or not all(v is None or isinstance(v, str) for v in (name, event_id)):
        return None
    if kinds[0] == "text" and not isinstance(item["text"], str):
        return None
    return SseEvent(item[kinds[0]], kinds[0] == "json", name, event_id)


def _stream_as_text(response: Any) -> Any:
    """A response whose ``events`` all have a line, with its ``stream`` text instead."""
    if not isinstance(response, Mapping) or not isinstance(response.get("events"), list):
        return response
    events = [_sse_event(item) for item in response["events"]]
    if any(event is None for event in events):
        return response  # not well-formed: the reader names what is wrong
    text = stream_text(events)
    if text is None:
        return response
    changed = {k: v for k, v in response.items() if k != "events"}
    changed["stream"] = text
    return changed


def _entries_streams_as_text(entries: Any) -> Any:
    if not isinstance(entries, list):
        return entries
    out = []
    for entry in entries:
        if isinstance(entry, Mapping) and "response" in entry:
            response = _stream_as_text(entry["response"])
            if response is not entry["response"]:
                entry = {**entry, "response": response}
        out.append(entry)
    return out


def wire_1_to_2(data: dict[str, Any]) -> dict[str, Any]:
    """Wire version 1 to 2: each stream's events as its text, one event per line."""
    upgraded = dict(data)
    for key in ("requests", "http"):
        if key in upgraded:
            upgraded[key] = _entries_streams_as_text(upgraded[key])
    upgraded["version"] = 2
    return upgraded


def wire_2_to_3(data: dict[str, Any]) -> dict[str, Any]:
    """Wire version 2 to 3: the same data (a request may only now continue an earlier one)."""
    return {**data, "version": 3}


WIRE: Final = FileKind("wire", 3, "wire", {1: wire_1_to_2, 2: wire_2_to_3})
SCENARIO: Final = FileKind("scenario", 1, "recording")
HEADER_LOCK: Final = FileKind("header-lock", 1, "header lock")
FIXTURE: Final = FileKind("fixture", 1, "fixture")
MANIFEST: Final = FileKind("manifest", 1, "manifest")
KINDS: Final = (WIRE, SCENARIO, HEADER_LOCK, FIXTURE, MANIFEST)
"""Every kind with a version of its own (a pending file holds a recording: its kind's)."""


class VersionError(ValueError):
    """A version no step leads from: ``reason`` says why, in one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def upgrade(kind: FileKind, data: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """``data`` (a mapping with an integer ``version``) brought to ``kind``'s version,
    and the version it had; ``VersionError`` for a newer version or one no step leads
    from. Data at the current version is returned as it is."""
    found = data.get("version")
    if not isinstance(found, int) or isinstance(found, bool):
        raise VersionError(f"version must be an integer, got {found!r}")
    if found > kind.version:
        raise VersionError(
            f"{kind.noun} format version {found} is newer than this headerlock reads"
            f" ({kind.version}); upgrade headerlock"
        )
    if found < kind.oldest():
        reads = f"{kind.oldest()} to {kind.version}" if kind.steps else str(kind.version)
        raise VersionError(
            f"unknown {kind.noun} format version {found} (this headerlock reads {reads})"
        )
    version = found
    while version < kind.version:
        data = kind.steps[version](data)
        version += 1
    return data, found


def migrate_note(path: str, kind: FileKind, found: int) -> str:
    """The one line that says an older file was read and how to update it."""
    return (
        f"{path}: {kind.noun} format version {found}, read as version {kind.version};"
        " `headerlock migrate` would update it"
    )
