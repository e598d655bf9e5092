"""``clients.aiohttp_client``: ``ClientSession._request`` as a lock sees it (the
request as aiohttp sends it; answers, forwards and passes as real ``ClientResponse``
objects), then litellm's async path and the OpenAI SDK's ``DefaultAioHttpClient``
recorded against the loopback model server and replayed with no hit."""

from __future__ import annotations

import asyncio
import base64
import gzip
import importlib.util
import io
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import suppress
from pathlib import Path
from typing import Any

import aiohttp
import openai
import pytest

from headerlock.errors import NetworkSealedError, WireMismatch
from headerlock.testing.wire import origins
from headerlock.testing.wire.apis import model_api
from headerlock.testing.wire.clients import aiohttp_client, install
from headerlock.testing.wire.clients.core import SentRequest, WireAnswer
from headerlock.testing.wire.lock import lock
from tests.model_server import Answer, ModelServer, chat_stream, json_answer, text_chunks
from tests.wire.agents import CLOSED, KEY
from tests.wire.toy_lock import JSON_ANSWER, SSE_BODY, Decision, toy

Agent = Callable[[str, str], Coroutine[Any, Any, list[str]]]
ORIGINAL = aiohttp.ClientSession.__dict__["_request"]


def run(agent: Callable[[aiohttp.ClientSession], Awaitable[Any]], **session: Any) -> Any:
    async def main() -> Any:
        async with aiohttp.ClientSession(**session) as client:
            return await agent(client)

    return asyncio.run(main())


# -- the adapter: what the lock is handed, what the caller gets ------------------------


def test_an_answer_is_a_working_client_response(model_server: ModelServer) -> None:
    url = f"{model_server.base_url}/chat/completions?api-version=1"

    async def agent(client: aiohttp.ClientSession) -> Any:
        async with client.post(
            url, json={"model": "m"}, params={"extra": "x y"}, headers={"X-Req": "2"}
        ) as resp:
            assert resp.status == 200 and resp.ok and resp.reason == "OK"
            assert resp.headers["Content-Type"] == "application/json"
            assert str(resp.url) == f"{url}&extra=x+y"
            assert resp.request_info.method == "POST"
            assert resp.request_info.headers["Authorization"] == f"Bearer {KEY}"
            assert await resp.read() == JSON_ANSWER.body
            assert await resp.text() == JSON_ANSWER.body.decode()
            resp.raise_for_status()
            return await resp.json()

    session = {"headers": {"Authorization": f"Bearer {KEY}", "X-Req": "1", "X-Session": "s"}}
    with toy(lambda sent: JSON_ANSWER) as lock_:
        assert run(agent, **session) == {"answer": "scripted"}
    assert model_server.hits == []
    (sent,) = lock_.seen
    assert (sent.client, sent.method) == ("aiohttp", "POST")
    assert sent.api is model_api("openai.chat")
    assert sent.url == f"{url}&extra=x+y" and sent.query == "api-version=1&extra=x+y"
    headers = dict(sent.headers)
    assert headers["Authorization"] == f"Bearer {KEY}"
    assert headers["Content-Type"] == "application/json"
    assert (headers["X-Req"], headers["X-Session"]) == ("2", "s")  # request over session
    assert headers["Host"] == model_server.origin.removeprefix("http://")
    assert headers["Content-Length"] == str(len(sent.body))
    assert json.loads(sent.body) == {"model": "m"}


def test_an_answered_stream_iterates_by_line_and_by_chunk() -> None:
    answer = WireAnswer(200, "text/event-stream", SSE_BODY)

    async def agent(client: aiohttp.ClientSession) -> tuple[list[bytes], bytes]:
        resp = await client.post(f"{CLOSED}/chat/completions", json={"stream": True})
        lines = [line async for line in resp.content]
        async with client.post(f"{CLOSED}/chat/completions", json={"stream": True}) as again:
            chunks = b"".join([c async for c in again.content.iter_chunked(7)])
        return lines, chunks

    with toy(lambda sent: answer):
        lines, chunks = run(agent)
    assert b"".join(lines) == SSE_BODY == chunks
    assert lines[:2] == [b'data: {"n": 1}\n', b"\n"]


