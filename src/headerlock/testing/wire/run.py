"""What a wire lock saw: its model requests as sent, and the recording read or written."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from headerlock.formats.wire_recording import WireRecording
from headerlock.testing.wire.apis import Split, model_api
from headerlock.testing.wire.compare import Difference

Mode = Literal["record", "replay", "new"]


@dataclass(frozen=True, slots=True)
class WireHeader:
    """The header of a request as sent: config (volatile keys dropped), system, tools."""

    config: dict[str, Any]
    system: Any
    tools: Any


@dataclass(frozen=True, slots=True)
class WireRequest:
    """One model request seen under a lock (``number`` is 1-based, in the lock's order)."""

    number: int
    api: str
    path: str
    header: WireHeader
    messages: Any
    body: bytes
    prefix_sha256: str

    def __repr__(self) -> str:  # the body and header as sent may hold a secret: never shown
        return (
            f"WireRequest(number={self.number}, api={self.api!r},"
            f" tool_names={list(self.tool_names)!r}, body=<{len(self.body)} bytes>)"
        )

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The tool names in the order sent."""
        return tuple(model_api(self.api).tool_names(self.header.tools))

    @classmethod
    def of(cls, number: int, path: str, split: Split, body: bytes) -> WireRequest:
        header = WireHeader(split.config, split.system, split.tools)
        return cls(number, split.api.name, path, header, split.messages, body, split.prefix_sha256)


@dataclass(slots=True, eq=False)
class WireRun:
    """What a lock saw: its requests, and the recording read or written.

    ``requests`` are in the order its recording keeps (``conversations``): from one
    task or thread, the order sent; from several, each conversation in turn, by content,
    never by arrival or by which worker sent what; a failed attempt is left out.
    ``differences`` are the replay's, in the order found.
    """

    path: Path | None
    mode: Mode
    pinned: bool
    requests: list[WireRequest] = field(default_factory=list)
    recording: WireRecording | None = None
    differences: list[Difference] = field(default_factory=list)
    secrets: tuple[str, ...] = field(default=(), repr=False)
    """The secrets the lock scrubbed (known ones and the credentials the agent sent), for
    a caller that writes what it saw; set at exit, never written nor shown."""
    pending: Path | None = None
    """The pending file a mismatching replay wrote (``lock(pending=True)``)."""
    pending_lock: Path | None = None
    """The pending header lock a mismatching replay wrote beside the lock."""
    headers: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    """The headers the recording written refers to, by id (for its header lock)."""

    def __repr__(self) -> str:
        """What a failing test's report shows of it: never a secret (the differences are
        scrubbed; the requests as sent are only counted)."""
        return (
            f"WireRun(path={self.path!r}, mode={self.mode!r}, pinned={self.pinned},"
            f" requests=<{len(self.requests)}>,"
            f" differences={[d.line() for d in self.differences]!r}, pending={self.pending!r})"
        )
