"""A real model server on 127.0.0.1 speaking OpenAI chat, OpenAI responses and
Anthropic messages, answering from a queue of scripted replies.

Streams go out with chunked transfer and no content-length, one HTTP chunk per
server-sent event, as real providers send them. Every request is kept.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from headerlock.errors import ScriptExhaustedError
from headerlock.runtime.adapters.scripted import ReplySpec, parse_reply
from headerlock.testing.wire.script import JSON, render_reply

PATHS = {
    "/chat/completions": "openai.chat",
    "/responses": "openai.responses",
    "/messages": "anthropic.messages",
}


@dataclass(frozen=True)
class HttpError:
    """A queue entry answered with an HTTP error instead of a reply.

    ``retry`` sets ``x-should-retry`` (``None`` leaves the SDK's own rules).
    """

    status: int
    message: str = "scripted failure"
    retry: bool | None = None


@dataclass(frozen=True)
class Received:
    """One request as the server got it: path, lower-cased headers, raw body."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


@dataclass
class Server:
    """A running server: ``base_url`` ends in ``/v1`` (``origin`` does not)."""

    origin: str
    entries: list[ReplySpec | HttpError]
    echo_header: str | None = None
    received: list[Received] = field(default_factory=list)
    answered: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def load(
        self, replies: Sequence[ReplySpec | HttpError], *, echo_header: str | None = None
    ) -> None:
        """Start over with a new queue (and forget the requests received so far)."""
        with self.lock:
            self.entries, self.echo_header, self.answered = list(replies), echo_header, 0
            self.received.clear()

    def next_entry(self, api: str) -> tuple[int, ReplySpec | HttpError]:
        """The next queue entry and its index; raises ``ScriptExhaustedError``."""
        with self.lock:
            index = self.answered
            self.answered += 1
            if index >= len(self.entries):
                raise ScriptExhaustedError(api=api, request=index + 1, replies=len(self.entries))
            return index, self.entries[index]


def _error_body(api: str, status: int, message: str) -> bytes:
    if api == "anthropic.messages":
        return json.dumps(
            {"type": "error", "error": {"type": "api_error", "message": message}}
        ).encode()
    error = {"message": message, "type": "server_error", "param": None, "code": str(status)}
    return json.dumps({"error": error}).encode()


def _echo(spec: ReplySpec, value: str, index: int) -> ReplySpec:
    reply = parse_reply(spec, where=f"script[{index}]")
    text = f"{reply.text} {value}" if reply.text else value
    return replace(reply, text=text, chunks=None)


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

    def _send(self, status: int, body: bytes, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", JSON)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, content_type: str, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for event in body.split(b"\n\n")[:-1]:
            piece = event + b"\n\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_GET(self) -> None:
        self._send(404, b'{"error": {"message": "not found"}}')

    def do_POST(self) -> None:
        state = self.server.state
        body = self._read_body()
        headers = {k.lower(): v for k, v in self.headers.items()}
        with state.lock:
            state.received.append(Received("POST", self.path, headers, body))
        path = self.path.split("?")[0]
        api = next((a for suffix, a in PATHS.items() if path.endswith(suffix)), None)
        if api is None:
            self._send(404, b'{"error": {"message": "not found"}}')
            return
        try:
            request = json.loads(body)
            index, entry = state.next_entry(api)
        except (ValueError, ScriptExhaustedError) as exc:
            self._send(400, _error_body(api, 400, str(exc)), {"x-should-retry": "false"})
            return
        if isinstance(entry, HttpError):
            extra = {} if entry.retry is None else {"x-should-retry": str(entry.retry).lower()}
            self._send(entry.status, _error_body(api, entry.status, entry.message), extra)
            return
        if state.echo_header is not None:
            entry = _echo(entry, headers.get(state.echo_header, ""), index)
        status, content_type, reply = render_reply(api, request, entry, index=index)
        if status == 200 and request.get("stream") is True:
            self._stream(content_type, reply)
        else:
            self._send(status, reply)


class _Http(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: Server) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


@contextmanager
def serve(
    replies: Sequence[ReplySpec | HttpError] = (), *, echo_header: str | None = None
) -> Iterator[Server]:
    """Serve ``replies`` in order on a free loopback port.

    An ``HttpError`` entry answers that status; ``echo_header`` appends the
    value of that request header to every reply's text. A request past the
    queue gets a 400 naming the exhausted script.
    """
    state = Server("", list(replies), echo_header)
    http = _Http(state)
    thread = threading.Thread(target=http.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    state.origin = f"http://127.0.0.1:{http.server_address[1]}"
    try:
        yield state
    finally:
        http.shutdown()
        http.server_close()
