"""The sealed network: inside a replaying or scripted lock nothing leaves the process.

Other traffic through a seen client (embeddings, model lists, token counts, a tool's own
HTTP calls through httpx, requests and aiohttp) is recorded beside the model requests
and replayed with no hit on the counting loopback server; what is not recorded is
refused naming its method and URL; a raw socket is refused unless its host is in
``allow_hosts``; a model request whose body is not a JSON object is kept as its exact
bytes, never forwarded; a body nested too deep to parse is kept as text.
"""

from __future__ import annotations

import _socket
import asyncio
import base64
import http.client
import json
import re
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import anthropic
import httpx
import httpx2
import openai
import pytest
import requests

from headerlock.errors import NetworkSealedError, RecordingRunError, WireMismatch
from headerlock.formats.wire_http import WireBody
from headerlock.formats.wire_recording import load_wire_recording
from headerlock.testing.wire.apis import NAMES
from headerlock.testing.wire.lock import lock
from tests.model_server import Answer, ModelServer, json_answer
from tests.wire.agents import KEY

EMBEDDING = {
    "object": "list",
    "data": [{"object": "embedding", "index": 0, "embedding": [0.5, 0.25]}],
    "model": "emb",
    "usage": {"prompt_tokens": 1, "total_tokens": 1},
}
MODELS = {
    "object": "list",
    "data": [{"id": "gpt-test", "object": "model", "created": 0, "owned_by": "me"}],
}
OTHER_TRAFFIC = [
    ("POST", "/v1/embeddings"),
    ("GET", "/v1/models"),
    ("POST", "/v1/messages/count_tokens"),
    ("GET", "/tool/weather"),
    ("POST", "/tool/stock"),
    ("GET", "/tool/news"),
]


def serve_tools(server: ModelServer) -> None:
    """The server's non-model endpoints (and a scripted chat answer)."""
    server.script([{"text": "live answer"}])
    server.route("*/embeddings", json_answer(EMBEDDING))
    server.route("*/models", json_answer(MODELS), method="GET")
    server.route("*/messages/count_tokens", json_answer({"input_tokens": 7}))
    server.route("/tool/weather", json_answer({"sky": "clear"}), method="GET")
    server.route("/tool/stock", json_answer({"left": 3}))
    server.route("/tool/news", json_answer({"headline": "calm"}), method="GET")


async def _news(origin: str) -> Any:
    async with aiohttp.ClientSession() as session, session.get(f"{origin}/tool/news") as got:
        return await got.json()


def agent(server: ModelServer, embed: str = "hello") -> list[Any]:
    """An agent that looks things up before it asks the model (every client it uses is
    a real SDK or library, pointed at the counting server)."""
    chat = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
    claude = anthropic.Anthropic(base_url=server.origin, api_key=KEY, max_retries=0)
    found = [
        chat.embeddings.create(model="emb", input=embed).data[0].embedding,
        [m.id for m in chat.models.list()],
        claude.messages.count_tokens(
            model="claude-test", messages=[{"role": "user", "content": "hi"}]
        ).input_tokens,
        httpx.get(f"{server.origin}/tool/weather", params={"city": "Oslo"}).json(),
        requests.post(f"{server.origin}/tool/stock", json={"item": 3}, timeout=5).json(),
        asyncio.run(_news(server.origin)),
    ]
    reply = chat.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": json.dumps(found)}]
    )
    return [*found, reply.choices[0].message.content]


def test_other_traffic_is_recorded_and_replayed_with_no_hit(
    tmp_path: Path, model_server: ModelServer
) -> None:
    serve_tools(model_server)
    path = tmp_path / "agent.yaml"
    with lock(path, mode="record"):
        live = agent(model_server)
    assert live[-1] == "live answer"
    assert len(model_server.hits) == len(OTHER_TRAFFIC) + 1
    recording = load_wire_recording(path, apis=NAMES)
    # the news call runs in a task of its own (asyncio.run): sent from two origins, the
    # traffic is in canonical order (conversations.canonical_order), not the order sent
    assert sorted((e.method, e.path) for e in recording.http) == sorted(OTHER_TRAFFIC)
    [weather] = [e for e in recording.http if e.path == "/tool/weather"]
    assert weather.query == "city=Oslo"
    assert KEY not in path.read_text()
    model_server.hits.clear()

    with lock(path) as run:
        assert agent(model_server) == live
    assert model_server.hits == [] and run.differences == []

    # a scripted record answers the model from the script and the rest from the recording
    with lock(path, mode="record", script=[{"text": "scripted"}]):
        assert agent(model_server) == [*live[:-1], "scripted"]
    assert model_server.hits == []
    rerecorded = load_wire_recording(path, apis=NAMES)
    assert rerecorded.http == recording.http
    with lock(path):
        assert agent(model_server)[-1] == "scripted"
    assert model_server.hits == []


