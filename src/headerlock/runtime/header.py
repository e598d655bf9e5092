"""Request headers (model config, system prompt, tools), their deltas and folding."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from headerlock.errors import CorruptLogError, HeaderlockError
from headerlock.runtime.frozen import FrozenDict, deep_freeze, thaw
from headerlock.runtime.session import REQUEST_HEADER, REQUEST_HEADER_DELTA, Event
from headerlock.runtime.tools import ToolSchema

HeaderReason = Literal["initial", "resume", "fallback"]


@dataclass(frozen=True, slots=True)
class RequestHeader:
    """The part of a model request that should not change by accident."""

    config: Mapping[str, Any] = field(default_factory=FrozenDict)
    system: str = ""
    tools: tuple[ToolSchema, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "config", deep_freeze(self.config))
        object.__setattr__(self, "tools", tuple(self.tools))

    def to_data(self) -> dict[str, Any]:
        """Canonical plain data: empty system and tools are omitted."""
        data: dict[str, Any] = {"config": thaw(self.config)}
        if self.system:
            data["system"] = self.system
        if self.tools:
            data["tools"] = [t.to_data() for t in self.tools]
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> RequestHeader:
        """Inverse of :meth:`to_data`."""
        tools = data.get("tools", ())
        if not isinstance(tools, Sequence) or isinstance(tools, str):
            raise CorruptLogError(f"header tools must be a list, got {tools!r}")
        config, system = data.get("config", {}), data.get("system", "")
        if not isinstance(config, Mapping):
            raise CorruptLogError(f"header config must be a mapping, got {config!r}")
        if not isinstance(system, str):
            raise CorruptLogError(f"header system must be a string, got {system!r}")
        return cls(
            config=config,
            system=system,
            tools=tuple(ToolSchema.from_data(t) for t in tools),
        )

    def tool_names(self) -> tuple[str, ...]:
        """Names of the tools, in order."""
        return tuple(t.name for t in self.tools)


@dataclass(frozen=True, slots=True)
class ToolsDelta:
    """Name-keyed tool changes: drop ``removed``, replace ``changed`` in place, append ``added``."""

    added: tuple[ToolSchema, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[ToolSchema, ...] = ()

    def apply(self, tools: Sequence[ToolSchema]) -> tuple[ToolSchema, ...]:
        """The tool list after this delta."""
        removed = set(self.removed)
        changed = {t.name: t for t in self.changed}
        kept = [changed.get(t.name, t) for t in tools if t.name not in removed]
        return (*kept, *self.added)

    def to_data(self) -> dict[str, Any]:
        """Plain data, empty parts omitted."""
        data: dict[str, Any] = {}
        if self.added:
            data["added"] = [t.to_data() for t in self.added]
        if self.removed:
            data["removed"] = list(self.removed)
        if self.changed:
            data["changed"] = [t.to_data() for t in self.changed]
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> ToolsDelta:
        """Inverse of :meth:`to_data`."""
        return cls(
            added=tuple(ToolSchema.from_data(t) for t in data.get("added", ())),
            removed=tuple(data.get("removed", ())),
            changed=tuple(ToolSchema.from_data(t) for t in data.get("changed", ())),
        )


@dataclass(frozen=True, slots=True)
class SystemDelta:
    """Line-level edit: keep ``keep_start`` and ``keep_end`` lines, put ``insert`` between."""

    keep_start: int
    keep_end: int
    insert: tuple[str, ...] = ()

    def apply(self, system: str) -> str:
        """The system prompt after this delta."""
        lines = system.split("\n")
        if self.keep_start + self.keep_end > len(lines):
            raise CorruptLogError(
                f"system delta keeps {self.keep_start}+{self.keep_end} lines of {len(lines)}"
            )
        tail = lines[len(lines) - self.keep_end :] if self.keep_end else []
        return "\n".join([*lines[: self.keep_start], *self.insert, *tail])

    def to_data(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "keep_start": self.keep_start,
            "keep_end": self.keep_end,
            "insert": list(self.insert),
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> SystemDelta:
        """Inverse of :meth:`to_data`."""
        return cls(int(data["keep_start"]), int(data["keep_end"]), tuple(data.get("insert", ())))


@dataclass(frozen=True, slots=True)
class HeaderDelta:
    """What changed between two headers; ``None`` parts did not change."""

    config: Mapping[str, Any] | None = None
    system: SystemDelta | None = None
    tools: ToolsDelta | None = None

    def to_data(self) -> dict[str, Any]:
        """Plain data of the ``request/header-delta`` event; unchanged parts omitted."""
        data: dict[str, Any] = {}
        if self.config is not None:
            data["config"] = thaw(self.config)
        if self.system is not None:
            data["system"] = self.system.to_data()
        if self.tools is not None:
            data["tools"] = self.tools.to_data()
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> HeaderDelta:
        """Inverse of :meth:`to_data`."""
        config = data.get("config")
        if "config" in data and not isinstance(config, Mapping):
            raise CorruptLogError(f"header-delta config must be a mapping, got {config!r}")
        return cls(
            config=deep_freeze(config) if config is not None else None,
            system=SystemDelta.from_data(data["system"]) if "system" in data else None,
            tools=ToolsDelta.from_data(data["tools"]) if "tools" in data else None,
        )


def _diff_system(old: str, new: str) -> SystemDelta:
    a, b = old.split("\n"), new.split("\n")
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    return SystemDelta(start, end, tuple(b[start : len(b) - end]))


def _diff_tools(old: Sequence[ToolSchema], new: Sequence[ToolSchema]) -> ToolsDelta:
    old_by_name = {t.name: t for t in old}
    new_names = {t.name for t in new}
    return ToolsDelta(
        added=tuple(t for t in new if t.name not in old_by_name),
        removed=tuple(t.name for t in old if t.name not in new_names),
        changed=tuple(t for t in new if t.name in old_by_name and old_by_name[t.name] != t),
    )


def diff_header(old: RequestHeader, new: RequestHeader) -> HeaderDelta:
    """The delta from ``old`` to ``new`` (it may not reproduce ``new``: check it)."""
    return HeaderDelta(
        config=new.config if new.config != old.config else None,
        system=_diff_system(old.system, new.system) if new.system != old.system else None,
        tools=_diff_tools(old.tools, new.tools) if new.tools != old.tools else None,
    )


def apply_header_delta(header: RequestHeader, delta: HeaderDelta) -> RequestHeader:
    """``header`` with ``delta`` applied."""
    return RequestHeader(
        config=header.config if delta.config is None else delta.config,
        system=header.system if delta.system is None else delta.system.apply(header.system),
        tools=header.tools if delta.tools is None else delta.tools.apply(header.tools),
    )


def fold_request_header(events: Iterable[Event]) -> RequestHeader | None:
    """The current header: the last full header with every later delta applied."""
    header: RequestHeader | None = None
    for event in events:
        if event.type not in (REQUEST_HEADER, REQUEST_HEADER_DELTA):
            continue
        if event.type == REQUEST_HEADER_DELTA and header is None:
            raise CorruptLogError("request/header-delta before any request/header", seq=event.seq)
        try:
            if event.type == REQUEST_HEADER:
                header = RequestHeader.from_data(event.data["header"])
            elif header is not None:
                header = apply_header_delta(header, HeaderDelta.from_data(event.data))
        except CorruptLogError as error:
            if error.seq is not None:
                raise
            raise CorruptLogError(f"malformed {event.type} ({error})", seq=event.seq) from None
        except (KeyError, TypeError, ValueError, AttributeError, HeaderlockError) as error:
            raise CorruptLogError(
                f"malformed {event.type} ({type(error).__name__}: {error})", seq=event.seq
            ) from None
    return header


@dataclass(frozen=True, slots=True)
class HeaderRecord:
    """What to append for a request: an event type and its data."""

    type: str
    data: Mapping[str, Any]


def header_record(
    previous: RequestHeader | None, header: RequestHeader, *, first_of_loop: bool
) -> HeaderRecord | None:
    """Apply the record rule: initial / resume / nothing / delta / fallback."""
    if first_of_loop or previous is None:
        reason: HeaderReason = "initial" if previous is None else "resume"
        return HeaderRecord(REQUEST_HEADER, {"header": header.to_data(), "reason": reason})
    if header == previous:
        return None
    delta = diff_header(previous, header)
    if apply_header_delta(previous, delta) == header:
        return HeaderRecord(REQUEST_HEADER_DELTA, delta.to_data())
    return HeaderRecord(REQUEST_HEADER, {"header": header.to_data(), "reason": "fallback"})
