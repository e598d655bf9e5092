"""``lock()``: record or replay every request an agent sends over HTTP.

Record mode forwards each request to its endpoint (or answers model requests from a
``script``) and, on a clean exit only, writes the wire recording atomically, its
exchanges in causal order (``origins``), never arrival order. Replay mode never touches
the network: each request is matched by content to a recorded exchange and served its
answer (``matching``); a model request that matches nothing is answered with an HTTP
400 (which the SDKs do not retry) and raised as ``WireMismatch`` at exit, even if the
agent swallowed the 400. A replaying or scripted lock is sealed (``seal``): nothing
unrecorded leaves the process.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import Final

from headerlock.errors import (
    ConfigError,
    HeaderlockError,
    IgnoreRuleError,
    OutputFileError,
    RecordingRunError,
    WireMismatch,
)
from headerlock.formats.file_memo import FileMemo
from headerlock.formats.header_lock import (
    LOCK_NAME,
    exclusive,
    merge_lock,
    write_pending_lock,
)
from headerlock.formats.pending import NO_BASE, base_of, remove_pending, write_pending
from headerlock.formats.secrets import env_secrets, secret_env, secret_values
from headerlock.formats.strict_yaml import paused_gc
from headerlock.formats.wire_http import HttpEntry
from headerlock.formats.wire_recording import (
    WireRecording,
    load_wire_recording,
    save_wire_recording,
)
from headerlock.formats.wire_scrub import Redact, Scrubber
from headerlock.formats.wire_volatile import normalize_responses
from headerlock.formats.write_lock import write_unless_changed
from headerlock.runtime.adapters.scripted import ReplySpec
from headerlock.testing.wire import origins, seal
from headerlock.testing.wire.apis import NAMES, detect_api
from headerlock.testing.wire.clients.install import intercept, seen_clients
from headerlock.testing.wire.compare import order_flake, report, unsent_requests
from headerlock.testing.wire.header_book import HeaderBook, locked as locked_headers
from headerlock.testing.wire.ignore import IgnoreRules, header_notice, unmatched_message
from headerlock.testing.wire.lock_options import lock_options
from headerlock.testing.wire.record_mode import ModeName, RecordMode, record_mode
from headerlock.testing.wire.request_header import HttpRules
from headerlock.testing.wire.run import Mode, WireRun
from headerlock.testing.wire.script import WireScript
from headerlock.testing.wire.session import LockSession

ACTIONS: Final[dict[RecordMode, Mode]] = {"none": "replay", "new": "new", "all": "record"}
"""What a lock in each record mode does (``WireRun.mode``: ``replay`` or ``record``;
``new`` becomes one of them when the lock opens)."""


class WireLock:
    """The context manager ``lock()`` returns (``with`` or ``async with``)."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        *,
        mode: ModeName,
        pin: bool,
        script: Sequence[ReplySpec] | None,
        redact: Redact | None,
        redact_env: Sequence[str],
        allow_hosts: Iterable[str] = (),
        record_errors: bool = False,
        ignore: Sequence[str] | IgnoreRules = (),
        pending: bool = False,
        stand_in: bool = False,
        http: tuple[str, Sequence[HttpEntry]] | None = None,
        header_lock: str | os.PathLike[str] | None = None,
        http_headers: Sequence[str] = (),
    ) -> None:
        """``http``: where a scripted record answers other traffic from (its name for
        messages, and the exchanges), instead of the previous recording at ``path``."""
        action = ACTIONS[record_mode(mode, where="lock(): mode")]
        if action in ("replay", "new") and path is None:
            raise ConfigError(
                f"lock(): mode {mode!r} needs the path of a wire recording", key="path"
            )
        self.path = None if path is None else Path(path)
        self.mode: Mode = action
        self.pin = pin
        self._script_spec = script
        self._scrubber = Scrubber.of([*secret_values(), *env_secrets(redact_env)], redact)
        self._allow_hosts = seal.allowed_hosts(allow_hosts)
        self._record_errors = record_errors
        if isinstance(ignore, IgnoreRules):
            self._ignore = ignore
        else:  # lock(ignore=...) called directly: say once what a header rule turns off
            self._ignore = IgnoreRules(ignore)
            _warn_header_rules(self._ignore)
        if pin:
            self._ignore.refuse_pinned()
        self._pending = pending and self.path is not None
        self._stand_in = stand_in
        """Replay: a request that matches nothing gets the closest recorded answer, as with
        ``pending``, but no pending file is written (``headerlock flakes``)."""
        self._http = http
        self.header_lock = None if header_lock is None else Path(header_lock)
        """The header lock an unpinned record writes its headers to (``None``: keep none)."""
        self._http_rules = (
            NO_HTTP_RULES
            if isinstance(http_headers, tuple | list) and not http_headers
            else HttpRules.parse(http_headers, where="http_headers")
        )
        self._opened = False
        self._base = NO_BASE
        self._unpended: str | None = None
        """Why a mismatch wrote no pending file (a directory, a link at its path)."""
        self._session: LockSession | None = None
        self._origins: AbstractContextManager[object] | None = None
        self._intercept: AbstractContextManager[None] | None = None
        self.run: WireRun | None = None

    @property
    def unpended(self) -> str | None:
        """Why a mismatching replay wrote no pending file (a link or a directory at its
        path), as the mismatch's last line says it; ``None`` when one was written or none
        was due."""
        return self._unpended

    @property
    def ignore(self) -> IgnoreRules:
        """The lock's ignore rules (and which of them matched so far)."""
        return self._ignore

    def _effective_mode(self) -> Mode:
        """``new`` replays a recording that exists and records one that does not."""
        if self.mode != "new":
            return self.mode
        assert self.path is not None
        return "replay" if self.path.exists() else "record"

    def __enter__(self) -> WireRun:
        if self._opened:
            raise ConfigError(
                "a wire lock opens once; call lock() again for another block", key="lock"
            )
        self._opened = True
        mode = self._effective_mode()
        recording = previous = None
        pinned = self.pin
        script = WireScript(self._script_spec) if self._script_spec is not None else None
        rules = None if self.header_lock is None or pinned else self._http_rules
        locked = None
        if mode == "replay":
            assert self.path is not None
            recording = _load(self.path)
            if self.pin and not recording.pinned:
                raise ConfigError(
                    f"{self.path}: the recording is not pinned; record it with pin=True",
                    key="pin",
                )
            pinned, script = recording.pinned, None
            if pinned:
                self._ignore.refuse_pinned()
            locked = locked_headers(self.path, recording, self.header_lock)
            rules = None if locked is None else self._http_rules
        elif script is not None and self._http is not None:
            previous = WireRecording(False, (), tuple(self._http[1]))
        elif script is not None and self.path is not None:
            previous = _previous(self.path)  # other traffic is answered from it
        if mode == "record" and self.path is not None:
            self._base = base_of(self.path)  # what it may replace: it still, or nothing
        self.run = WireRun(self.path, mode, pinned, recording=recording)
        session = LockSession(
            self.run,
            recording=recording,
            previous=previous,
            script=script,
            scrubber=self._scrubber,
            allow_hosts=self._allow_hosts,
            ignore=self._ignore,
            keep_going=(self._pending or self._stand_in) and mode == "replay",
            headers=HeaderBook(rules, locked),
        )
        if previous is not None and self._http is not None:
            session.http_source = self._http[0]
        self._session = session
        self._origins = origins.enter(session)
        self._origins.__enter__()
        self._intercept = intercept(session)
        try:
            self._intercept.__enter__()
            if session.sealed:
                seal.seal(session)
        except BaseException:
            self._close()
            raise
        return self.run

    def _close(self) -> None:
        session = self._session
        assert session is not None
        session.is_open = False
        seal.unseal(session)
        assert self._intercept is not None and self._origins is not None
        try:
            self._intercept.__exit__(None, None, None)
        finally:
            self._origins.__exit__(None, None, None)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        session, run = self._session, self.run
        assert session is not None and run is not None
        self._close()
        run.requests[:] = session.ordered_requests()
        run.secrets = session.known_secrets().secrets
        failure = exc if isinstance(exc, Exception) else None
        if exc is not None and failure is None:
            return  # KeyboardInterrupt, cancellation: nothing to add
        if run.mode == "record":
            with paused_gc():  # the recording's objects are acyclic: no collection per event
                self._finish_record(session, run, failure)
        else:
            self._finish_replay(session, run, failure)

    async def __aenter__(self) -> WireRun:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)

    def _finish_record(self, session: LockSession, run: WireRun, failure: Exception | None) -> None:
        outcome = session.outcome
        if outcome.script_error is not None:
            raise _chained(outcome.script_error, failure)
        if session.script is not None:
            session.script.races.check()
        if outcome.refusals:
            raise _chained(outcome.refusals[0], failure)
        if failure is not None:
            return  # a failed block writes nothing: the old recording stays byte for byte
        kept = self.path is not None and self.path.exists()
        if outcome.failed and not self._record_errors:
            raise RecordingRunError(
                f"{self.path or 'wire lock'}: a model request failed while recording, so"
                f" nothing was written{' (the old recording is kept)' if kept else ''}: "
                + "; ".join(outcome.failed)
                + ". To record an error exchange on purpose, pass record_errors=True"
                " (@pytest.mark.headerlock_wire(record_errors=True))",
                scenario=str(self.path),
            )
        run.recording = session.recorded(run.pinned)
        if session.script is None:  # live: ids, times and fingerprints do not churn
            run.recording = normalize_responses(run.recording)
        run.headers = session.book.of(run.recording)
        self._check_ignored()
        if self.path is None:
            return
        if not run.recording.requests:
            unreadable = sorted(
                {f"{e.method} {e.path}" for e in run.recording.http if detect_api(e.method, e.path)}
            )
            saw = (
                f" (it saw {', '.join(unreadable)} with a body that is not a JSON object:"
                " not a model request)"
                if unreadable
                else ""
            )
            raise RecordingRunError(
                f"{self.path}: the block sent no model request headerlock could see{saw}, so"
                " nothing was written. headerlock sees requests sent through"
                f" {', '.join(seen_clients())}; route the agent's HTTP client through one of"
                " them (a custom transport such as httpx.MockTransport is not seen)",
                scenario=str(self.path),
            )
        path, base = self.path, self._base
        recording, headers, lock = run.recording, run.headers, self.header_lock

        def save() -> None:
            save_wire_recording(recording, path)
            if lock is not None:
                with exclusive(lock):
                    merge_lock(lock, headers)

        write_unless_changed(
            path, save, unchanged=lambda: base_of(path) == base, since="this lock opened"
        )

    def _finish_replay(self, session: LockSession, run: WireRun, failure: Exception | None) -> None:
        recording = run.recording
        assert recording is not None
        unserved = session.models.unserved()
        if failure is None and unserved:
            run.differences.append(unsent_requests(recording.requests, unserved))
        problems: list[str] = []
        if failure is None:
            problems = [
                f"{e.method} {e.path}: recorded but never sent"
                for e in (session.http.entries[i] for i in session.http.unserved())
            ]
        refusals = [str(e) for e in session.outcome.refusals]
        if self._pending and self.path is not None:
            green = failure is None and not (run.differences or refusals or problems)
            self._pend(session, run, failure, green=green)
        if run.differences or refusals or problems:
            path = str(self.path)
            extra = [*refusals, *problems]
            lines = [f"wire replay of {path} does not match the recording:"]
            if run.differences:
                lines = report(run.differences, path=path).splitlines()
            hint = lines.pop() if run.differences else None  # what to do, after every line
            lines += [f"  {line}" for line in extra]
            lines += [hint] if hint is not None else []
            if run.pending is not None:
                lines.append(pending_line(run.pending))
            elif self._unpended is not None:
                lines.append(self._unpended)
            text = "\n".join(lines)
            error = WireMismatch(
                text, path=path, differences=[d.line() for d in run.differences] + extra
            )
            raise _chained(error, failure)
        if failure is None:
            self._check_ignored()

    def _pend(
        self, session: LockSession, run: WireRun, failure: Exception | None, *, green: bool
    ) -> None:
        """Write the pending file of a mismatching replay; remove a stale one after a
        green replay."""
        assert self.path is not None
        if not run.differences:
            if green:
                remove_pending(self.path)
            return
        if order_flake(run.differences):
            return  # one hash seed's order is not a change to accept (ORDER_HINT)
        made = session.recorded(run.pinned)
        if not made.requests:
            return
        partial = session.cut
        if partial is None and failure is not None:
            partial = f"the block raised {type(failure).__name__}, so the session may end early"
        try:
            run.pending = write_pending(self.path, made.to_text(), partial=partial)
            if session.book.rules is not None:
                where = self.header_lock or self.path.parent / LOCK_NAME
                run.pending_lock = write_pending_lock(where, session.book.of(made))
        except OutputFileError as error:
            self._unpended = f"(no pending file: {error})"

    def _check_ignored(self) -> None:
        unmatched = self._ignore.unmatched()
        if unmatched:
            raise IgnoreRuleError(
                unmatched_message(unmatched, str(self.path or "wire lock")), paths=unmatched
            )