def test_a_changed_call_is_a_mismatch_showing_the_change_and_an_unknown_one_is_refused(
    tmp_path: Path, model_server: ModelServer
) -> None:
    """Issue 27: a recorded non-model request sent with another body is diffed like a
    model request (method, path, the changed field), never "not in the recording", never
    advice to let it through to the network; one the recording has no request like is
    refused naming it. Neither raises through the agent's client (a 400 it does not
    retry), and the lock fails at exit whatever the agent did with the 400."""
    serve_tools(model_server)
    path = tmp_path / "agent.yaml"
    with lock(path, mode="record"):
        agent(model_server)
    model_server.hits.clear()
    seen: list[BaseException] = []

    def changed() -> None:
        try:
            agent(model_server, embed="something else")
        except Exception as error:  # the agent's own handling: it carries on
            seen.append(error)

    with pytest.raises(WireMismatch) as caught, lock(path):
        changed()
    assert [type(e) for e in seen] == [openai.BadRequestError]
    text = str(caught.value)
    assert "POST /v1/embeddings: body.input: 'hello' -> 'something else'" in text
    assert "POST /v1/embeddings: recorded but never sent" not in text  # sent, changed
    assert "is not in" not in text and "allow_hosts" not in text and "0 differences" not in text

    def unknown() -> None:
        assert httpx.get(f"{model_server.origin}/tool/unknown").status_code == 400
        agent(model_server)

    with pytest.raises(WireMismatch) as caught, lock(path):
        unknown()
    text = str(caught.value)
    assert f"GET /tool/unknown is not in the recording {path} (sent to {model_server.origin})" in (
        text
    )
    assert "re-record to add it" in text and "allow_hosts" not in text
    assert model_server.hits == []


@pytest.mark.parametrize("client", ["httpx2", "requests", "aiohttp"])
def test_a_scripted_record_refuses_traffic_it_has_no_answer_for(
    client: str, model_server: ModelServer
) -> None:
    url = f"{model_server.origin}/tool/weather?city=Oslo"
    calls: dict[str, Callable[[], object]] = {
        "httpx2": lambda: httpx2.get(url),
        "requests": lambda: requests.get(url, timeout=5),
        "aiohttp": lambda: asyncio.run(_news(model_server.origin)),
    }
    shown = "GET /tool/news" if client == "aiohttp" else "GET /tool/weather?city=Oslo"
    seen: list[Exception] = []

    def call() -> None:
        try:
            calls[client]()
        except Exception as error:  # as the library raises it
            seen.append(error)

    found = re.escape(f"{shown} is not in any recording")
    with (
        pytest.raises(NetworkSealedError, match=found) as refused,
        lock(None, mode="record", script=["x"]),
    ):
        call()
    assert str(refused.value).startswith(shown)  # the CLI adds the one headerlock: prefix
    [error] = seen  # the library's own error (requests wraps it), from the refusal
    chain = [error, error.__cause__, error.__context__]
    assert any(isinstance(e, NetworkSealedError) for e in chain), repr(error)
    assert model_server.hits == []


# -- the socket floor ------------------------------------------------------------------