def test_error_answers_and_raise_for_status() -> None:
    limited = WireAnswer(429, "application/json", b'{"error": {"message": "slow down"}}')

    async def agent(client: aiohttp.ClientSession) -> None:
        resp = await client.post(f"{CLOSED}/chat/completions", json={})
        assert (resp.status, resp.ok, resp.reason) == (429, False, "Too Many Requests")
        assert (await resp.json())["error"]["message"] == "slow down"
        with pytest.raises(aiohttp.ClientResponseError) as error:
            resp.raise_for_status()
        assert error.value.status == 429

    async def strict(client: aiohttp.ClientSession) -> None:
        with pytest.raises(aiohttp.ClientResponseError, match="Too Many Requests"):
            await client.post(f"{CLOSED}/chat/completions", json={})
        checked: list[int] = []

        async def check(resp: aiohttp.ClientResponse) -> None:
            checked.append(resp.status)

        await client.post(f"{CLOSED}/chat/completions", json={}, raise_for_status=check)
        assert checked == [429]

    with toy(lambda sent: limited):
        run(agent)
        run(strict, raise_for_status=True)


async def _chunks() -> AsyncIterator[bytes]:
    yield b"streamed "
    yield b"upload"


def _form() -> aiohttp.FormData:
    form = aiohttp.FormData()
    form.add_field("purpose", "batch")
    form.add_field("file", b"{}\n", filename="batch.jsonl")
    return form


BODIES: dict[str, Callable[[], dict[str, Any]]] = {
    "json": lambda: {"json": {"model": "m", "messages": []}},
    "bytes": lambda: {"data": b"raw \x00 bytes"},
    "str": lambda: {"data": "text \u00e9"},
    "form": lambda: {"data": {"k": "v", "n": "1"}},
    "multipart": lambda: {"data": _form()},
    "file": lambda: {"data": io.BytesIO(b"from a file")},
    "async-iterable": lambda: {"data": _chunks()},
    "none": lambda: {},
}


@pytest.mark.parametrize("kind", BODIES)
def test_every_body_kind_is_seen_as_sent(kind: str, model_server: ModelServer) -> None:
    """Forwarded, the server gets the very bytes and content type the lock was shown,
    even for one-shot bodies (a stream, form data) that the lock read first."""
    model_server.route("*", json_answer({"ok": True}))

    async def agent(client: aiohttp.ClientSession) -> Any:
        resp = await client.post(f"{model_server.base_url}/upload", **BODIES[kind]())
        return await resp.json()

    with toy(lambda sent: "forward") as lock_:
        assert run(agent) == {"ok": True}
    (sent,), (hit,) = lock_.seen, model_server.hits
    assert sent.body == hit.body and sent.api is None
    assert dict(sent.headers).get("Content-Type") == hit.headers.get("content-type")
    if kind == "async-iterable":
        assert hit.body == b"streamed upload"
        assert dict(sent.headers)["Transfer-Encoding"] == "chunked"
    assert lock_.told == [WireAnswer(200, "application/json", b'{"ok": true}')]


@pytest.mark.filterwarnings("ignore:.*BasicAuth|.*'auth' parameter:DeprecationWarning")
def test_auth_cookies_base_url_and_url_credentials(model_server: ModelServer) -> None:
    port = model_server.origin.rsplit(":", 1)[1]

    async def agent(client: aiohttp.ClientSession) -> None:
        await client.get("/v1/models", params={"limit": 2}, cookies={"c": "1"})
        await client.get(f"http://user:pw@127.0.0.1:{port}/v1/models")

    auth = aiohttp.BasicAuth("key", "secret")
    with toy(lambda sent: JSON_ANSWER) as lock_:
        run(agent, base_url=model_server.origin, auth=auth)
    first, second = lock_.seen
    assert first.url == f"{model_server.origin}/v1/models?limit=2"
    assert dict(first.headers)["Authorization"] == auth.encode()
    assert dict(first.headers)["Cookie"] == "c=1"
    assert (first.method, first.body) == ("GET", b"")
    assert second.url == f"{model_server.origin}/v1/models"  # no credentials in the url
    expected = base64.b64encode(b"user:pw").decode()
    assert dict(second.headers)["Authorization"] == f"Basic {expected}"


def test_a_forward_is_read_whole_reported_decoded_and_handed_back(
    model_server: ModelServer,
) -> None:
    model_server.route("*/chat/completions", chat_stream(text_chunks("live ", "words")))
    model_server.route(
        "*/gzipped",
        Answer(body=gzip.compress(b'{"z": 1}'), headers={"Content-Encoding": "gzip"}),
        method="GET",
    )

    async def agent(client: aiohttp.ClientSession) -> tuple[list[bytes], Any, bytes]:
        resp = await client.post(f"{model_server.base_url}/chat/completions", json={"model": "m"})
        lines = [line async for line in resp.content if line.strip()]
        zipped = await client.get(f"{model_server.base_url}/gzipped")
        raw = await client.get(f"{model_server.base_url}/gzipped", auto_decompress=False)
        return lines, await zipped.json(), await raw.read()

    with toy(lambda sent: "forward") as lock_:
        lines, zipped, raw = run(agent)
    assert len(model_server.hits) == 3
    assert lines[-1] == b"data: [DONE]\n" and len(lines) == 3
    assert zipped == {"z": 1} and raw == b'{"z": 1}'  # no content-encoding is handed back
    stream, unzipped, _ = lock_.told
    assert stream is not None and stream.content_type == "text/event-stream"
    assert stream.body == b"".join(line + b"\n" for line in lines)
    assert unzipped == WireAnswer(200, "application/json", b'{"z": 1}')


