"""The usage manifest of one pytest run (``--headerlock-manifest PATH``), as JSON.

A CI job writes one; ``headerlock unused`` merges the jobs' manifests. Every path in it
is relative to the pytest rootdir (``/`` separated), so a merge can run in another
checkout. The fields (format version ``FORMAT_VERSION``)::

    format        "headerlock-manifest"
    version       1
    headerlock    the headerlock version that wrote it
    rootdir_name  the rootdir's folder name (for messages only)
    recordings    the recordings directory;  fixtures: the fixtures directory
    listing       {"count", "sha256"} of the *.yaml files below recordings/ at the start
    collected     {"count", "sha256", "zlib"}: the node ids collected before deselection
                  (sha256 of their sorted lines) and, zlib-compressed base64 JSON, the
                  ids and the owner spaces (``Space``) with their items as indices
    selection     {"paths", "keyword", "markexpr", "deselect", "splits", "group",
                  "randomly_seed", "workers"}: how the run chose its tests
    interrupted   whether the session was interrupted (Ctrl-C, a collection error)
    exitstatus    pytest's exit status;  lost_workers: pytest-xdist workers that went down
    tests         node id -> passed | failed | skipped | unfinished, per selected test
    used          recording -> the node ids that used it
    skipped       node id -> the recording a skipped test keeps
    written, pending, stale   recordings written, pending files left (``.yaml.new``),
                  pending files found stale (their recording changed since)
    kept          recording -> the failed test that did not replace it
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from headerlock.errors import InputFileError
from headerlock.formats import schema
from headerlock.formats.atomic import atomic_write

FORMAT: Final = "headerlock-manifest"
FORMAT_VERSION: Final = schema.MANIFEST.version
OUTCOMES: Final = ("passed", "failed", "skipped", "unfinished")
MAX_BYTES: Final = 256 * 1024 * 1024


def digest_lines(lines: Iterable[str]) -> str:
    """``sha256:<hex>`` of ``lines`` sorted, one per line."""
    return "sha256:" + hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class SpaceEntry:
    """An owner space of recordings as the manifest keeps it: ``kind`` (module or
    fixtures), ``key`` (the module key below recordings/, or the fixtures directory),
    the collector's node id and its items (``None``: not collected whole)."""

    root: str
    kind: str
    key: str
    items: tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class Manifest:
    """One run's manifest (see the module docstring); ``source`` is the file it came from."""

    headerlock: str
    recordings: str
    fixtures: str
    listing: Mapping[str, Any]
    collected: tuple[str, ...]
    spaces: tuple[SpaceEntry, ...]
    selection: Mapping[str, Any]
    interrupted: bool
    exitstatus: int
    lost_workers: tuple[str, ...]
    tests: Mapping[str, str]
    used: Mapping[str, tuple[str, ...]]
    skipped: Mapping[str, str]
    written: tuple[str, ...] = ()
    pending: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    kept: Mapping[str, str] = field(default_factory=dict)
    rootdir_name: str = ""
    source: str = ""

    @property
    def collection(self) -> str:
        """The digest of the node ids collected before deselection."""
        return digest_lines(self.collected)

    @property
    def group(self) -> str | None:
        """``K/N`` when pytest-split chose this run's tests."""
        splits, group = self.selection.get("splits"), self.selection.get("group")
        return f"{group}/{splits}" if splits and group else None

    def to_data(self) -> dict[str, Any]:
        """The JSON object."""
        index = {nodeid: n for n, nodeid in enumerate(sorted(self.collected))}
        spaces = [
            [s.root, s.kind, s.key, None if s.items is None else [index[i] for i in s.items]]
            for s in self.spaces
        ]
        packed = json.dumps({"ids": sorted(self.collected), "spaces": spaces}, sort_keys=True)
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "headerlock": self.headerlock,
            "rootdir_name": self.rootdir_name,
            "recordings": self.recordings,
            "fixtures": self.fixtures,
            "listing": dict(self.listing),
            "collected": {
                "count": len(self.collected),
                "sha256": self.collection,
                "zlib": base64.b64encode(zlib.compress(packed.encode(), 9)).decode("ascii"),
            },
            "selection": dict(self.selection),
            "interrupted": self.interrupted,
            "exitstatus": self.exitstatus,
            "lost_workers": sorted(self.lost_workers),
            "tests": dict(sorted(self.tests.items())),
            "used": {path: sorted(ids) for path, ids in sorted(self.used.items())},
            "skipped": dict(sorted(self.skipped.items())),
            "written": sorted(self.written),
            "pending": sorted(self.pending),
            "stale": sorted(self.stale),
            "kept": dict(sorted(self.kept.items())),
        }


def write_manifest(path: Path, manifest: Manifest) -> None:
    """Write ``manifest`` to ``path`` atomically (a reader sees all of it or nothing)."""
    text = json.dumps(manifest.to_data(), indent=1, sort_keys=True, ensure_ascii=False)
    atomic_write(path, text + "\n")


