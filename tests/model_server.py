"""One model server for the tests: a real HTTP server on 127.0.0.1 (a thread, an
ephemeral port) that keeps every hit and answers per route.

A route is data: a method and a glob over the path (``*/chat/completions``,
``*/responses``, ``*/messages``, ``*:generateContent``, ``*/converse``), answered by its answers
in order (the last one repeats). An answer is any status, body and headers: JSON,
raw bytes, or a stream sent chunked with no content length, one HTTP chunk per
piece (an SSE stream: one per event, as providers send them; an AWS event stream:
one per frame); it can come after a
delay or never (timeout tests). A path no route matches gets a 404, and is kept too.

``ModelServer.script`` answers every model api headerlock knows
(``detect_api``) from one queue of scripted replies, rendered by
``headerlock.testing.wire.script``: a new api there needs nothing here.

Take the ``model_server`` fixture (``tests/conftest.py``), or ``with serve() as
server:`` where a function-scoped fixture does not fit (a module-scoped server)::

    chat = model_server.route("*/chat/completions", json_answer(COMPLETION, delay=0.5))
    model_server.route("*/models", json_answer({"data": []}), method="GET")
    ...  # the agent under test, at model_server.base_url
    assert len(chat.hits) == 1 and chat.hits[0].json()["model"] == "gpt-test"
    assert [h.path for h in model_server.hits] == ["/v1/models", "/v1/chat/completions"]
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from headerlock.errors import ScriptExhaustedError
from headerlock.formats import aws_eventstream
from headerlock.runtime.adapters.scripted import ReplySpec, parse_reply
from headerlock.testing.wire.apis import detect_api
from headerlock.testing.wire.script import JSON, render_reply

SSE = "text/event-stream"


@dataclass(frozen=True)
class Hit:
    """One request as the server got it: method, path (no query), the query's
    parameters, lower-cased headers and the raw body."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


@dataclass(frozen=True)
class Answer:
    """One HTTP answer. ``chunks`` sends the body chunked, one HTTP chunk per piece
    and no content length (``body`` is then ignored); ``delay`` waits that many
    seconds first, ``hang`` never answers (until the server stops)."""

    status: int = 200
    body: bytes = b""
    content_type: str | None = JSON
    headers: Mapping[str, str] = field(default_factory=dict)
    chunks: Sequence[bytes] | None = None
    delay: float = 0.0
    hang: bool = False


Responder = Answer | Callable[[Hit], Answer]
"""A route's answer: fixed, or made from the request."""

NOT_FOUND = Answer(404, b'{"error": {"message": "not found"}}')


def json_answer(
    data: Any, status: int = 200, *, headers: Mapping[str, str] | None = None, delay: float = 0.0
) -> Answer:
    """``data`` as a JSON body."""
    return Answer(status, json.dumps(data).encode(), headers=dict(headers or {}), delay=delay)


def sse_answer(
    events: Iterable[Any],
    status: int = 200,
    *,
    content_type: str = SSE,
    headers: Mapping[str, str] | None = None,
    delay: float = 0.0,
) -> Answer:
    """A server-sent event stream, one HTTP chunk per event: a mapping or list is one
    ``data:`` line of JSON, a string one ``data:`` line as it is, bytes a whole event."""
    pieces = [
        event
        if isinstance(event, bytes)
        else f"data: {event if isinstance(event, str) else json.dumps(event)}\n\n".encode()
        for event in events
    ]
    extra = {"Cache-Control": "no-cache", **(headers or {})}
    return Answer(status, content_type=content_type, headers=extra, chunks=pieces, delay=delay)


# -- OpenAI chat streams, as the live adapter reads them -------------------------------


def text_chunks(*pieces: str) -> list[dict[str, Any]]:
    """Chat-completion choices streaming ``pieces`` of text."""
    return [{"delta": {"content": p}} for p in pieces]


