"""Header locks: every distinct request header of a recordings directory, stored once.

An unpinned wire recording keeps ``<<system>>``/``<<tools>>`` and, on each request, a
``header: <id>``; the header itself (api, the config keys that key the provider's
cache, the semantic HTTP headers and query, the system and the tool list as sent)
lives once in ``headers.lock.yaml`` beside the recordings, keyed by its id: the first
``ID_DIGITS`` hex digits of the SHA-256 of the header's canonical JSON. Canonical YAML
with ``kind: header-lock`` and a ``version``::

    kind: header-lock
    version: 1
    headers:
      3f2a9c1b7d4e:
        api: openai.chat
        config: {model: gpt-4.1-mini}
        system: [...]
        tools: [...]

An id that does not match its header (a hand edit) is refused. Writers take
``exclusive(path)`` (a ``filelock`` in the temp directory), so xdist workers and
concurrent sessions merge into it one at a time; every write is atomic.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from headerlock.errors import ConfigError, WireRecordingError, YamlError
from headerlock.formats import schema
from headerlock.formats.atomic import atomic_write
from headerlock.formats.canonical_yaml import dump
from headerlock.formats.strict_yaml import loads, read_text
from headerlock.runtime.canonical import canonical_json

LOCK_NAME: Final = "headers.lock.yaml"
"""The header lock of a recordings directory. A test recording is never named so: an
encoded recording name is ``headers.lock`` only by ``headerlock_name``, which refuses it."""
RESERVED_NAME: Final = "headers.lock"
LOCK_KIND: Final = "header-lock"
LOCK_VERSION: Final = schema.HEADER_LOCK.version
ID_DIGITS: Final = 12
_ID: Final = re.compile(rf"[0-9a-f]{{{ID_DIGITS}}}")
_HEADER_KEYS: Final = ("api", "config", "http", "query", "system", "tools")
_REFERENCE: Final = re.compile(rf'^  header: "?([0-9a-f]{{{ID_DIGITS}}})"?$', re.MULTILINE)
"""A request entry's ``header:`` line in a canonical wire recording (entries are the
items of the top-level ``requests`` list, their keys indented by two spaces)."""
_SCENARIO_REFERENCE: Final = re.compile(rf'^- "?([0-9a-f]{{{ID_DIGITS}}})"?$', re.MULTILINE)
"""An item of a scenario recording's top-level ``headers`` list (the only top-level
list of plain strings in either kind of recording)."""
MAX_BYTES: Final = 64 * 1024 * 1024


def unreserved(name: str, nodeid: str) -> str:
    """``name``, a test's recording name, unless it is the header lock's."""
    if name == RESERVED_NAME:
        raise ConfigError(
            f"{nodeid}: the recording name {name!r} is reserved ({LOCK_NAME} is the header"
            " lock of the recordings beside it); give the test another with"
            " @pytest.mark.headerlock_name(...)",
            key="headerlock_name",
        )
    return name


def header_id(header: Mapping[str, Any]) -> str:
    """The id of ``header``: the first hex digits of the SHA-256 of its canonical JSON."""
    text = canonical_json(header)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:ID_DIGITS]


@dataclass(frozen=True, slots=True)
class HeaderLock:
    """The headers of one recordings directory, by id."""

    headers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def to_data(self) -> dict[str, Any]:
        """Plain data (ids in sorted order: the emitter sorts keys)."""
        return {
            "kind": LOCK_KIND,
            "version": LOCK_VERSION,
            "headers": {k: dict(v) for k, v in self.headers.items()},
        }

    def to_text(self) -> str:
        """Canonical YAML text."""
        return dump(self.to_data())


def lock_path(directory: Path) -> Path:
    """The header lock of the recordings in ``directory``."""
    return directory / LOCK_NAME


def is_lock_file(path: Path) -> bool:
    """Whether ``path`` is a header lock (never a recording, never unused)."""
    return path.name == LOCK_NAME


def is_lock_data(data: Any) -> bool:
    """Whether loaded YAML data claims to be a header lock."""
    return isinstance(data, Mapping) and data.get("kind") == LOCK_KIND


def lock_from_data(data: Any, *, path: str) -> HeaderLock:
    """Validate loaded data; a ``WireRecordingError`` names the file and the key."""

    def fail(key: str, message: str) -> WireRecordingError:
        return WireRecordingError(message, path=path, key=key)

    if not isinstance(data, Mapping):
        raise fail("lock", "must be a mapping")
    unknown = sorted(k for k in data if k not in ("headers", "kind", "version"))
    if unknown:
        raise fail(unknown[0], "unknown key")
    if data.get("kind") != LOCK_KIND:
        raise fail("kind", f"must be {LOCK_KIND!r}, got {data.get('kind')!r}")
    try:
        data, _ = schema.upgrade(schema.HEADER_LOCK, dict(data))
    except schema.VersionError as error:
        raise fail("version", error.reason) from None
    headers = data.get("headers")
    if not isinstance(headers, Mapping):
        raise fail("headers", "must be a mapping of header ids to headers")
    for key, header in headers.items():
        where = f"headers.{key}"
        if not isinstance(key, str) or not _ID.fullmatch(key):
            raise fail(where, f"an id is {ID_DIGITS} lowercase hex digits")
        if not isinstance(header, Mapping):
            raise fail(where, "must be a mapping")
        extra = sorted(k for k in header if k not in _HEADER_KEYS)
        if extra:
            raise fail(f"{where}.{extra[0]}", "unknown key")
        if not isinstance(header.get("api"), str):
            raise fail(f"{where}.api", "missing")
        if header_id(header) != key:
            raise fail(
                where,
                f"does not match its id (edited by hand? its content has id {header_id(header)});"
                " re-record with pytest --snapshot-update",
            )
    return HeaderLock({k: dict(v) for k, v in headers.items()})


def parse_lock(text: str, *, path: str) -> HeaderLock:
    """Parse and validate header lock text."""
    try:
        data = loads(text, path=path)
    except YamlError as error:
        where = f"line {error.line}" if error.line else None
        raise WireRecordingError(error.reason, path=path, key=where) from None
    return lock_from_data(data, path=path)


def load_lock(path: Path) -> HeaderLock:
    """Read the header lock at ``path`` (a ``WireRecordingError`` when it is missing or bad)."""
    try:
        text = read_text(path, max_bytes=MAX_BYTES, missing="no such header lock")
    except YamlError as error:
        raise WireRecordingError(error.reason, path=path.as_posix()) from None
    return parse_lock(text, path=path.as_posix())


def load_lock_or_empty(path: Path) -> HeaderLock:
    """``load_lock(path)``; an empty lock when there is no file or it cannot be read."""
    if not path.is_file():
        return HeaderLock()
    try:
        return load_lock(path)
    except WireRecordingError:
        return HeaderLock()


def save_lock(lock: HeaderLock, path: Path) -> None:
    """Write ``lock`` atomically."""
    atomic_write(path, lock.to_text(), max_bytes=MAX_BYTES)


@contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold the cross-process lock of the file at ``path`` (``write_lock.recording_lock``:
    the one lock every writer of a recording file holds; nothing is left in the project)."""
    from headerlock.formats.write_lock import recording_lock

    with recording_lock(path):
        yield