NO_HTTP_RULES: Final = HttpRules()
"""``HttpRules.parse(())``: no header added or dropped (most locks), made once."""
_warned: set[str] = set()
"""The header notices this process has warned about (each once)."""


def _warn_header_rules(rules: IgnoreRules) -> None:
    for notice in (header_notice(p) for p in rules.paths):
        if notice is not None and notice not in _warned:
            _warned.add(notice)
            warnings.warn(notice, UserWarning, stacklevel=4)


def pending_line(path: Path) -> str:
    """The line a mismatch adds about its pending file."""
    return (
        f"pending: {path.as_posix()} holds the recording this run would make; accept or"
        " reject it with: headerlock review"
    )


_RECORDINGS: Final[FileMemo[WireRecording]] = FileMemo()
"""Recordings read by earlier locks, while their files stay the same."""


def _load(path: Path) -> WireRecording:
    """``load_wire_recording(path)``, read again only when the file or the secrets it is
    checked for changed (a recording replayed by several locks, as a wire scenario's
    runs do, is parsed once)."""
    secrets = tuple(secret_env())
    return _RECORDINGS.get(path, lambda: load_wire_recording(path, apis=NAMES), context=secrets)


def _previous(path: Path) -> WireRecording | None:
    """The recording a scripted record replaces, when there is a readable one."""
    if not path.exists():
        return None
    try:
        return _load(path)
    except HeaderlockError:
        return None