def tool_call_chunks(
    call_id: str, name: str, arguments: str, index: int = 0
) -> list[dict[str, Any]]:
    """Chat-completion choices streaming one tool call, its arguments in two halves."""
    half = len(arguments) // 2
    return [
        {
            "delta": {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": arguments[:half]},
                    }
                ]
            }
        },
        {"delta": {"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]}},
    ]


def chat_stream(
    choices: Sequence[Mapping[str, Any]], *, delay: float = 0.0
) -> Callable[[Hit], Answer]:
    """An OpenAI chat-completions stream of ``choices``, then ``[DONE]``; each chunk
    echoes the request's model."""

    def answer(hit: Hit) -> Answer:
        head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0}
        model = hit.json().get("model", "m")
        chunks = [
            {**head, "model": model, "choices": [{"index": 0, "finish_reason": None, **choice}]}
            for choice in choices
        ]
        return sse_answer([*chunks, "[DONE]"], delay=delay)

    return answer


# -- scripted replies in every api's wire format ---------------------------------------


@dataclass(frozen=True)
class HttpError:
    """A script entry answered with an HTTP error instead of a reply.

    ``retry`` sets ``x-should-retry`` (``None`` leaves the SDK's own rules).
    """

    status: int
    message: str = "scripted failure"
    retry: bool | None = None


def _openai_error(status: int, message: str) -> Any:
    return {
        "error": {"message": message, "type": "server_error", "param": None, "code": str(status)}
    }


ERROR_BODIES: dict[str, Callable[[int, str], Any]] = {
    "anthropic.messages": lambda status, message: {
        "type": "error",
        "error": {"type": "api_error", "message": message},
    },
    "bedrock.converse": lambda status, message: {
        "__type": "ThrottlingException" if status == 429 else "InternalServerException",
        "message": message,
    },
}
"""The error body of each api that does not use OpenAI's shape."""


def error_answer(api: str, status: int, message: str, retry: bool | None = None) -> Answer:
    """An HTTP error in ``api``'s error shape; ``retry`` sets ``x-should-retry``."""
    body = ERROR_BODIES.get(api, _openai_error)(status, message)
    headers = {} if retry is None else {"x-should-retry": str(retry).lower()}
    return json_answer(body, status, headers=headers)


class Script:
    """Answers model requests from one queue of scripted replies, in order whatever
    the api. An ``HttpError`` entry answers that status; ``echo_header`` appends the
    value of that request header to every reply's text. A request past the queue, or
    with a body that is not JSON, gets a 400 naming why."""

    def __init__(
        self, replies: Sequence[ReplySpec | HttpError], *, echo_header: str | None = None
    ) -> None:
        self.entries = list(replies)
        self.echo_header = echo_header
        self.answered = 0
        self._lock = threading.Lock()

    def _next(self, api: str) -> tuple[int, ReplySpec | HttpError]:
        with self._lock:
            index = self.answered
            self.answered += 1
        if index >= len(self.entries):
            raise ScriptExhaustedError(api=api, request=index + 1, replies=len(self.entries))
        return index, self.entries[index]

    def __call__(self, hit: Hit) -> Answer:
        api = detect_api(hit.method, hit.path, hit.body)
        if api is None:
            return NOT_FOUND
        try:
            request = hit.json()
            index, entry = self._next(api)
        except (ValueError, ScriptExhaustedError) as exc:
            return error_answer(api, 400, str(exc), retry=False)
        if isinstance(entry, HttpError):
            return error_answer(api, entry.status, entry.message, entry.retry)
        if self.echo_header is not None:
            reply = parse_reply(entry, where=f"script[{index}]")
            value = hit.headers.get(self.echo_header, "")
            entry = replace(
                reply, text=f"{reply.text} {value}" if reply.text else value, chunks=None
            )
        status, content_type, body = render_reply(api, request, entry, index=index, path=hit.path)
        if content_type.startswith(SSE):
            events = [event + b"\n\n" for event in body.split(b"\n\n")[:-1]]
            return sse_answer(events, status, content_type=content_type)
        if content_type == aws_eventstream.MEDIA_TYPE:  # one HTTP chunk per frame
            frames = aws_eventstream.split_frames(body)
            return Answer(status, content_type=content_type, chunks=frames)
        return Answer(status, body, content_type)


