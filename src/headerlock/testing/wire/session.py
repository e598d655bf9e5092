"""What one wire lock does with each request of the code it owns (``clients.core``).

- Live record: forward, keep the exchange (model requests and all other traffic).
- Scripted record: answer model requests from the script; other traffic from the
  previous recording at the same path, else refuse it (sealed).
- Replay: answer every request from the recording, matched by content
  (``matching``); a model request that matches nothing gets an HTTP 400 in its api's
  error shape and a ``Difference``; other traffic that matches nothing is refused.

Each exchange is keyed by its causal origin (``origins``), so the recording is written
in the same order in every run. ``allow_hosts`` never lets a model request through (it
is recorded, scripted or replayed like any other), nor traffic the recording holds: it
only lets other traffic to those hosts pass, untouched and unrecorded.
"""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import dataclass, field

from headerlock.errors import NetworkSealedError, RecordingRunError, ScriptExhaustedError
from headerlock.formats.secrets import request_secrets
from headerlock.formats.wire_http import HttpEntry, WireBody
from headerlock.formats.wire_recording import WireEntry, WireRecording
from headerlock.formats.wire_response import WireResponse
from headerlock.formats.wire_scrub import IdTokens, Scrubber
from headerlock.testing.wire import origins, seal
from headerlock.testing.wire.apis import ModelApi, Split
from headerlock.testing.wire.apis.base import answer_problem
from headerlock.testing.wire.clients.core import Pending, SentRequest, WireAnswer
from headerlock.testing.wire.compare import (
    Difference,
    entry_differences,
    extra_request,
    http_difference,
)
from headerlock.testing.wire.conversations import RunRequest, canonical_order
from headerlock.testing.wire.entry import build_entry, scrub_response
from headerlock.testing.wire.header_book import HeaderBook
from headerlock.testing.wire.ignore import IgnoreRules
from headerlock.testing.wire.matching import RecordedExchanges
from headerlock.testing.wire.members import DuplicateKeyError
from headerlock.testing.wire.memo import MessageMemo
from headerlock.testing.wire.origins import Key
from headerlock.testing.wire.run import WireRequest, WireRun
from headerlock.testing.wire.script import JSON, WireScript

_UNOWNED = sys.maxsize
"""The first key part of requests from code no origin covers: after all others."""


@dataclass(slots=True)
class _Exchange:
    key: Key
    sent: SentRequest
    split: Split | None
    answer: WireAnswer


@dataclass(slots=True)
class Outcome:
    """What a lock's requests left to decide at exit."""

    refusals: list[Exception] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    """Model requests whose live answer was an error (status >= 400, or none)."""
    script_error: ScriptExhaustedError | None = None


def _answer_of(response: WireResponse) -> WireAnswer:
    return WireAnswer(*response.to_http())


def error_answer(api: ModelApi, message: str, code: str) -> WireAnswer:
    """A plain HTTP 400 in the api's error shape (no ``x-should-retry``: never retried)."""
    body = api.error_body(f"headerlock: {message}", code)
    return WireAnswer(400, JSON, json.dumps(body, ensure_ascii=False).encode())