def referenced_ids(text: str) -> list[str]:
    """The header ids a canonical wire recording's requests (or a scenario recording's
    ``headers``) refer to."""
    return _REFERENCE.findall(text) + _SCENARIO_REFERENCE.findall(text)


_READ: dict[str, tuple[tuple[int, int, int, int], tuple[str, ...]]] = {}
"""Each recording's ids as last read, by its file's identity (inode, size, mtime, ctime):
a session merges its lock after every test, and reading every recording again each
time made recording a module quadratic. A file replaced (atomic writes rename a new
inode in) or edited in place is read again."""


def _ids_of(entry: os.DirEntry[str]) -> tuple[str, ...]:
    """The ids the recording at ``entry`` refers to (none when it is not a file)."""
    try:
        info = entry.stat()
    except OSError:
        return ()
    if not stat.S_ISREG(info.st_mode):
        return ()
    identity = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    known = _READ.get(entry.path)
    if known is not None and known[0] == identity:
        return known[1]
    try:
        with open(entry.path, encoding="utf-8") as file:
            ids = tuple(referenced_ids(file.read()))
    except (OSError, UnicodeDecodeError):
        return ()
    _READ[entry.path] = (identity, ids)
    return ids


def references_in(directory: Path) -> set[str]:
    """The header ids every wire recording in ``directory`` refers to."""
    found: set[str] = set()
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.name.endswith(".yaml") and entry.name != LOCK_NAME:
                    found.update(_ids_of(entry))
    except OSError:
        pass
    return found