# -- the server ------------------------------------------------------------------------


@dataclass
class Route:
    """Requests of ``method`` (``*``: any) whose path matches the glob ``path``, and
    the hits it answered."""

    method: str
    path: str
    answers: Sequence[Responder]
    hits: list[Hit] = field(default_factory=list)

    def matches(self, hit: Hit) -> bool:
        return self.method in ("*", hit.method) and fnmatchcase(hit.path, self.path)


@dataclass
class ModelServer:
    """A running server: ``base_url`` ends in ``/v1`` (``origin`` does not); ``hits``
    are every request so far, in order."""

    origin: str = ""
    hits: list[Hit] = field(default_factory=list)
    routes: list[Route] = field(default_factory=list)
    stopped: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def route(self, path: str, *answers: Responder, method: str = "POST") -> Route:
        """Answer ``method`` requests to paths matching ``path`` with ``answers`` in
        order (the last one repeats); the latest route added that matches answers."""
        if not answers:
            raise ValueError("a route needs at least one answer")
        route = Route(method.upper(), path, answers)
        with self.lock:
            self.routes.insert(0, route)
        return route

    def script(
        self, replies: Sequence[ReplySpec | HttpError], *, echo_header: str | None = None
    ) -> Route:
        """Answer every model api from one queue of scripted replies (see ``Script``)."""
        return self.route("*", Script(replies, echo_header=echo_header))

    def hits_to(self, path: str, method: str = "*") -> list[Hit]:
        """The hits whose path matches the glob ``path`` (and ``method``)."""
        with self.lock:
            return [h for h in self.hits if Route(method.upper(), path, ()).matches(h)]

    def reset(self) -> None:
        """Forget every route and every hit."""
        with self.lock:
            self.routes.clear()
            self.hits.clear()

    def answer(self, hit: Hit) -> Answer:
        """Keep ``hit`` and answer it from the latest route that matches."""
        with self.lock:
            self.hits.append(hit)
            route = next((r for r in self.routes if r.matches(hit)), None)
            if route is None:
                return NOT_FOUND
            route.hits.append(hit)
            responder = route.answers[min(len(route.hits), len(route.answers)) - 1]
        return responder(hit) if callable(responder) else responder


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Http

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while size := int(self.rfile.readline().split(b";")[0], 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()
            return b"".join(parts)
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def _handle(self) -> None:
        state = self.server.state
        path, _, query = self.path.partition("?")
        headers = {k.lower(): v for k, v in self.headers.items()}
        hit = Hit(self.command, path, dict(parse_qsl(query)), headers, self._read_body())
        answer = state.answer(hit)
        stopped = state.stopped.wait(answer.delay) if answer.delay else False
        if answer.hang or stopped:
            state.stopped.wait()  # no answer at all: the client times out
            self.close_connection = True
            return
        self.send_response(answer.status)
        if answer.content_type is not None:
            self.send_header("Content-Type", answer.content_type)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        if answer.chunks is None:
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for piece in answer.chunks:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle


class _Http(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default backlog of 5 resets bursts of concurrent clients

    def __init__(self, state: ModelServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hung up mid-answer (a replay test ending, a killed worker) is
        no server error: no traceback in the suite's output. Anything else prints."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


@contextmanager
def serve() -> Iterator[ModelServer]:
    """A model server on a free loopback port for the ``with`` block; no routes yet."""
    state = ModelServer()
    http = _Http(state)
    thread = threading.Thread(target=http.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    state.origin = f"http://127.0.0.1:{http.server_address[1]}"
    try:
        yield state
    finally:
        state.stopped.set()
        http.shutdown()
        http.server_close()