def _raw_get(host: str, port: int) -> bytes:
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.sendall(b"GET /raw HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return sock.recv(12)


def _port(server: ModelServer) -> int:
    return int(server.origin.rsplit(":", 1)[1])


@pytest.mark.parametrize("mode", ["replay", "script"])
def test_a_raw_socket_is_refused_with_how_to_allow_it(
    mode: str, tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "r.yaml"
    with lock(path, mode="record", script=["x"]):
        httpx2.post(
            f"{model_server.base_url}/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        )
    options: dict[str, Any] = {"mode": "record", "script": ["x"]} if mode == "script" else {}
    expected = NetworkSealedError if mode == "script" else WireMismatch
    refused: list[BaseException] = []

    def body() -> None:
        try:
            _raw_get("127.0.0.1", _port(model_server))
        except NetworkSealedError as error:
            refused.append(error)
        httpx2.post(
            f"{model_server.base_url}/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        )

    with pytest.raises(expected, match=r"allow_hosts=\[\.\.\.\]"), lock(path, **options):
        body()
    assert len(refused) == 1
    assert f"a connection to 127.0.0.1:{_port(model_server)} refused" in str(refused[0])
    assert "lock(..., allow_hosts=[...])" in str(refused[0])
    assert model_server.hits == []


def test_an_allowed_host_connects(model_server: ModelServer) -> None:
    with lock(None, mode="record", script=["x"], allow_hosts=["127.0.0.1"]):
        assert _raw_get("127.0.0.1", _port(model_server)) == b"HTTP/1.1 404"
    with lock(None, mode="record", script=["x"], allow_hosts=["localhost"]):
        assert _raw_get("localhost", _port(model_server)) == b"HTTP/1.1 404"
    assert [h.path for h in model_server.hits] == ["/raw", "/raw"]


def test_an_allowed_host_name_connects_to_the_addresses_it_resolves_to() -> None:
    """``allow_hosts`` names a host; the socket only sees the address it resolved to."""
    name = socket.gethostname()
    try:
        address = socket.getaddrinfo(name, 0, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    except OSError:
        pytest.skip(f"this machine's name {name!r} does not resolve")
    with socket.create_server((address, 0)) as listener:
        port = listener.getsockname()[1]
        with lock(None, mode="record", script=["x"], allow_hosts=[name]):
            socket.create_connection((name, port), timeout=5).close()
        with (
            pytest.raises(NetworkSealedError, match=f"{address}:{port} \\({name.lower()}\\)"),
            lock(None, mode="record", script=["x"], allow_hosts=["other.example"]),
        ):
            socket.create_connection((name, port), timeout=5).close()


def test_asyncio_and_code_no_lock_owns_are_sealed_too(model_server: ModelServer) -> None:
    port = _port(model_server)
    go, done = threading.Event(), threading.Event()
    outside: list[BaseException] = []

    def stray() -> None:  # started before the lock: no lock owns it
        go.wait(timeout=10)
        try:
            _raw_get("127.0.0.1", port)
        except OSError as error:
            outside.append(error)
        done.set()

    thread = threading.Thread(target=stray)
    thread.start()

    inside: list[BaseException] = []

    async def open_one() -> None:
        try:
            await asyncio.open_connection("127.0.0.1", port)
        except OSError as error:
            inside.append(error)

    def body() -> None:
        go.set()
        done.wait(timeout=10)
        asyncio.run(open_one())

    with pytest.raises(NetworkSealedError), lock(None, mode="record", script=["x"]):
        body()
    assert [type(e) for e in inside] == [NetworkSealedError]
    thread.join()
    assert [type(e) for e in outside] == [NetworkSealedError]
    assert model_server.hits == []


def test_a_live_record_is_not_sealed(model_server: ModelServer) -> None:
    with lock(None, mode="record"):
        assert _raw_get("127.0.0.1", _port(model_server)) == b"HTTP/1.1 404"
    assert len(model_server.hits) == 1


# -- bodies that are not a JSON object -------------------------------------------------

BAD_BODIES = {
    "bom": b'\xef\xbb\xbf{"model": "m", "messages": []}',
    "invalid-utf8": b'{"model": "\xff", "messages": []}',
    "array": b'[{"model": "m",  "messages": []}]',
}


def _exact(body: WireBody | None) -> bytes:
    assert body is not None
    if body.kind == "base64":
        return base64.b64decode(body.value)
    assert body.kind == "text", body
    return str(body.value).encode()


@pytest.mark.parametrize("name", sorted(BAD_BODIES))
@pytest.mark.parametrize("source", ["live", "script"])
def test_a_model_body_that_is_not_a_json_object_is_kept_as_exact_bytes(
    name: str, source: str, tmp_path: Path, model_server: ModelServer
) -> None:
    raw = BAD_BODIES[name]
    model_server.route("*/chat/completions", json_answer({"error": {"message": "bad"}}, 400))
    url = f"{model_server.base_url}/chat/completions"
    path = tmp_path / "r.yaml"

    def send(body: bytes) -> tuple[int, Any]:
        got = httpx2.post(url, content=body)
        chat = openai.OpenAI(base_url=model_server.base_url, api_key=KEY, max_retries=0)
        if source == "live":
            model_server.script([{"text": "fine"}])
        reply = chat.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
        assert reply.choices[0].message.content in ("fine", "scripted")
        return got.status_code, got.json()

    options: dict[str, Any] = {"mode": "record"}
    if source == "script":
        options["script"] = [{"text": "scripted"}]
    with lock(path, **options):
        recorded = send(raw)
    hits = len(model_server.hits)
    assert hits == (2 if source == "live" else 0)  # the script forwards nothing
    [entry] = load_wire_recording(path, apis=NAMES).http
    assert (entry.method, entry.path) == ("POST", "/v1/chat/completions")
    assert _exact(entry.body) == raw
    assert recorded[0] == 400
    if source == "script":
        assert recorded[1]["error"]["code"] == "headerlock_invalid_body"

    with lock(path):
        assert send(raw) == (400, recorded[1])
    other = raw.replace(b"m", b"n", 1)
    with (
        pytest.raises(WireMismatch, match="POST /v1/chat/completions: body: "),
        lock(path),
    ):
        send(other)
    assert len(model_server.hits) == hits


# -- bodies too deep to parse ----------------------------------------------------------


@pytest.mark.parametrize("depth", [300, 100_000])
def test_a_body_too_deep_for_json_is_kept_as_text(
    depth: int, tmp_path: Path, model_server: ModelServer
) -> None:
    raw = b"[" * depth + b"]" * depth
    assert WireBody.from_bytes(raw) == WireBody("text", raw.decode())
    model_server.script([{"text": "ok"}])
    model_server.route("/tool/deep", Answer(200, raw))
    path = tmp_path / "deep.yaml"
    chat = openai.OpenAI(base_url=model_server.base_url, api_key=KEY, max_retries=0)

    def body() -> bytes:
        got = httpx2.post(f"{model_server.origin}/tool/deep", content=raw).content
        chat.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        return got

    with lock(path, mode="record"):
        assert body() == raw
    [entry] = load_wire_recording(path, apis=NAMES).http
    assert entry.body == WireBody("text", raw.decode())
    assert entry.response is not None and entry.response.kind == "text"
    hits = len(model_server.hits)
    with lock(path):
        assert body() == raw
    assert len(model_server.hits) == hits


def test_a_record_that_saw_only_an_unreadable_model_body_says_so(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    with (
        pytest.raises(RecordingRunError, match="saw POST /v1/chat/completions with a body that"),
        lock(path, mode="record", script=["x"]),
    ):
        httpx2.post("http://127.0.0.1:9/v1/chat/completions", content=BAD_BODIES["array"])
    assert not path.exists()


def test_a_binary_answer_replays_byte_for_byte(tmp_path: Path, model_server: ModelServer) -> None:
    """A tool that fetches an image: bytes that are not UTF-8 are kept as base64."""
    image = bytes(range(256))
    model_server.script([{"text": "ok"}])
    model_server.route("/tool/image", Answer(200, image, "image/png"), method="GET")
    chat = openai.OpenAI(base_url=model_server.base_url, api_key=KEY, max_retries=0)

    def body() -> bytes:
        got = httpx2.get(f"{model_server.origin}/tool/image").content
        chat.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        return got

    path = tmp_path / "image.yaml"
    with lock(path, mode="record"):
        assert body() == image
    [entry] = load_wire_recording(path, apis=NAMES).http
    assert entry.response is not None and entry.response.kind == "base64"
    hits = len(model_server.hits)
    with lock(path):
        assert body() == image
    assert len(model_server.hits) == hits


# -- allow_hosts opens raw connections only --------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_allow_hosts_never_forwards_a_model_request_or_recorded_traffic(
    host: str, tmp_path: Path, model_server: ModelServer
) -> None:
    """A local model server (or a tool on the same host) in ``allow_hosts``: replay still
    answers the model requests and the recorded traffic itself, 0 hits."""
    model_server.script([{"text": "live answer"}] * 2)
    model_server.route("/tool/weather", json_answer({"sky": "clear"}), method="GET")
    origin = model_server.origin.replace("127.0.0.1", host)
    chat = openai.OpenAI(base_url=f"{origin}/v1", api_key=KEY, max_retries=0)

    def body() -> list[Any]:
        sky = requests.get(f"{origin}/tool/weather", timeout=5).json()
        reply = chat.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "hi"}]
        )
        return [sky, reply.choices[0].message.content]

    path = tmp_path / "local.yaml"
    with lock(path, mode="record"):
        assert body() == [{"sky": "clear"}, "live answer"]
    recording = load_wire_recording(path, apis=NAMES)
    assert len(recording.requests) == 1 and len(recording.http) == 1
    model_server.hits.clear()
    with lock(path, allow_hosts=[host]) as run:
        assert body() == [{"sky": "clear"}, "live answer"]
    assert model_server.hits == [] and run.differences == []
    # traffic the recording does not hold goes through to the allowed host
    with lock(path, allow_hosts=[host]):
        assert body()[0] == {"sky": "clear"}
        assert httpx.get(f"{origin}/tool/weather").json() == {"sky": "clear"}
    assert [h.path for h in model_server.hits] == ["/tool/weather"]
    # a live record keeps the model request to an allowed host (its other traffic passes)
    model_server.hits.clear()
    with lock(path, mode="record", allow_hosts=[host]):
        assert body() == [{"sky": "clear"}, "live answer"]
    assert [h.path for h in model_server.hits] == ["/tool/weather", "/v1/chat/completions"]
    assert len(load_wire_recording(path, apis=NAMES).requests) == 1


# -- ways around the socket methods ----------------------------------------------------


def _refused_in_a_sealed_lock(action: Callable[[], object]) -> NetworkSealedError:
    """The error ``action`` raises inside a sealed lock (which raises it again at exit)."""
    seen: list[NetworkSealedError] = []

    def swallowing() -> None:  # an agent that swallows the error still fails
        try:
            action()
        except NetworkSealedError as error:
            seen.append(error)

    with pytest.raises(NetworkSealedError), lock(None, mode="record", script=["x"]):
        swallowing()
    assert len(seen) == 1, "the seal let it through"
    return seen[0]


def _http_get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()


def test_the_c_level_socket_and_a_saved_connect_are_refused(model_server: ModelServer) -> None:
    address = ("127.0.0.1", _port(model_server))
    saved_connect = socket.socket.connect  # taken before the lock
    raw = _socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # no socket.socket methods
    with socket.socket() as first:
        refused = _refused_in_a_sealed_lock(lambda: saved_connect(first, address))
        assert f"a connection to 127.0.0.1:{address[1]} refused" in str(refused)
        try:
            refused = _refused_in_a_sealed_lock(lambda: raw.connect(address))
        finally:
            raw.close()
        assert f"a connection to 127.0.0.1:{address[1]} refused" in str(refused)
    assert model_server.hits == []


@pytest.mark.skipif(not hasattr(socket, "MSG_FASTOPEN"), reason="no TCP Fast Open here")
def test_tcp_fast_open_is_refused(model_server: ModelServer) -> None:
    address = ("127.0.0.1", _port(model_server))
    with socket.socket() as sock:
        refused = _refused_in_a_sealed_lock(
            lambda: sock.sendto(_http_get("/tfo"), socket.MSG_FASTOPEN, address)
        )
    assert f"a TCP Fast Open connection (sendto) to 127.0.0.1:{address[1]}" in str(refused)
    assert model_server.hits == []


def test_a_connection_opened_before_the_lock_cannot_send_in_it(model_server: ModelServer) -> None:
    port = _port(model_server)
    keep_alive = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    keep_alive.request("GET", "/before")
    keep_alive.getresponse().read()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        refused = _refused_in_a_sealed_lock(lambda: sock.sendall(_http_get("/raw")))
        shown = f"sending over a connection opened before the lock to 127.0.0.1:{port} refused"
        assert shown in str(refused)
        refused = _refused_in_a_sealed_lock(lambda: keep_alive.request("GET", "/inside"))
        assert shown in str(refused)
        keep_alive.close()
        # after the lock, the connection is the program's again
        sock.sendall(_http_get("/after"))
        assert sock.recv(12) == b"HTTP/1.1 404"
    assert [h.path for h in model_server.hits] == ["/before", "/after"]
    # an allowed host's connection keeps working inside a lock
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as sock,
        lock(None, mode="record", script=["x"], allow_hosts=["127.0.0.1"]),
    ):
        sock.sendall(_http_get("/allowed"))
        assert sock.recv(12) == b"HTTP/1.1 404"
