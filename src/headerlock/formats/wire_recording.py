"""Wire recordings: the model requests an agent sent over HTTP, and the answers.

Canonical YAML with ``kind: wire`` and a format ``version``. Each entry holds
the request's api and path (never the host), its config, system and tools
(``<<system>>``/``<<tools>>`` plus sorted ``tool_names`` when unpinned; as sent,
with the raw ``prefix`` text, JSON, and its ``prefix_sha256``, when pinned), the messages
with ids tokenized, and the response: status, content type and a ``json`` body, a
``text`` body, a ``base64`` body or a stream: its ``stream`` text, one event per line
(``stream_text``; a stream with an event that has no line keeps its ``events`` list).
``http:`` keeps the other traffic (``wire_http``). An unpinned entry keeps only what
replay compares: no prefix hash (older files that have one are read and the hash
dropped). An older format version is read through the steps of ``schema.WIRE``
(``WireRecording.migrated_from`` says so). A request whose messages begin with an
earlier request's whole list is written as its continuation (``continues: N`` and only
the messages after N's: ``wire_continuations``); every entry read holds its whole list.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, NoReturn, cast

from headerlock.errors import OutputFileError, WireRecordingError, YamlError
from headerlock.formats import placeholders, schema
from headerlock.formats.atomic import atomic_write
from headerlock.formats.canonical_load import load_repeating
from headerlock.formats.canonical_yaml import dump
from headerlock.formats.scrub import find_secret
from headerlock.formats.stream_text import EventLines, bad_line
from headerlock.formats.strict_yaml import loads, read_text
from headerlock.formats.wire_continuations import CONTINUES, Expander, continued
from headerlock.formats.wire_http import HttpEntry, read_http_entry
from headerlock.formats.wire_response import (
    BODY_KINDS,
    STREAM_KEY,
    BodyKind,
    SseEvent,
    WireResponse,
)
from headerlock.runtime.canonical import code_unit_key

WIRE_FORMAT_VERSION: Final = schema.WIRE.version
WIRE_KIND: Final = "wire"
_TOP_KEYS: Final = frozenset(("http", "kind", "pinned", "requests", "version"))
WIRE_MAX_BYTES: Final = 256 * 1024 * 1024
"""The size limit of a wire recording (vision requests carry megabytes of base64)."""
WIRE_MAX_DEPTH: Final = 400
"""The nesting limit of a wire recording (pinned tool schemas nest deeply)."""
_ENTRY_KEYS: Final = frozenset(
    f"api config {CONTINUES} header messages path prefix prefix_sha256 response system"
    " tool_names tools".split()
)
_RESPONSE_KEYS: Final = frozenset(
    ("base64", "content_type", "events", "json", "status", STREAM_KEY, "text")
)
_EVENT_KEYS: Final = frozenset(("event", "id", "json", "text"))
_PREFIX_KEYS: Final = frozenset(("system", "tools"))
_REQUIRED_KEYS: Final = frozenset(("api", "path", "config", "system", "tools"))
_NO_NAMES: Final[list[str]] = []
_SHA256: Final = re.compile(r"[0-9a-f]{64}")
_HEADER_ID: Final = re.compile(r"[0-9a-f]{12}")
_API_NAME: Final = re.compile(r"[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*")
"""The form of a model api name, ``provider.endpoint``; which names exist is the
wire registry's to say (``testing/wire/apis``), passed in as ``apis``."""


@dataclass(frozen=True, slots=True)
class WirePrefix:
    """The cacheable prefix as sent: the raw JSON text of ``tools`` and of the system."""

    tools: str
    system: str

    @property
    def raw(self) -> bytes:
        """Tools then system, the bytes ``prefix_sha256`` is taken over."""
        return self.tools.encode() + self.system.encode()


