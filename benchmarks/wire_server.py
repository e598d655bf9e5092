"""A local OpenAI chat-completions server on 127.0.0.1, to record the wire workloads against.

The first request of a conversation (no ``tool`` message yet) gets a
``word_count`` tool call; a request that carries the tool's result gets the
final text. Recording happens once; the paired rounds replay with it stopped.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def completion(body: dict[str, Any], number: int) -> dict[str, Any]:
    """The chat completion answering ``body``: a tool call first, then the answer."""
    messages = body.get("messages", [])
    results = [m for m in messages if m.get("role") == "tool"]
    message: dict[str, Any]
    if results:
        message = {"role": "assistant", "content": f"It has {results[-1]['content']} words."}
        finish = "stop"
    else:
        text = str(messages[-1].get("content", "")) if messages else ""
        call = {
            "id": f"call_{number}",
            "type": "function",
            "function": {"name": "word_count", "arguments": json.dumps({"text": text})},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": body.get("model", "gpt-4o-mini"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


Answer = Callable[[dict[str, Any], int], tuple[str, bytes]]
"""A reply to the ``number``-th request's JSON body: its content type and bytes."""


def _agent(body: dict[str, Any], number: int) -> tuple[str, bytes]:
    return "application/json", json.dumps(completion(body, number)).encode()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        with self.server.lock:
            self.server.count += 1
            number = self.server.count
        kind, payload = self.server.answer(body, number)
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a 20-way gather connects at once

    def __init__(self, answer: Answer, port: int) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.lock = threading.Lock()
        self.count = 0
        self.answer = answer


def free_port() -> int:
    """A port nothing listens on now: recordings keep their URL, replays find it closed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def serving(answer: Answer = _agent, port: int = 0) -> Iterator[str]:
    """Run the server for the block; yields its base URL (``http://127.0.0.1:N/v1``).

    ``answer`` makes each reply (default: the two-request agent's ``completion``);
    ``port`` 0 picks a free one.
    """
    server = _Server(answer, port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
