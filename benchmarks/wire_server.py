"""A local OpenAI chat-completions server on 127.0.0.1, to record the wire workloads against.

The first request of a conversation (no ``tool`` message yet) gets a
``word_count`` tool call; a request that carries the tool's result gets the
final text. Recording happens once; the paired rounds replay with it stopped.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
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


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        with self.server.lock:
            self.server.count += 1
            number = self.server.count
        payload = json.dumps(completion(body, number)).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.count = 0


@contextmanager
def serving() -> Iterator[str]:
    """Run the server for the block; yields its base URL (``http://127.0.0.1:N/v1``)."""
    server = _Server()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