class LockSession:
    """The interceptor of one lock (``clients.core.Interceptor``, ``seal.Sealed``)."""

    def __init__(
        self,
        run: WireRun,
        *,
        recording: WireRecording | None,
        previous: WireRecording | None,
        script: WireScript | None,
        scrubber: Scrubber,
        allow_hosts: frozenset[str],
        ignore: IgnoreRules | None = None,
        keep_going: bool = False,
        headers: HeaderBook | None = None,
    ) -> None:
        self.run = run
        self.book = headers or HeaderBook(None, None)  # each request's header, and the lock
        self.ignore = ignore if ignore is not None else IgnoreRules()
        self.keep_going = keep_going
        """Replay: answer a mismatching request with the closest recorded response and
        keep every exchange, for the pending file (``pending``)."""
        self.cut: str | None = None
        """Why the kept session stops early (a request no recorded response could answer)."""
        self.recording = recording
        self.script = script
        self.scrubber = scrubber
        self.allow_hosts = allow_hosts
        self.http_source: str | None = None
        """Where a scripted record's other traffic is answered from when not from the
        previous recording (an ``app: wire`` fixture's ``config.http`` list)."""
        self.is_open = True
        self.sealed = recording is not None or script is not None
        self.outcome = Outcome()
        self.exchanges: list[_Exchange] = []
        source = recording if recording is not None else previous
        self.models: RecordedExchanges[WireEntry] = RecordedExchanges(
            recording.requests if recording is not None else ()
        )
        self.http: RecordedExchanges[HttpEntry] = RecordedExchanges(
            source.http if source is not None else ()
        )
        self._keys: dict[int, Key] = {}
        self._memo = MessageMemo()
        self._arrivals = 0
        self._guard = threading.Lock()

    # -- the interceptor ---------------------------------------------------------------
    def refused(self, error: Exception) -> None:
        with self._guard:
            self.outcome.refusals.append(error)

    def request(self, sent: SentRequest) -> WireAnswer | Pending | None:
        if self._passes(sent):
            return None
        key = self._key()
        try:
            split = self._split(sent)
        except DuplicateKeyError as error:
            return self._ambiguous(sent, error)
        if split is None:
            return self._other(sent, key)
        split = self._memo.shared(split, sent.body)
        self.scrubber = self.scrubber.plus(_credentials(sent))
        if self.recording is not None:
            return self._replay(sent, split, key)
        if self.script is not None:
            return self._scripted(sent, split, key)
        return self._forward(sent, split, key)

    # -- the three modes ----------------------------------------------------------------
    def _replay(self, sent: SentRequest, split: Split, key: Key) -> WireAnswer:
        assert self.recording is not None
        pinned, live, header, live_key = self.run.pinned, None, None, None
        if not self.ignore:  # the key without the entry (``MessageMemo.key``), if known
            header = self.book.header(split, sent, pinned, self.scrubber)
            live_key = self._memo.key(split, sent.body, sent.path, pinned, self.scrubber, header)
        if live_key is None:
            live, live_key = self._entry(split, sent, pinned)
        with self._guard:
            number = self._add_request(sent, split, key)
            index = self.models.take(live, live_key)
            found: list[Difference] = []
            recorded = None if index is None else self.recording.requests[index]
            if recorded is None or self.book.differs(recorded, live or header):
                live = live or self._entry(split, sent, pinned)[0]  # to explain what differs
                if index is None:
                    found = self._explain_miss(number, live, split.api)
                    self.run.differences.extend(found)
                    index = self._stand_in(number, live)
                recorded = None if index is None else self.recording.requests[index]
                if recorded is not None and self.book.differs(recorded, live):
                    self.run.differences.append(
                        self.book.difference(number, recorded, live, split.api)
                    )
        if index is None:
            summary = "; ".join(d.line() for d in found)
            message = f"{summary} (recording {self.run.path})"
            return error_answer(split.api, message, "headerlock_mismatch")
        response = self.recording.requests[index].response
        assert response is not None
        answer = _answer_of(response)
        if self.keep_going:
            with self._guard:
                if self.cut is None:
                    self.exchanges.append(_Exchange(key, sent, split, answer))
        return answer

    def _ambiguous(self, sent: SentRequest, error: DuplicateKeyError) -> WireAnswer:
        """A model request whose body holds a key twice (which one a provider reads is its
        choice): never forwarded or compared; a 400 now, and the lock fails at exit."""
        assert sent.api is not None
        where = str(self.run.path or "wire lock")
        message = (
            f"{sent.method} {self._shown(sent)}: {error}; a provider reads one of the two and"
            " headerlock would compare the other, so the request is refused: send each key once"
        )
        self.refused(RecordingRunError(f"{where}: {message}", scenario=where))
        return error_answer(sent.api, message, "headerlock_duplicate_key")

    def _stand_in(self, number: int, live: WireEntry) -> int | None:
        """With ``keep_going``, the unserved recorded exchange of the same api most like
        ``live``, now served in its place; else ``None`` (a 400, and the kept session
        is cut there)."""
        if not self.keep_going:
            return None
        index = self.models.closest(live)
        if index is None or self.models.entries[index].api != live.api:
            self.cut = self.cut or (
                f"request {number} ({live.api}) has no recorded response left to answer it,"
                " so this session stops before it"
            )
            return None
        self.models.take_index(index)
        return index

    def _explain_miss(self, number: int, live: WireEntry, api: ModelApi) -> list[Difference]:
        """The differences of a request no recorded exchange answers, named by the number
        of the recorded request it is closest to (the recording's numbering, the one the
        cache report and ``headerlock review`` use), else by its own (an extra request)."""
        closest = self.models.closest(live)
        if closest is None:
            return [extra_request(number, live, len(self.models.entries))]
        recorded = self.models.entries[closest]
        numbered = closest + 1
        found = entry_differences(numbered, recorded, live, pinned=self.run.pinned, model=api)
        return found or [Difference(numbered, live.api, "request", "differs from the recording")]

    def _scripted(self, sent: SentRequest, split: Split, key: Key) -> WireAnswer:
        assert self.script is not None
        origin = origins.current_origin()
        try:
            rendered = self.script.answer(
                split.api, json.loads(sent.body), path=sent.path, origin=origin
            )
        except ScriptExhaustedError as error:
            with self._guard:
                self.outcome.script_error = self.outcome.script_error or error
            return error_answer(split.api, str(error), "headerlock_script_exhausted")
        answer = WireAnswer(*rendered)
        with self._guard:
            self.exchanges.append(_Exchange(key, sent, split, answer))
            self._add_request(sent, split, key)
        return answer

    def _forward(self, sent: SentRequest, split: Split | None, key: Key) -> Pending:
        def keep(answer: WireAnswer | None) -> None:
            with self._guard:
                if split is not None and (answer is None or answer.status >= 400):
                    status = "no answer (a transport error)" if answer is None else answer.status
                    self.outcome.failed.append(f"{sent.method} {self._shown(sent)}: HTTP {status}")
                elif split is not None and answer is not None:
                    problem = answer_problem(answer.content_type, answer.body)
                    if problem is not None:  # a proxy's error page, sent with a 200
                        shown = f"{sent.method} {self._shown(sent)}"
                        self.outcome.failed.append(f"{shown}: HTTP {answer.status} with {problem}")
                if answer is None:
                    return  # a failed attempt (the SDK may retry) is not recorded
                self.exchanges.append(_Exchange(key, sent, split, answer))
                if split is not None:
                    self._add_request(sent, split, key)

        return keep

    def _other(self, sent: SentRequest, key: Key) -> WireAnswer | Pending:
        """Traffic that is not a model request (or whose body is not a JSON object)."""
        if not self.sealed:
            return self._forward(sent, None, key)
        entry = self._http_entry(sent)
        with self._guard:
            index = self.http.take(entry)
        if index is None and self.recording is not None:
            return self._http_miss(sent, entry, key)
        if index is None and sent.api is not None:
            # a scripted record: a model request whose body is not a JSON object gets the
            # 400 a provider would give, kept as exact bytes (it replays, never forwarded)
            answer = error_answer(
                sent.api,
                "the request body is not a JSON object, so no scripted reply answers it",
                "headerlock_invalid_body",
            )
            with self._guard:
                self.exchanges.append(_Exchange(key, sent, None, answer))
            return answer
        if index is None:
            error = NetworkSealedError(self._unanswered(sent, entry), host=sent.host)
            self.refused(error)
            raise error
        response = self.http.entries[index].response
        assert response is not None
        answer = _answer_of(response)
        if self.recording is None or self.keep_going:  # a scripted record, a pending file
            with self._guard:
                self.exchanges.append(_Exchange(key, sent, None, answer))
        return answer

    def _http_miss(self, sent: SentRequest, entry: HttpEntry, key: Key) -> WireAnswer:
        """Replay: other traffic that matches no recorded exchange. With the method and
        path of one not yet served, it is a mismatch saying what changed (``keep_going``:
        served that exchange's response, for the pending file); else it is refused. The
        agent gets an HTTP 400 either way (no SDK retries it; nothing is raised through
        its client), and the lock fails at exit."""
        with self._guard:
            closest = self._closest_http(entry)
            if closest is None:
                message = (
                    f"{sent.method} {self._shown(sent)} is not in the recording {self.run.path}"
                    f" (sent to {sent.origin}); a replay sends nothing to the network:"
                    " re-record to add it"
                )
                self.outcome.refusals.append(NetworkSealedError(message, host=sent.host))
                if self.keep_going:
                    self.cut = self.cut or (
                        f"{sent.method} {self._shown(sent)} has no recorded response, so this"
                        " session stops before it"
                    )
                return _http_error(message)
            recorded = self.http.entries[closest]
            found = http_difference(len(self.run.differences) + 1, recorded, entry)
            self.run.differences.append(found)
            self.http.take_index(closest)  # sent, with another body: not "never sent"
            if not self.keep_going:
                return _http_error(f"{found.line()} (recording {self.run.path})")
            response = self.http.entries[closest].response
            assert response is not None
            answer = _answer_of(response)
            self.exchanges.append(_Exchange(key, sent, None, answer))
            return answer

    def _unanswered(self, sent: SentRequest, entry: HttpEntry) -> str:
        """Why a scripted record refuses other traffic it has no answer for."""
        shown = f"{sent.method} {self._shown(sent)}"
        source = self.http_source
        if source is None:
            path = self.run.path
            where = "any recording" if path is None else f"the recording {path}"
            return (
                f"{shown} is not in {where} (sent to {sent.origin}); nothing leaves a"
                f" sealed lock (replay, or a scripted record): record it live, or"
                f" {seal.HOW_TO_ALLOW}"
            )
        with self._guard:
            closest = self._closest_http(entry)
        if closest is not None:
            change = http_difference(0, self.http.entries[closest], entry).detail
            return f"{shown} differs from its entry in {source}: {change}"
        request = json.dumps(entry.request_data(), ensure_ascii=False, sort_keys=True)
        return (
            f"{shown} is not in {source} (sent to {sent.origin}); nothing leaves a"
            f" fixture's run: add it there with its response: {request}"
        )

    def _closest_http(self, entry: HttpEntry) -> int | None:
        """The unserved recorded exchange with ``entry``'s method and path (same query first)."""
        entries, key = self.http.entries, (entry.method, entry.path)
        same = [i for i in self.http.unserved() if (entries[i].method, entries[i].path) == key]
        for index in same:
            if self.http.entries[index].query == entry.query:
                return index
        return same[0] if same else None

    # -- helpers ------------------------------------------------------------------------
    def _passes(self, sent: SentRequest) -> bool:
        """Whether ``sent`` goes out untouched: other traffic to an allowed host that the
        recording does not hold (a model request never does)."""
        if sent.api is not None or seal.normal_host(sent.host) not in self.allow_hosts:
            return False
        if not self.http.entries:
            return True
        entry = self._http_entry(sent)
        with self._guard:
            return not self.http.holds(entry)

    def _key(self) -> Key:
        origin = origins.current_origin()
        if origin is not None:
            return origin.next_key()
        with self._guard:
            self._arrivals += 1
            return (_UNOWNED, self._arrivals)

    def _split(self, sent: SentRequest) -> Split | None:
        if sent.api is None:
            return None
        try:
            return sent.api.split(sent.body)
        except DuplicateKeyError:
            raise
        except (ValueError, RecursionError):  # not a JSON object: kept as exact bytes
            return None

    def _add_request(self, sent: SentRequest, split: Split, key: Key) -> int:
        number = len(self.run.requests) + 1
        self.run.requests.append(WireRequest.of(number, sent.path, split, sent.body))
        self._keys[number] = key
        return number

    def _entry(
        self, split: Split, sent: SentRequest, pinned: bool, response: WireResponse | None = None
    ) -> tuple[WireEntry, str | None]:
        """The entry of a request (ids numbered within it), and its ``request_key`` when
        known; each message scrubbed once per lock (``memo``) when no ignore rule
        rewrites the messages."""
        scrubber = self.scrubber
        if not self.ignore:
            header = self.book.header(split, sent, pinned, scrubber)
            return self._memo.entry(split, sent.body, sent.path, pinned, scrubber, response, header)
        split = self.ignore.apply(split)
        header = self.book.header(split, sent, pinned, scrubber)
        at = sent.path
        ids = IdTokens()
        entry = build_entry(
            split, at, pinned=pinned, scrubber=scrubber, ids=ids, response=response, header=header
        )
        return entry, None

    def _http_entry(self, sent: SentRequest, answer: WireAnswer | None = None) -> HttpEntry:
        body = WireBody.from_bytes(sent.body)
        if body is not None and body.kind == "json" and sent.api is not None:
            body = WireBody("text", sent.body.decode("utf-8"))  # a model body stays exact
        if body is not None and body.kind == "base64":  # bytes: scrubbed as bytes
            body = WireBody.from_bytes(self.scrubber.raw(sent.body))
        elif body is not None:
            body = WireBody(body.kind, self.scrubber.data(body.value))
        response = None
        if answer is not None:
            raw = WireResponse.from_http(answer.status, answer.content_type, answer.body)
            response = scrub_response(raw, self.scrubber)
        path = self.scrubber.text(sent.path)
        query = self.scrubber.query(sent.query)
        encoding = "" if sent.undecoded else sent.encoding
        return HttpEntry(sent.method, path, query, body, response, encoding)

    def _shown(self, sent: SentRequest) -> str:
        query = self.scrubber.query(sent.query)
        return self.scrubber.text(sent.path) + (f"?{query}" if query else "")

    def ordered_requests(self) -> list[WireRequest]:
        """The run's requests in the recording's order (``conversations``), numbered
        again from 1."""
        ranked = sorted(self.run.requests, key=lambda r: self._keys[r.number])
        keys = [self._keys[r.number] for r in ranked]
        ranked = [ranked[i] for i in canonical_order([RunRequest(r) for r in ranked], keys)]
        return [
            WireRequest(n, r.api, r.path, r.header, r.messages, r.body, r.prefix_sha256)
            for n, r in enumerate(ranked, start=1)
        ]

    def known_secrets(self) -> Scrubber:
        """The scrubber with the credentials of every exchange kept (their headers and
        URL userinfo), wherever they reappear."""
        return self.scrubber.plus(s for ex in self.exchanges for s in _credentials(ex.sent))

    def recorded(self, pinned: bool) -> WireRecording:
        """The recording of the exchanges kept, scrubbed with every secret seen (each
        request's ids numbered within it, so the same request always gives the same
        entry); model requests and other traffic each in ``conversations.canonical_order``."""
        kept = sorted(self.exchanges, key=lambda ex: ex.key)
        self.scrubber = self.known_secrets()
        for ex in kept:
            if ex.sent.undecoded:
                raise RecordingRunError(
                    f"{self.run.path or 'wire lock'}: {ex.sent.method} {self._shown(ex.sent)}"
                    f" sends its body with content-encoding {ex.sent.undecoded!r}, which"
                    " headerlock cannot decode to scrub secrets from it, so nothing was written"
                    + (" (install the brotli module for br)" if ex.sent.undecoded == "br" else ""),
                    scenario=str(self.run.path),
                )
        models: list[WireEntry] = []
        keys: list[Key] = []
        http: list[HttpEntry] = []
        http_keys: list[Key] = []
        for ex in kept:
            if ex.split is None:
                http.append(self._http_entry(ex.sent, ex.answer))
                http_keys.append(ex.key)
                continue
            response = WireResponse.from_http(
                ex.answer.status, ex.answer.content_type, ex.answer.body
            )
            models.append(self._entry(ex.split, ex.sent, pinned, response)[0])
            keys.append(ex.key)
        ordered = tuple(models[i] for i in canonical_order(models, keys))
        other = tuple(http[i] for i in canonical_order(http, http_keys))
        return WireRecording(pinned, ordered, other)


def _http_error(message: str) -> WireAnswer:
    """The HTTP 400 a replay answers other traffic it cannot serve with."""
    body = {"error": {"message": f"headerlock: {message}", "code": "headerlock_mismatch"}}
    return WireAnswer(400, JSON, json.dumps(body, ensure_ascii=False).encode())


def _credentials(sent: SentRequest) -> tuple[str, ...]:
    """The secrets ``sent`` carries, wherever they reappear (``request_secrets``)."""
    return request_secrets(tuple(sent.headers), sent.url)
