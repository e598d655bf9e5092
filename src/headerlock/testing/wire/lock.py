"""``lock()``: record or replay every model request an agent sends over HTTP.

Record mode forwards each model request to its endpoint (or answers it from a
``script``) and, on a clean exit only, writes the wire recording atomically.
Replay mode never touches the network: it compares each request with the
recorded one and serves the recorded answer; a difference is answered with an
HTTP 400 (which the SDKs do not retry) and raised as ``WireMismatch`` at exit,
even if the agent swallowed the 400.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal

from headerlock.errors import ConfigError, ScriptExhaustedError, WireMismatch
from headerlock.formats.secrets import env_secrets, header_secrets, secret_values
from headerlock.formats.wire_recording import (
    WireRecording,
    WireResponse,
    load_wire_recording,
    save_wire_recording,
)
from headerlock.formats.wire_scrub import IdTokens, Redact, Scrubber
from headerlock.runtime.adapters.scripted import ReplySpec
from headerlock.testing.wire.apis import Split, split_body, tool_name
from headerlock.testing.wire.compare import (
    Difference,
    entry_differences,
    extra_request,
    report,
    unsent_requests,
)
from headerlock.testing.wire.entry import build_entry
from headerlock.testing.wire.script import JSON, WireScript
from headerlock.testing.wire.transport import Pending, SentRequest, WireAnswer, intercept

Mode = Literal["record", "replay"]
MODES: Final = ("record", "replay")


@dataclass(frozen=True, slots=True)
class WireHeader:
    """The header of a request as sent: config (volatile keys dropped), system, tools."""

    config: dict[str, Any]
    system: Any
    tools: Any


@dataclass(frozen=True, slots=True)
class WireRequest:
    """One model request seen under a lock (``number`` is 1-based)."""

    number: int
    api: str
    path: str
    header: WireHeader
    messages: Any
    body: bytes
    prefix_sha256: str

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The tool names in the order sent."""
        return tuple(_names(self.header.tools))


def _names(tools: Any) -> list[str]:
    return [tool_name(t) for t in tools] if isinstance(tools, list) else []


@dataclass(slots=True, eq=False)
class WireRun:
    """What a lock saw: its requests, and the recording read or written.

    ``requests`` are in the order they were answered (forwarded ones once their
    answer arrived; a failed attempt is left out); the recording keeps the
    order they were sent in. For an agent that waits for each answer, the two
    are the same. ``differences`` are the replay's, in the order found.
    """

    path: Path | None
    mode: Mode
    pinned: bool
    requests: list[WireRequest] = field(default_factory=list)
    recording: WireRecording | None = None
    differences: list[Difference] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Exchange:
    sent: SentRequest
    split: Split
    reply: WireAnswer


def _error_reply(api: str, message: str, code: str) -> WireAnswer:
    """A plain HTTP 400 in the api's error shape (no ``x-should-retry``: never retried)."""
    text = f"headerlock: {message}"
    if api == "anthropic.messages":
        body: dict[str, Any] = {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": text},
        }
    else:
        error = {"message": text, "type": "invalid_request_error", "param": None, "code": code}
        body = {"error": error}
    return WireAnswer(400, JSON, json.dumps(body, ensure_ascii=False).encode())