@dataclass(frozen=True, slots=True)
class WireEntry:
    """One model request, scrubbed, and (in a recording) its response."""

    api: str
    path: str
    config: dict[str, Any]
    system: Any
    tools: Any
    tool_names: tuple[str, ...]
    prefix_sha256: str | None
    messages: Any
    prefix: WirePrefix | None = None
    response: WireResponse | None = None
    header: str | None = None
    """The id of the request's header in the directory's header lock (unpinned entries
    written since header locks): the header's config keys and tool names live there."""

    def request_data(self) -> dict[str, Any]:
        """Plain data of the request side (what replay matches by; the header id is
        compared apart, once the request found its recorded exchange)."""
        data: dict[str, Any] = {
            "api": self.api,
            "path": self.path,
            "config": self.config,
            "system": self.system,
            "tools": self.tools,
            "messages": self.messages,
        }
        if self.header is None:
            data["tool_names"] = list(self.tool_names)
        if self.prefix_sha256 is not None:
            data["prefix_sha256"] = self.prefix_sha256
        if self.prefix is not None:
            data["prefix"] = {"tools": self.prefix.tools, "system": self.prefix.system}
        return data

    def to_data(self) -> dict[str, Any]:
        """Plain data for the recording."""
        data = self.request_data()
        if self.header is not None:
            data["header"] = self.header
        if self.response is not None:
            data["response"] = self.response.to_data()
        return data


@dataclass(frozen=True, slots=True)
class WireRecording:
    """A whole wire recording: whether it is pinned, its model requests in order, and
    the other HTTP traffic (``http``)."""

    pinned: bool
    requests: tuple[WireEntry, ...]
    http: tuple[HttpEntry, ...] = ()
    migrated_from: int | None = field(default=None, compare=False)
    """The older format version the file had (read through ``schema`` steps), or ``None``."""

    def to_data(self) -> dict[str, Any]:
        """Plain data as written (``http`` only when there was other traffic; a request
        that continues an earlier one lists only the messages after that one's)."""
        requests = [entry.to_data() for entry in self.requests]
        continued(requests, [entry.messages for entry in self.requests])
        data: dict[str, Any] = {
            "kind": WIRE_KIND,
            "version": WIRE_FORMAT_VERSION,
            "pinned": self.pinned,
            "requests": requests,
        }
        if self.http:
            data["http"] = [entry.to_data() for entry in self.http]
        return data

    def to_text(self) -> str:
        """Canonical YAML text."""
        return dump(self.to_data())


def sorted_names(names: Sequence[str]) -> tuple[str, ...]:
    """Tool names in code-unit order."""
    return tuple(sorted(names, key=code_unit_key))


# -- loading ---------------------------------------------------------------------------