def test_a_pass_is_untouched_and_a_failed_forward_is_reported(model_server: ModelServer) -> None:
    model_server.route("*", json_answer({"live": True}))

    async def passed(client: aiohttp.ClientSession) -> Any:
        resp = await client.post(f"{model_server.base_url}/anything", json={})
        assert "Server" in resp.headers  # the real response, not one built from an answer
        return await resp.json()

    async def failed(client: aiohttp.ClientSession) -> None:
        with pytest.raises(aiohttp.ClientConnectorError):
            await client.post(f"{CLOSED}/chat/completions", json={})

    with toy(lambda sent: None) as lock_:
        assert run(passed) == {"live": True}
    assert lock_.told == [] and len(lock_.seen) == 1
    with toy(lambda sent: "forward") as lock_:
        run(failed)
    assert lock_.told == [None]


def test_what_a_forward_starts_for_itself_starts_no_origin(model_server: ModelServer) -> None:
    """aiohttp resolves ``localhost`` in the loop's executor: that job must not take a key
    from the task that sent the request, or its next request's key would shift."""
    model_server.route("*", json_answer({"ok": True}))
    url = f"{model_server.origin.replace('127.0.0.1', 'localhost')}/v1/x"
    keys: list[tuple[int, ...]] = []

    def forward(sent: SentRequest) -> Decision:
        origin = origins.current_origin()
        assert origin is not None
        keys.append(origin.next_key())
        return "forward"

    async def task(client: aiohttp.ClientSession) -> None:
        for _ in range(2):
            await (await client.post(url, json={})).read()

    async def agent(client: aiohttp.ClientSession) -> None:
        await asyncio.gather(task(client), task(client))

    with toy(forward):
        run(agent)
    assert len(model_server.hits) == 4
    by_task: dict[tuple[int, ...], list[int]] = {}
    for key in keys:
        by_task.setdefault(key[:-1], []).append(key[-1])
    assert sorted(by_task.values()) == [[0, 1], [0, 1]]


def test_a_refusal_reaches_the_caller_and_nothing_goes_out(model_server: ModelServer) -> None:
    def refuse(sent: SentRequest) -> Decision:
        raise NetworkSealedError(f"headerlock: refused {sent.method} {sent.url}")

    async def agent(client: aiohttp.ClientSession) -> None:
        with pytest.raises(NetworkSealedError, match="refused POST"):
            await client.post(f"{model_server.base_url}/chat/completions", json={})

    with toy(refuse):
        run(agent)
    assert model_server.hits == []


def test_a_websocket_handshake_is_not_routed(model_server: ModelServer) -> None:
    async def agent(client: aiohttp.ClientSession) -> int:
        resp = await client.get(f"{model_server.origin}/ws", headers={"Upgrade": "websocket"})
        return resp.status

    with toy(lambda sent: JSON_ANSWER) as lock_:
        assert run(agent) == 404  # the live server's, untouched
    assert lock_.seen == []


def test_what_aiohttp_refuses_itself_is_refused_as_aiohttp_does() -> None:
    async def agent() -> None:
        client = aiohttp.ClientSession()
        with pytest.raises(aiohttp.InvalidUrlClientError):
            await client.post("http://[::1/v1", json={})
        await client.close()
        with pytest.raises(RuntimeError, match="Session is closed"):
            await client.post(f"{CLOSED}/chat/completions", json={})

    with toy(lambda sent: JSON_ANSWER) as lock_:
        asyncio.run(agent())
    assert lock_.seen == []


def test_patched_only_while_a_lock_is_open_and_once() -> None:
    assert aiohttp.ClientSession.__dict__["_request"] is ORIGINAL
    with toy(lambda sent: None):
        patched = aiohttp.ClientSession.__dict__["_request"]
        assert patched is not ORIGINAL
        aiohttp_client.install()  # idempotent
        assert aiohttp.ClientSession.__dict__["_request"] is patched
        assert aiohttp_client.patched_classes() == [aiohttp.ClientSession]
    assert aiohttp.ClientSession.__dict__["_request"] is ORIGINAL
    assert aiohttp_client.patched_classes() == []
    assert "aiohttp" in install.seen_clients()