class _Session:
    """The interceptor of one lock: keeps exchanges (record) or checks them (replay)."""

    def __init__(
        self,
        run: WireRun,
        *,
        recording: WireRecording | None,
        script: WireScript | None,
        scrubber: Scrubber,
    ) -> None:
        self.run = run
        self.recording = recording
        self.script = script
        self.scrubber = scrubber
        self.exchanges: list[_Exchange | None] = []
        """In the order the requests were sent; ``None`` while unanswered or when failed."""
        self.ids = IdTokens()
        self.script_error: ScriptExhaustedError | None = None
        self._guard = threading.Lock()

    def request(self, sent: SentRequest) -> WireAnswer | Pending | None:
        try:
            split = split_body(sent.api, sent.body)
        except ValueError:
            if self.recording is None:
                return None  # not a JSON object: recorded as other traffic, untouched
            return self._unreadable(sent)  # a replay never goes out
        if self.recording is not None:
            return self._replay(sent, split)
        if self.script is not None:
            return self._scripted(sent, split)

        with self._guard:
            slot = len(self.exchanges)
            self.exchanges.append(None)

        def keep(reply: WireAnswer | None) -> None:
            if reply is not None:  # a failed attempt (the SDK may retry) is not recorded
                with self._guard:
                    self.exchanges[slot] = _Exchange(sent, split, reply)
                    self._add(sent, split)

        return keep

    def _add(self, sent: SentRequest, split: Split) -> int:
        number = len(self.run.requests) + 1
        header = WireHeader(split.config, split.system, split.tools)
        self.run.requests.append(
            WireRequest(
                number,
                sent.api,
                sent.path,
                header,
                split.messages,
                sent.body,
                split.prefix_sha256,
            )
        )
        return number

    def _scripted(self, sent: SentRequest, split: Split) -> WireAnswer:
        assert self.script is not None
        with self._guard:
            try:
                answer = self.script.answer(sent.api, json.loads(sent.body))
            except ScriptExhaustedError as error:
                self.script_error = self.script_error or error
                return _error_reply(sent.api, str(error), "headerlock_script_exhausted")
            reply = WireAnswer(*answer)
            self.exchanges.append(_Exchange(sent, split, reply))
            self._add(sent, split)
        return reply

    def _unreadable(self, sent: SentRequest) -> WireAnswer:
        with self._guard:
            number = len(self.run.requests) + 1
            found = Difference(number, sent.api, "request", "the body is not a JSON object")
            self.run.differences.append(found)
        return _error_reply(sent.api, found.line(), "headerlock_mismatch")

    def _replay(self, sent: SentRequest, split: Split) -> WireAnswer:
        recorded = self.recording
        assert recorded is not None
        with self._guard:
            self.scrubber = self.scrubber.plus(header_secrets(sent.headers))
            number = self._add(sent, split)
            live = build_entry(
                split, sent.path, pinned=recorded.pinned, scrubber=self.scrubber, ids=self.ids
            )
            if number > len(recorded.requests):
                found = [extra_request(number, live, len(recorded.requests))]
            else:
                found = entry_differences(
                    number, recorded.requests[number - 1], live, pinned=recorded.pinned
                )
            self.run.differences.extend(found)
        if found:
            summary = "; ".join(d.line() for d in found)
            message = f"{summary} (recording {self.run.path})"
            return _error_reply(sent.api, message, "headerlock_mismatch")
        response = recorded.requests[number - 1].response
        assert response is not None
        return WireAnswer(*response.to_http())

    def recorded(self, pinned: bool) -> WireRecording:
        """The recording of the exchanges kept, scrubbed with every secret seen."""
        kept = [ex for ex in self.exchanges if ex is not None]
        secrets = [s for ex in kept for s in header_secrets(ex.sent.headers)]
        scrubber = self.scrubber.plus(secrets)
        ids = IdTokens()
        entries = tuple(
            build_entry(
                ex.split,
                ex.sent.path,
                pinned=pinned,
                scrubber=scrubber,
                ids=ids,
                response=WireResponse.from_http(
                    ex.reply.status, ex.reply.content_type, ex.reply.body
                ),
            )
            for ex in kept
        )
        return WireRecording(pinned, entries)