class _Reader:
    """Validates loaded data; every error names the file and the key."""

    def __init__(self, path: str, apis: Collection[str] | None) -> None:
        self.path = path
        self.apis = None if apis is None else sorted(apis)
        self.api_set = None if apis is None else frozenset(apis)
        self.json_seen: set[str] = set()
        """The prefix texts found to be JSON (a pinned recording repeats them)."""

    def fail(self, key: str, message: str) -> NoReturn:
        raise WireRecordingError(message, path=self.path, key=key)

    def mapping(self, value: Any, key: str, allowed: frozenset[str]) -> Mapping[str, Any]:
        if type(value) is dict and value.keys() <= allowed:
            return value  # the common case: a plain mapping of known keys, nothing to name
        if not isinstance(value, Mapping):
            self.fail(key, f"must be a mapping, got {type(value).__name__}")
        unknown = sorted(k for k in value if k not in allowed)
        if unknown:
            self.fail(f"{key}.{unknown[0]}", "unknown key")
        return value

    def need(self, data: Mapping[str, Any], key: str, where: str) -> Any:
        if key not in data:
            self.fail(f"{where}.{key}", "missing")
        return data[key]

    def int_(self, value: Any, key: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(key, f"must be an integer, got {value!r}")
        return value

    def str_(self, value: Any, key: str, *, optional: bool = False) -> Any:
        if not (isinstance(value, str) or (optional and value is None)):
            self.fail(key, f"must be a string, got {value!r}")
        return value

    def recording(self, data: Any) -> WireRecording:
        top = self.mapping(data, "recording", _TOP_KEYS)
        for key in ("kind", "version", "pinned", "requests"):
            if key not in top:
                self.fail(key, "missing")
        if top["kind"] != WIRE_KIND:
            self.fail("kind", f"must be {WIRE_KIND!r}, got {top['kind']!r}")
        self.int_(top["version"], "version")
        try:
            top, found = schema.upgrade(schema.WIRE, dict(top))
        except schema.VersionError as error:
            self.fail("version", error.reason)
        pinned = top["pinned"]
        if not isinstance(pinned, bool):
            self.fail("pinned", f"must be true or false, got {pinned!r}")
        requests = top["requests"]
        if not isinstance(requests, list):
            self.fail("requests", "must be a list")
        expander = Expander(found, self.fail)
        entries = tuple(
            self.entry(item, f"requests[{n}]", pinned, expander) for n, item in enumerate(requests)
        )
        http = top.get("http", [])
        if not isinstance(http, list):
            self.fail("http", "must be a list")
        other = tuple(
            read_http_entry(item, f"http[{n}]", self.fail, self.response)
            for n, item in enumerate(http)
        )
        migrated = None if found == WIRE_FORMAT_VERSION else found
        return WireRecording(pinned, entries, other, migrated)

    def entry(self, value: Any, key: str, pinned: bool, expander: Expander) -> WireEntry:
        data = self.mapping(value, key, _ENTRY_KEYS)
        expander.check(data, key)
        header = data.get("header")
        if not data.keys() >= _REQUIRED_KEYS:  # name the first one missing
            for name in ("api", "path", "config", "system", "tools"):
                self.need(data, name, key)
        if header is None:
            self.need(data, "tool_names", key)
        elif pinned or not isinstance(header, str) or not _HEADER_ID.fullmatch(header):
            why = (
                "a pinned recording keeps its header inline" if pinned else "must be 12 hex digits"
            )
            self.fail(f"{key}.header", why)
        self.need(data, "messages", key)
        api = self.str_(data["api"], f"{key}.api")
        if self.api_set is not None and api not in self.api_set:
            self.fail(
                f"{key}.api", f"unknown api {api!r}; expected one of {', '.join(self.apis or ())}"
            )
        if not _API_NAME.fullmatch(api):
            self.fail(f"{key}.api", f"unknown api {api!r}; an api is named provider.endpoint")
        path = self.str_(data["path"], f"{key}.path")
        if not path.startswith("/"):
            self.fail(f"{key}.path", f"must be a path starting with '/', got {path!r}")
        config = data["config"]
        if not isinstance(config, Mapping):
            self.fail(f"{key}.config", "must be a mapping")
        names = data.get("tool_names", _NO_NAMES)
        if names is not _NO_NAMES:  # an entry with a header id keeps none
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                self.fail(f"{key}.tool_names", "must be a list of strings")
            if list(sorted_names(names)) != names:
                self.fail(f"{key}.tool_names", "must be sorted (code-unit order)")
        sha = None
        if pinned or "prefix_sha256" in data:  # an older unpinned file's hash is checked, dropped
            sha = self.str_(self.need(data, "prefix_sha256", key), f"{key}.prefix_sha256")
            if not _SHA256.fullmatch(sha):
                self.fail(f"{key}.prefix_sha256", "must be 64 lowercase hex digits")
            sha = sha if pinned else None
        system, tools = data["system"], data["tools"]
        prefix = self.prefix(data, key, pinned)
        if not pinned:
            if system not in (placeholders.SYSTEM, None):
                self.fail(f"{key}.system", f"an unpinned recording holds {placeholders.SYSTEM}")
            if tools not in (placeholders.TOOLS, None):
                self.fail(f"{key}.tools", f"an unpinned recording holds {placeholders.TOOLS}")
        elif tools is not None and not isinstance(tools, list):
            self.fail(f"{key}.tools", "must be a list (as sent) or null")
        return WireEntry(
            api=api,
            path=path,
            config=dict(config),
            system=system,
            tools=tools,
            tool_names=tuple(names),
            prefix_sha256=sha,
            messages=expander.messages(data, key),
            prefix=prefix,
            response=self.response(self.need(data, "response", key), f"{key}.response"),
            header=header,
        )

    def prefix(self, data: Mapping[str, Any], key: str, pinned: bool) -> WirePrefix | None:
        if not pinned:
            if "prefix" in data:
                self.fail(f"{key}.prefix", "only pinned recordings keep the raw prefix")
            return None
        raw = self.mapping(self.need(data, "prefix", key), f"{key}.prefix", _PREFIX_KEYS)
        tools = self.str_(self.need(raw, "tools", f"{key}.prefix"), f"{key}.prefix.tools")
        system = self.str_(self.need(raw, "system", f"{key}.prefix"), f"{key}.prefix.system")
        self.json_text(tools, f"{key}.prefix.tools")
        self.json_text(system, f"{key}.prefix.system", elements=True)
        return WirePrefix(tools, system)

    def json_text(self, text: str, key: str, *, elements: bool = False) -> None:
        """Fail unless ``text`` is empty or JSON (``elements``: or JSON values joined by
        commas, a chat request's leading system messages); each distinct text once."""
        if not text or text in self.json_seen:
            return
        error = _json_error(text)
        if error is not None and elements:
            listed = _json_error(f"[{text}]")
            if listed is None:
                error = None
            elif listed[0] - 1 > error[0]:  # it reads further as a list: say where that stops
                error = (listed[0] - 1, listed[1])
        if error is not None:
            self.fail(key, f"is not JSON: {error[1]} (char {error[0]})")
        self.json_seen.add(text)

    def response(self, value: Any, key: str) -> WireResponse:
        data = self.mapping(value, key, _RESPONSE_KEYS)
        status = self.int_(self.need(data, "status", key), f"{key}.status")
        if not 100 <= status <= 599:
            self.fail(f"{key}.status", f"must be an HTTP status (100-599), got {status}")
        content_type = self.str_(
            self.need(data, "content_type", key), f"{key}.content_type", optional=True
        )
        kinds = [k for k in (*BODY_KINDS, STREAM_KEY) if k in data]
        if len(kinds) != 1:
            self.fail(key, "needs exactly one of base64, events, json, stream or text")
        if kinds[0] == STREAM_KEY:
            return WireResponse(status, content_type, "events", self.stream(data, key))
        kind = cast(BodyKind, kinds[0])
        body = data[kind]
        if kind in ("text", "base64"):
            self.str_(body, f"{key}.{kind}")
        if kind == "base64":
            try:
                base64.b64decode(body, validate=True)
            except (binascii.Error, ValueError):
                self.fail(f"{key}.base64", "is not base64")
        elif kind == "events":
            if not isinstance(body, list):
                self.fail(f"{key}.events", "must be a list")
            body = tuple(self.event(e, f"{key}.events[{n}]") for n, e in enumerate(body))
        return WireResponse(status, content_type, kind, body)

    def stream(self, data: Mapping[str, Any], key: str) -> EventLines:
        text = self.str_(data[STREAM_KEY], f"{key}.{STREAM_KEY}")
        line = bad_line(text)
        if line is not None:
            self.fail(
                f"{key}.{STREAM_KEY}",
                f"line {line} is not an event's line ([event: NAME ][id: ID ]data: DATA,"
                " ending in a line break)",
            )
        return EventLines(text)

    def event(self, value: Any, key: str) -> SseEvent:
        data = self.mapping(value, key, _EVENT_KEYS)
        kinds = [k for k in ("json", "text") if k in data]
        if len(kinds) != 1:
            self.fail(key, "needs exactly one of json or text")
        name = self.str_(data.get("event"), f"{key}.event", optional=True)
        event_id = self.str_(data.get("id"), f"{key}.id", optional=True)
        if kinds[0] == "text":
            self.str_(data["text"], f"{key}.text")
        return SseEvent(data[kinds[0]], kinds[0] == "json", name, event_id)


def _json_error(text: str) -> tuple[int, str] | None:
    """Where and why ``text`` is not JSON (``None``: it is)."""
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        return error.pos, error.msg
    except (ValueError, RecursionError) as error:  # an integer too long, nesting too deep
        return 0, str(error)
    return None


def wire_recording_from_data(
    data: Any, *, path: str, apis: Collection[str] | None = None
) -> WireRecording:
    """Validate loaded data; a ``WireRecordingError`` names the file and the key, and
    refuses a recording that holds a known secret (as a scenario recording is refused).

    ``apis`` are the model api names an entry may have (the wire registry's);
    without them, only the form ``provider.endpoint`` is checked.
    """
    leaked = find_secret(data)
    if leaked is not None:
        raise WireRecordingError(
            f"{leaked[0]} holds the value of {leaked[1]}; a secret must never be committed:"
            f" rotate it and re-record (secrets are written as {placeholders.SECRET})",
            path=path,
        )
    return _Reader(path, apis).recording(data)


def is_wire_data(data: Any) -> bool:
    """Whether loaded YAML data claims to be a wire recording."""
    return isinstance(data, Mapping) and data.get("kind") == WIRE_KIND


def parse_wire_recording(
    text: str, *, path: str, apis: Collection[str] | None = None
) -> WireRecording:
    """Parse and validate wire recording text (a long one headerlock wrote is loaded
    without parsing its repeated messages again: ``canonical_load``)."""
    try:
        data = load_repeating(text, max_depth=WIRE_MAX_DEPTH)
        if data is None:
            data = loads(text, path=path, max_depth=WIRE_MAX_DEPTH)
    except YamlError as error:
        where = f"line {error.line}" if error.line else None
        raise WireRecordingError(error.reason, path=path, key=where) from None
    return wire_recording_from_data(data, path=path, apis=apis)


def load_wire_recording(path: Path, *, apis: Collection[str] | None = None) -> WireRecording:
    """Read and validate the wire recording at ``path``."""
    try:
        text = read_text(path, max_bytes=WIRE_MAX_BYTES, missing="no such wire recording")
    except YamlError as error:
        raise WireRecordingError(error.reason, path=str(path)) from None
    return parse_wire_recording(text, path=str(path), apis=apis)


def save_wire_recording(recording: WireRecording, path: Path, *, text: str | None = None) -> None:
    """Write ``recording`` atomically (a reader sees the old file or the new one);
    ``text``: its ``to_text()``, when the caller made it already."""
    data = recording.to_data() if text is None or not _shallow(text) else None
    if data is not None:
        depth = nesting(data)
        if depth > WIRE_MAX_DEPTH:  # what the reader would refuse is never written
            raise OutputFileError(
                f"nesting deeper than {WIRE_MAX_DEPTH} levels ({depth}); nothing written",
                path=str(path),
            )
    atomic_write(path, text if text is not None else dump(data), max_bytes=WIRE_MAX_BYTES)


SHALLOW_TEXT_CHARS: Final = 1 << 16
"""Texts up to this long are checked by their lines (``_shallow``); a longer one is walked
(its lines cost more to measure than its containers to walk: a stream's events)."""


def _shallow(text: str) -> bool:
    """Whether ``text``, a canonical dump (``dump``), shows that its data nests less than
    ``WIRE_MAX_DEPTH`` deep without a walk. In a dump two levels of nesting indent a
    line by two columns at least (a list in a mapping by none, anything in a list by two:
    ``- ``, a mapping in a mapping by two) and a flow line holds a bracket per level, so
    data nesting ``d`` deep has a line of ``d - 2`` characters or more (the tests check
    the bound on chains of every shape)."""
    if len(text) > SHALLOW_TEXT_CHARS:
        return False
    return max(map(len, text.split("\n"))) < WIRE_MAX_DEPTH - 10


def nesting(value: Any) -> int:
    """How many mappings and lists deep ``value`` nests (iteratively: any depth). A
    container met again no deeper than before is not walked again: a recording whose
    requests share their messages is walked in time linear in its distinct messages."""
    deepest, stack = 0, [(value, 1)]
    walked: dict[int, int] = {}
    """Each container walked (alive while ``value`` is), by identity: the depth it was at."""
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if walked.get(id(item), 0) >= depth:
            continue
        walked[id(item)] = depth
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest
