"""The header lock of a class with no pin: its scenarios' headers, stored once.

An unpinned scenario of a class with no pinned scenario records ``<<system>>`` and
``<<tools>>`` like any unpinned one, plus ``headers``: the ids of its run's full
headers, in order. The headers themselves (config, system and tools, as the
runtime's ``request/header`` events carry them, secrets redacted) live in
``recordings/headers.lock.yaml`` (``formats.header_lock``, ``api: scenario``). A
replay whose header differs from its locked one fails naming the segment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from headerlock.errors import ReplayMismatch, WireRecordingError
from headerlock.formats.explain import changed_paths
from headerlock.formats.header_lock import (
    exclusive,
    header_id,
    load_lock,
    lock_path,
    merge_lock,
)
from headerlock.formats.scrub import full_headers, redact_secrets

API: Final = "scenario"
"""The ``api`` of a scenario header in a header lock (a wire header names its SDK's)."""


def locked_headers(events: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{id: header}`` of every full header of a live run, in the run's order."""
    found: dict[str, dict[str, Any]] = {}
    for _, header, _ in full_headers(events):
        entry = _entry(header.to_data())
        found.setdefault(header_id(entry), entry)
    return found


def run_header_ids(events: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The ids of a live run's full headers, one per ``request/header`` event."""
    return tuple(header_id(_entry(header.to_data())) for _, header, _ in full_headers(events))


def write_lock(recordings: Path, headers: Mapping[str, Mapping[str, Any]]) -> None:
    """Merge ``headers`` into ``recordings/headers.lock.yaml`` (locked, atomic; the lock
    keeps exactly the ids the directory's recordings refer to)."""
    path = lock_path(recordings)
    with exclusive(path):
        merge_lock(path, headers)


def check_locked(
    name: str,
    expected: Sequence[str],
    events: Sequence[Mapping[str, Any]],
    *,
    recordings: Path,
    command: str,
) -> None:
    """Raise ``ReplayMismatch`` unless the live run's full headers are the locked ones
    (``expected`` ids): one diff per changed header, naming the segment (``config.…``,
    ``system``, ``tools.<name>…``)."""
    path = lock_path(recordings)
    live = [(seq, _entry(h.to_data())) for seq, h, _ in full_headers(events)]
    actual = [header_id(data) for _, data in live]
    if list(actual) == list(expected):
        return
    try:
        lock = load_lock(path)
    except WireRecordingError as error:
        raise ReplayMismatch(
            f"scenario {name!r}: its header is locked in {path.as_posix()}, which cannot be"
            f" read ({error}); re-record: {command}",
            scenario=name,
        ) from None
    where = path.as_posix()
    problems = []
    if len(actual) != len(expected):
        problems.append(
            f"    the run sent {len(actual)} full header(s), the recording locks {len(expected)}"
        )
    for (seq, data), old_id in zip(live, expected, strict=False):
        if header_id(data) == old_id:
            continue
        old = lock.headers.get(old_id)
        if old is None:
            problems.append(f"    header {old_id} is missing from {where}")
            continue
        paths = changed_paths(_by_tool(old), _by_tool(data))
        problems.append(f"    request/header at seq {seq} (locked as {old_id}):")
        problems.extend(f"      {p}" for p in paths)
    raise ReplayMismatch(
        f"scenario {name!r}: its header no longer matches the one locked in {where}\n"
        + "\n".join(problems)
        + f"\n\nif the change is intended, re-record: {command}",
        scenario=name,
    )


def _by_tool(header: Mapping[str, Any]) -> dict[str, Any]:
    """``header`` plus its tool names in order (``changed_paths`` keys tools by name, so
    a reorder alone shows as ``tool_order``)."""
    data = dict(header)
    tools = data.get("tools")
    if isinstance(tools, list):
        data["tool_order"] = [t.get("name") if isinstance(t, Mapping) else t for t in tools]
    return data


def _entry(header: Mapping[str, Any]) -> dict[str, Any]:
    """A run's header as its header lock holds it (secrets redacted)."""
    return {"api": API, **redact_secrets(dict(header))}