class WireLock:
    """The context manager ``lock()`` returns (``with`` or ``async with``)."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        *,
        mode: Mode,
        pin: bool,
        script: Sequence[ReplySpec] | None,
        redact: Redact | None,
        redact_env: Sequence[str],
    ) -> None:
        if mode not in MODES:
            raise ConfigError(f"mode must be 'record' or 'replay', got {mode!r}", key="mode")
        if mode == "replay" and path is None:
            raise ConfigError("replay needs the path of a wire recording", key="path")
        if isinstance(redact_env, str):
            raise ConfigError("redact_env is a list of variable names", key="redact_env")
        self.path = None if path is None else Path(path)
        self.mode: Mode = mode
        self.pin = pin
        self._script = WireScript(script) if script is not None and mode == "record" else None
        self._scrubber = Scrubber.of([*secret_values(), *env_secrets(redact_env)], redact)
        self._stack: ExitStack | None = None
        self._session: _Session | None = None
        self.run: WireRun | None = None

    def __enter__(self) -> WireRun:
        if self._stack is not None:
            raise ConfigError(
                "a wire lock opens once; call lock() again for another block", key="lock"
            )
        recording = None
        pinned = self.pin
        if self.mode == "replay":
            assert self.path is not None
            recording = _load(self.path)
            if self.pin and not recording.pinned:
                raise ConfigError(
                    f"{self.path}: the recording is not pinned; record it with pin=True",
                    key="pin",
                )
            pinned = recording.pinned
        self.run = WireRun(self.path, self.mode, pinned, recording=recording)
        self._session = _Session(
            self.run, recording=recording, script=self._script, scrubber=self._scrubber
        )
        stack = ExitStack()
        stack.enter_context(intercept(self._session))
        self._stack = stack
        return self.run

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._stack is not None and self._session is not None and self.run is not None
        self._stack.close()
        failure = exc if isinstance(exc, Exception) else None
        if exc is not None and failure is None:
            return  # KeyboardInterrupt, cancellation: nothing to add
        if self.mode == "record":
            self._finish_record(self._session, self.run, failure)
        else:
            self._finish_replay(self.run, failure)

    async def __aenter__(self) -> WireRun:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)

    def _finish_record(self, session: _Session, run: WireRun, failure: Exception | None) -> None:
        if session.script_error is not None:
            raise _chained(session.script_error, failure)
        if failure is not None:
            return  # a failed block writes nothing: the old recording stays byte for byte
        run.recording = session.recorded(run.pinned)
        if self.path is not None:
            save_wire_recording(run.recording, self.path)

    def _finish_replay(self, run: WireRun, failure: Exception | None) -> None:
        recording = run.recording
        assert recording is not None
        if failure is None and len(run.requests) < len(recording.requests):
            run.differences.append(unsent_requests(recording.requests, len(run.requests)))
        if run.differences:
            path = str(self.path)
            error = WireMismatch(
                report(run.differences, path=path),
                path=path,
                differences=[d.line() for d in run.differences],
            )
            raise _chained(error, failure)


_LOADED_MAX: Final = 64
_loaded: dict[str, tuple[tuple[int, int, int, int], WireRecording]] = {}
"""Recordings read by earlier locks, with the file's identity when read."""


def _load(path: Path) -> WireRecording:
    """``load_wire_recording(path)``, read again only when the file changed (a recording
    replayed by several locks, as a wire scenario's runs do, is parsed once)."""
    try:
        info = path.stat()
    except OSError:
        return load_wire_recording(path)  # its own error
    stamp = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    key = os.fspath(path)
    cached = _loaded.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    recording = load_wire_recording(path)
    _loaded.pop(key, None)
    if len(_loaded) >= _LOADED_MAX:
        del _loaded[next(iter(_loaded))]
    _loaded[key] = (stamp, recording)
    return recording


def _chained(error: Exception, context: Exception | None) -> Exception:
    if context is not None:
        error.__context__ = context
    return error


def lock(
    path: str | os.PathLike[str] | None,
    *,
    mode: Mode = "replay",
    pin: bool = False,
    script: Sequence[ReplySpec] | None = None,
    redact: Redact | None = None,
    redact_env: Sequence[str] = (),
) -> WireLock:
    """Record or replay the model requests sent through ``httpx2``/``httpx`` in the block.

    ``mode="record"`` forwards to the endpoint (or answers from ``script``, the
    fixture ``model:`` replies) and writes ``path`` on a clean exit; ``path``
    may be ``None`` to keep the run in memory only. ``mode="replay"`` (the
    default) serves the recording and raises ``WireMismatch`` at exit when a
    request differs; ``pin`` comes from the recording. ``pin=True`` records the
    system and tools as sent and compares their bytes. Values of auth headers,
    of the secrets ``headerlock.formats.secrets`` lists (``HEADERLOCK_API_KEY``,
    ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``HEADERLOCK_REDACT_ENV``, the ini
    option) and of ``redact_env`` become ``<<secret>>``; ``redact`` scrubs any
    other string. Yields a ``WireRun``.
    """
    return WireLock(path, mode=mode, pin=pin, script=script, redact=redact, redact_env=redact_env)