def _chained(error: Exception, context: Exception | None) -> Exception:
    if context is not None:
        error.__context__ = context
    return error


def lock(
    path: str | os.PathLike[str] | None,
    *,
    mode: ModeName = "none",
    pin: bool = False,
    script: Sequence[ReplySpec] | None = None,
    redact: Redact | None = None,
    redact_env: Sequence[str] = (),
    allow_hosts: Iterable[str] = (),
    record_errors: bool = False,
    ignore: Sequence[str] = (),
    pending: bool = False,
    header_lock: str | os.PathLike[str] | None = None,
    http_headers: Sequence[str] = (),
) -> WireLock:
    """Record or replay the requests the block sends (``httpx2``, ``httpx``, ``aiohttp``,
    ``requests``/``urllib3``); threads, tasks and pool jobs started in the block belong
    to it.

    ``mode`` is a record mode (``headerlock.testing.wire.record_mode``): ``"none"`` (the
    default; alias ``"replay"``) serves the recording and raises ``WireMismatch`` at exit
    when a request differs or a recorded one was not sent; ``pin`` comes from the
    recording. ``"all"`` (alias ``"record"``) forwards to the endpoint (or answers model
    requests from ``script``, the fixture ``model:`` replies, each optionally with a
    ``match:``) and writes ``path`` on a clean exit; ``path`` may be ``None`` to keep the
    run in memory only. A model request answered with an error (HTTP >= 400, no answer)
    fails the record and keeps the old file unless ``record_errors=True``. ``"new"``
    replays ``path`` when it exists and records it otherwise. Every keyword is checked
    here (``lock_options``): a bad one raises ``ConfigError`` naming it.
    ``pin=True`` records the system and tools as sent and compares their bytes. A
    replay or a scripted record is sealed: nothing unrecorded leaves the process except
    to ``allow_hosts`` (which never lets a model request, or traffic the recording
    holds, through). Values of auth headers, of the secrets
    ``headerlock.formats.secrets`` lists (``HEADERLOCK_API_KEY``, the providers' key
    variables, ``HEADERLOCK_REDACT_ENV``, the ini option) and of ``redact_env`` become
    ``<<secret>>``; ``redact`` scrubs any other string. A live record normalizes the
    volatile fields of the responses (ids, ``created``, ``system_fingerprint``:
    ``headerlock.formats.wire_volatile``), so re-recording an unchanged exchange gives
    the same bytes.

    ``ignore`` lists paths into each request whose values are written as
    ``<<ignored>>`` and never compared (``config.seed``, ``messages[*].content``,
    ``tools[*].function.description``; syntax in ``headerlock.formats.wire_ignore``);
    a rule that matches no request of the block raises ``IgnoreRuleError`` (a typo
    must not disable a check). A pinned lock refuses rules inside system or tools.

    ``pending=True``: a replay that mismatches keeps answering with the closest
    recorded responses (not a 400) and writes the recording it would have made to
    ``<path>.new`` (``headerlock.formats.pending``), never touching ``path``; a green
    replay removes a stale one. ``headerlock review`` accepts or rejects it. Yields a
    ``WireRun``.

    ``header_lock``: the header lock file (``headers.lock.yaml``) an unpinned record
    writes each request's header to, once, the recording keeping its id; a replay of
    such a recording compares each request's header with the locked one.
    ``http_headers`` adds a header to those locked (``"x-tenant"``) or drops one
    (``"-openai-beta"``).
    """
    options = lock_options(
        {"mode": mode, "pin": pin, "script": script, "redact": redact,
         "redact_env": redact_env, "allow_hosts": allow_hosts, "record_errors": record_errors,
         "ignore": ignore, "pending": pending, "header_lock": header_lock,
         "http_headers": http_headers},
        where="lock()",
    )  # fmt: skip
    return WireLock(path, **options.keywords())
