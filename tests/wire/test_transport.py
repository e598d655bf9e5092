"""``headerlock.testing.wire.transport``: the httpx2/httpx transport patch, its
restore, nesting, threads, and traffic that is not a model request."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import httpx2
import openai
import pytest

from headerlock.testing.wire.clients import httpx_client as transport
from headerlock.testing.wire.lock import lock
from headerlock.testing.wire.run import WireRun
from tests.model_server import Answer, ModelServer

ORIGINALS = {
    (cls, name): cls.__dict__[name]
    for cls, name in (
        (httpx2.HTTPTransport, "handle_request"),
        (httpx2.AsyncHTTPTransport, "handle_async_request"),
        (httpx.HTTPTransport, "handle_request"),
        (httpx.AsyncHTTPTransport, "handle_async_request"),
    )
}


def _restored() -> bool:
    return all(cls.__dict__[name] is fn for (cls, name), fn in ORIGINALS.items())


def ask(base: str, text: str = "hi") -> str:
    client = openai.OpenAI(base_url=base, api_key="sk-transport-test", max_retries=0)
    reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
    return reply.choices[0].message.content or ""


def test_patched_only_while_a_lock_is_open_and_restored_on_error() -> None:
    assert _restored() and transport.patched_classes() == []
    with lock(None, mode="record", script=["x"]):
        assert set(transport.patched_classes()) == {cls for cls, _ in ORIGINALS}
        assert not _restored()
    assert _restored()
    with pytest.raises(ValueError, match="boom"), lock(None, mode="record"):
        raise ValueError("boom")
    assert _restored() and transport.patched_classes() == []


def test_each_class_is_patched_once_even_when_modules_alias(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``httpx2.alias_httpx()`` makes ``httpx`` the same module: patch its classes once."""
    monkeypatch.setattr(transport, "LIBRARIES", ("httpx2", "httpx2", "httpx"))
    with lock(None, mode="record", script=["x"]):
        assert len(transport.patched_classes()) == 4
        assert ask("http://127.0.0.1:9/v1") == "x"
    assert _restored()


def test_nested_locks_capture_in_the_inner_one_and_restore_at_the_outer_exit() -> None:
    with lock(None, mode="record", script=["outer 1", "outer 2"]) as outer:
        assert ask("http://127.0.0.1:9/v1") == "outer 1"
        with lock(None, mode="record", script=["inner"]) as inner:
            assert ask("http://127.0.0.1:9/v1") == "inner"
        assert not _restored()
        assert ask("http://127.0.0.1:9/v1") == "outer 2"
    assert _restored()
    assert (len(outer.requests), len(inner.requests)) == (2, 1)


def test_a_thread_started_inside_the_lock_is_captured() -> None:
    answers: list[str] = []
    with lock(None, mode="record", script=["from a thread"]) as run:
        worker = threading.Thread(target=lambda: answers.append(ask("http://127.0.0.1:9/v1")))
        worker.start()
        worker.join()
    assert answers == ["from a thread"] and len(run.requests) == 1


def test_locks_in_two_threads_keep_their_own_requests() -> None:
    barrier = threading.Barrier(2)
    results: dict[str, Any] = {}

    def work(name: str) -> None:
        with lock(None, mode="record", script=[f"answer {name}"]) as run:
            barrier.wait()
            results[name] = (ask("http://127.0.0.1:9/v1", name), run)
            barrier.wait()

    threads = [threading.Thread(target=work, args=(n,)) for n in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name in ("a", "b"):
        text, run = results[name]
        assert text == f"answer {name}"
        assert isinstance(run, WireRun) and len(run.requests) == 1
        assert run.requests[0].messages == [{"role": "user", "content": name}]
    assert _restored()


def test_other_traffic_passes_through_untouched(tmp_path: Path, model_server: ModelServer) -> None:
    model_server.script([{"text": "model"}])
    with lock(tmp_path / "r.yaml", mode="record") as run:
        for client in (httpx2.Client(), httpx.Client()):
            assert client.get(f"{model_server.base_url}/models").status_code == 404
            assert client.post(f"{model_server.base_url}/embeddings", json={}).status_code == 404
        assert ask(model_server.base_url) == "model"
    assert [r.api for r in run.requests] == ["openai.chat"]
    assert [(r.method, r.path) for r in model_server.hits] == [
        ("GET", "/v1/models"),
        ("POST", "/v1/embeddings"),
        ("GET", "/v1/models"),
        ("POST", "/v1/embeddings"),
        ("POST", "/v1/chat/completions"),
    ]


def test_importing_the_wire_modules_imports_no_http_client() -> None:
    code = (
        "import sys, headerlock.testing.wire.lock, headerlock.formats.wire_recording;"
        "print(sorted(m for m in ('httpx', 'httpx2', 'openai', 'anthropic') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


_COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": "unzipped"},
        }
    ],
}


def test_a_gzipped_chunked_answer_is_recorded_decoded_and_replays(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "gzip.yaml"
    body = gzip.compress(json.dumps(_COMPLETION).encode())
    pieces = [body[start : start + 16] for start in range(0, len(body), 16)]
    model_server.route(
        "*/chat/completions", Answer(headers={"Content-Encoding": "gzip"}, chunks=pieces)
    )
    with lock(path, mode="record"):
        assert ask(model_server.base_url) == "unzipped"
    text = path.read_text()
    assert "gzip" not in text.lower() and "content_type: application/json" in text
    with lock(path):
        assert ask("http://127.0.0.1:9/v1") == "unzipped"