def test_a_missing_aiohttp_is_looked_up_once_and_never_imported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    looked: list[str] = []
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        if name == "aiohttp":
            looked.append(name)
            return None
        return real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(aiohttp_client, "_found", {})
    monkeypatch.setattr(aiohttp_client, "_absent", {})
    for _ in range(3):
        aiohttp_client.install()
        assert aiohttp_client.patched_classes() == []
    assert looked == ["aiohttp"]
    assert aiohttp.ClientSession.__dict__["_request"] is ORIGINAL


def test_importing_headerlock_imports_no_client_library() -> None:
    code = (
        "import sys, headerlock, headerlock.wire\n"
        "import headerlock.testing.wire.clients.aiohttp_client\n"
        "import headerlock.testing.wire.clients.urllib3_client\n"
        "print(sorted(m for m in ('aiohttp', 'urllib3', 'requests') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- end to end: litellm and the OpenAI SDK through a wire lock -------------------------

LIVE = [{"text": "live answer"}, {"text": "streamed live words"}]


@pytest.fixture
def litellm(monkeypatch: pytest.MonkeyPatch) -> Any:
    """litellm, told to read its model-cost map from its own package (no network)."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("LITELLM_LOG", "ERROR")
    import litellm as module

    return module


def _litellm_agent(litellm: Any) -> Agent:
    async def agent(base: str, text: str) -> list[str]:
        common: dict[str, Any] = {"model": "openai/gpt-4o-mini", "api_base": base, "api_key": KEY}
        messages = [{"role": "user", "content": text}]
        reply = await litellm.acompletion(messages=messages, **common)
        stream = await litellm.acompletion(messages=messages, stream=True, **common)
        words = [chunk.choices[0].delta.content or "" async for chunk in stream]
        return [reply.choices[0].message.content, "".join(words)]

    return agent


async def _openai_agent(base: str, text: str) -> list[str]:
    http = openai.DefaultAioHttpClient()
    async with openai.AsyncOpenAI(base_url=base, api_key=KEY, http_client=http) as client:
        messages: Any = [{"role": "user", "content": text}]
        reply = await client.chat.completions.create(model="gpt-test", messages=messages)
        stream = await client.chat.completions.create(
            model="gpt-test", messages=messages, stream=True
        )
        words = [c.choices[0].delta.content or "" async for c in stream if c.choices]
        return [reply.choices[0].message.content or "", "".join(words)]


def _record_replay_mismatch(agent: Agent, path: Path, server: ModelServer) -> None:
    server.script(LIVE)
    with lock(path, mode="record") as recorded:
        assert asyncio.run(agent(server.base_url, "hi")) == ["live answer", "streamed live words"]
    assert len(server.hits) == 2 and len(recorded.requests) == 2
    assert KEY not in path.read_text()
    with lock(path) as replayed:
        assert asyncio.run(agent(CLOSED, "hi")) == ["live answer", "streamed live words"]
    assert len(server.hits) == 2  # replay: no hit
    assert [r.body for r in replayed.requests] == [r.body for r in recorded.requests]
    with pytest.raises(WireMismatch), lock(path), suppress(Exception):
        asyncio.run(agent(CLOSED, "a changed prompt"))
    assert len(server.hits) == 2


def test_litellm_acompletion_records_and_replays_with_no_hit(
    litellm: Any, tmp_path: Path, model_server: ModelServer
) -> None:
    """litellm's async OpenAI path sends through aiohttp (its ``LiteLLMAiohttpTransport``)."""
    _record_replay_mismatch(_litellm_agent(litellm), tmp_path / "litellm.yaml", model_server)


def test_openai_default_aiohttp_client_records_and_replays_with_no_hit(
    tmp_path: Path, model_server: ModelServer
) -> None:
    _record_replay_mismatch(_openai_agent, tmp_path / "aiohttp.yaml", model_server)


def test_litellm_sends_through_aiohttp(litellm: Any, model_server: ModelServer) -> None:
    """What this litellm version's async path uses: aiohttp, seen by this module."""
    with toy(lambda sent: "forward") as lock_:
        model_server.script(LIVE)
        assert asyncio.run(_litellm_agent(litellm)(model_server.base_url, "hi"))[0] == "live answer"
    assert [s.client for s in lock_.seen] == ["aiohttp", "aiohttp"]
    assert dict(lock_.seen[0].headers)["authorization"] == f"Bearer {KEY}"