def merge_lock(path: Path, written: Mapping[str, Mapping[str, Any]]) -> bool:
    """Make the lock at ``path`` hold exactly the headers its directory's recordings refer
    to: ``written`` (this run's) and those of the lock so far; call it holding
    ``exclusive(path)``. Whether the file changed."""
    old = load_lock_or_empty(path)
    wanted = references_in(path.parent)
    known = {**old.headers, **written}
    kept = {k: known[k] for k in sorted(wanted) if k in known}
    if not kept and not path.exists():
        return False
    new = HeaderLock(kept)
    if path.is_file() and kept == dict(old.headers):
        try:
            if path.read_text(encoding="utf-8") == new.to_text():
                return False
        except (OSError, UnicodeDecodeError):
            pass
    if not kept:
        path.unlink(missing_ok=True)
        return True
    save_lock(new, path)
    return True


_LOCKS_READ: dict[str, tuple[str, HeaderLock]] = {}
"""Each header lock's text as last read or written by ``add_to_lock``, and the lock it
holds: the file is read every time (under its lock, so nothing another process wrote is
missed), parsed only when its text changed."""


def _current_lock(path: Path) -> HeaderLock:
    """``load_lock_or_empty(path)``, parsed again only when the file's text changed."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return load_lock_or_empty(path)
    known = _LOCKS_READ.get(str(path))
    if known is not None and known[0] == text:
        return known[1]
    try:
        lock = parse_lock(text, path=path.as_posix())
    except WireRecordingError:
        return HeaderLock()
    _LOCKS_READ[str(path)] = (text, lock)
    return lock


def holds_all(path: Path, headers: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether the lock at ``path`` holds every header of ``headers`` (read without its
    lock: writers replace it atomically). Once true for the headers of a recording that
    is on disk, it stays true while that recording refers to them."""
    held = _current_lock(path).headers
    return all(key in held for key in headers)


def add_to_lock(path: Path, written: Mapping[str, Mapping[str, Any]]) -> bool:
    """Add to the lock at ``path`` the headers of ``written`` it lacks (a test's, its
    recording just written), reading no recording: a session's updates stay linear in its
    tests. Call it holding ``exclusive(path)``; the headers no recording refers to any more
    are dropped by ``merge_lock`` once the session's updates end. Whether the file changed."""
    old = _current_lock(path)
    if all(key in old.headers for key in written):
        return False
    new = HeaderLock(dict(sorted({**old.headers, **written}.items())))
    text = new.to_text()
    atomic_write(path, text, max_bytes=MAX_BYTES)
    _LOCKS_READ[str(path)] = (text, new)
    return True


def prune_lock(path: Path) -> bool:
    """Drop from the lock at ``path`` the headers that no recording of its directory, nor
    any of their pending files, refers to any more (an accepted change leaves its old
    header behind); never adds one. Call it holding ``exclusive(path)``. Whether the file
    changed."""
    if not path.is_file():
        return False
    old = load_lock(path)
    wanted = references_in(path.parent) | _pending_references(path.parent)
    kept = {k: header for k, header in old.headers.items() if k in wanted}
    if kept == dict(old.headers) or not kept:  # an empty lock is the next update's to drop
        return False
    save_lock(HeaderLock(kept), path)
    return True


def _pending_references(directory: Path) -> set[str]:
    """The header ids the pending recordings (``*.yaml.new``) in ``directory`` refer to."""
    found: set[str] = set()
    for entry in sorted(directory.glob("*.yaml.new")):
        if entry.name == LOCK_NAME + ".new" or not entry.is_file():
            continue
        try:
            found.update(referenced_ids(entry.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return found


def write_pending_lock(path: Path, headers: Mapping[str, Mapping[str, Any]]) -> Path | None:
    """Beside the lock at ``path``, the pending lock (``headers.lock.yaml.new``) that also
    holds those of ``headers`` it lacks (with the other tests' pending headers); ``None``
    when it has them all. Each header text is written once, whatever the tests sharing it."""
    from headerlock.errors import HeaderlockError
    from headerlock.formats.pending import pending_path, read_pending, write_pending

    with exclusive(path):
        current = load_lock_or_empty(path)
        missing = {k: v for k, v in headers.items() if k not in current.headers}
        if not missing:
            return None
        merged = dict(current.headers)
        pending = pending_path(path)
        if pending.is_file():
            try:
                earlier = read_pending(pending)
                if not earlier.stale:
                    merged.update(parse_lock(earlier.text, path=pending.as_posix()).headers)
            except HeaderlockError:
                pass  # a broken pending lock is replaced
        merged.update(missing)
        return write_pending(path, HeaderLock(dict(sorted(merged.items()))).to_text())
