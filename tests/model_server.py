"""A real OpenAI-compatible HTTP server on 127.0.0.1 for adapter tests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Behaviour:
    """What the server answers: SSE chunks, or an HTTP error, or a stall."""

    chunks: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    error_body: dict[str, Any] | None = None
    stall: float = 0.0


@dataclass
class ModelServer:
    base_url: str
    behaviours: list[Behaviour]
    received: list[dict[str, Any]] = field(default_factory=list)


def text_chunks(*pieces: str) -> list[dict[str, Any]]:
    return [{"delta": {"content": p}} for p in pieces]


def tool_call_chunks(
    call_id: str, name: str, arguments: str, index: int = 0
) -> list[dict[str, Any]]:
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


@contextmanager
def model_server(*behaviours: Behaviour) -> Iterator[ModelServer]:
    """Serve ``behaviours`` in order (the last one repeats) on a free loopback port."""
    state = ModelServer("", list(behaviours))

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            state.received.append({"path": self.path, "headers": headers, "body": body})
            behaviour = state.behaviours[min(len(state.received) - 1, len(state.behaviours) - 1)]
            if behaviour.stall:
                time.sleep(behaviour.stall)
            if behaviour.status != 200:
                payload = json.dumps(behaviour.error_body or {}).encode()
                self.send_response(behaviour.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for choice in behaviour.chunks:
                chunk = {
                    "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
                    "model": body.get("model", "m"),
                    "choices": [{"index": 0, "finish_reason": None, **choice}],
                }  # fmt: skip
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