class _Bad(Exception):
    """A field of the manifest is missing or of the wrong type."""


def read_manifest(path: Path) -> Manifest:
    """The manifest at ``path``; anything else is one ``InputFileError`` naming it."""
    where = path.as_posix()
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise InputFileError(
            f"{where}: cannot read the manifest: {error.strerror or error}", path=where
        ) from None
    if len(raw) > MAX_BYTES:
        raise InputFileError(f"{where}: larger than {MAX_BYTES} bytes", path=where)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        reason = " ".join(str(error).split())
        raise InputFileError(
            f"{where}: not a headerlock manifest: invalid JSON ({reason})", path=where
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputFileError(
            f'{where}: not a headerlock manifest (no "format": "{FORMAT}"; write one with'
            " pytest --headerlock-manifest PATH)",
            path=where,
        )
    try:
        data, _ = schema.upgrade(schema.MANIFEST, data)
    except schema.VersionError as error:
        raise InputFileError(f"{where}: {error.reason}", path=where) from None
    try:
        return _parse(data, where)
    except _Bad as error:
        raise InputFileError(
            f"{where}: not a valid headerlock manifest: {error}", path=where
        ) from None


def _get(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise _Bad(f"{key!r} is missing or not {_kind_name(kind)}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {
        str: "a string",
        int: "a number",
        bool: "true or false",
        list: "a list",
        dict: "an object",
    }
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _strings(value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Bad(f"{key!r} is not a list of strings")
    return tuple(value)


def _string_map(value: Any, key: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _Bad(f"{key!r} is not an object of strings")
    return dict(value)


def _parse(data: Mapping[str, Any], where: str) -> Manifest:
    collected = _get(data, "collected", dict)
    ids, spaces = _unpack(collected)
    if len(ids) != collected.get("count") or digest_lines(ids) != collected.get("sha256"):
        raise _Bad("'collected' does not match its count and sha256")
    tests = _string_map(_get(data, "tests", dict), "tests")
    odd = sorted(o for o in set(tests.values()) if o not in OUTCOMES)
    if odd:
        raise _Bad(f"'tests' has the outcome {odd[0]!r} (expected one of {', '.join(OUTCOMES)})")
    used = _get(data, "used", dict)
    return Manifest(
        headerlock=_get(data, "headerlock", str),
        rootdir_name=str(data.get("rootdir_name", "")),
        recordings=_get(data, "recordings", str),
        fixtures=_get(data, "fixtures", str),
        listing=_get(data, "listing", dict),
        collected=ids,
        spaces=spaces,
        selection=_get(data, "selection", dict),
        interrupted=_get(data, "interrupted", bool),
        exitstatus=_get(data, "exitstatus", int),
        lost_workers=_strings(data.get("lost_workers", []), "lost_workers"),
        tests=tests,
        used={path: _strings(ids, "used") for path, ids in used.items()},
        skipped=_string_map(_get(data, "skipped", dict), "skipped"),
        written=_strings(data.get("written", []), "written"),
        pending=_strings(data.get("pending", []), "pending"),
        stale=_strings(data.get("stale", []), "stale"),
        kept=_string_map(data.get("kept", {}), "kept"),
        source=where,
    )


def _unpack(collected: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[SpaceEntry, ...]]:
    try:
        packed = json.loads(zlib.decompress(base64.b64decode(collected["zlib"], validate=True)))
        ids = _strings(packed["ids"], "collected")
        spaces = tuple(
            SpaceEntry(str(root), str(kind), str(key), _items(items, ids))
            for root, kind, key, items in packed["spaces"]
        )
    except _Bad:
        raise
    except (KeyError, TypeError, ValueError, IndexError, zlib.error) as error:
        raise _Bad(f"'collected' cannot be unpacked ({type(error).__name__})") from None
    return ids, spaces


def _items(indices: Any, ids: tuple[str, ...]) -> tuple[str, ...] | None:
    if indices is None:
        return None
    if not all(type(i) is int and 0 <= i < len(ids) for i in indices):
        raise _Bad("'collected' has a space item that is not one of its ids")
    return tuple(ids[i] for i in indices)


def recordings_listing(recordings: Path) -> list[str]:
    """Every ``*.yaml`` below ``recordings`` (no hidden files or folders), relative, sorted."""
    found: list[str] = []
    for folder, subfolders, names in os.walk(recordings):
        subfolders[:] = [name for name in subfolders if not name.startswith(".")]
        below = Path(folder).relative_to(recordings).as_posix()
        prefix = "" if below == "." else below + "/"
        found += [prefix + n for n in names if n.endswith(".yaml") and not n.startswith(".")]
    return sorted(found)


def shown_paths(paths: Sequence[str], most: int = 10) -> str:
    """``paths`` joined, at most ``most`` of them, then ``and N more``."""
    text = ", ".join(paths[:most])
    return text + (f", and {len(paths) - most} more" if len(paths) > most else "")
