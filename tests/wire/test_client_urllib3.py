"""``clients.urllib3_client``: ``HTTPConnectionPool.urlopen`` as a lock sees it (the
full URL, the headers and body bytes; answers as ``urllib3.HTTPResponse`` objects that
``requests`` reads, streams included), then ``requests.post`` to a chat endpoint
recorded against the loopback model server and replayed with no hit."""

from __future__ import annotations

import gzip
import importlib.util
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import urllib3
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from headerlock.errors import NetworkSealedError, WireMismatch
from headerlock.testing.wire.apis import model_api
from headerlock.testing.wire.clients import install, urllib3_client
from headerlock.testing.wire.clients.core import SentRequest, WireAnswer
from headerlock.testing.wire.lock import lock
from tests.model_server import Answer, ModelServer, chat_stream, json_answer, text_chunks
from tests.wire.agents import CLOSED, KEY
from tests.wire.toy_lock import JSON_ANSWER, SSE_BODY, Decision, toy

ORIGINAL = HTTPConnectionPool.__dict__["urlopen"]


# -- the adapter: what the lock is handed, what the caller gets ------------------------


def test_an_answer_is_a_working_requests_response(model_server: ModelServer) -> None:
    url = f"{model_server.base_url}/chat/completions?api-version=1"
    with toy(lambda sent: JSON_ANSWER) as lock_:
        resp = requests.post(
            url, json={"model": "m"}, params={"extra": "x y"}, headers={"Authorization": KEY}
        )
    assert model_server.hits == []
    assert (resp.status_code, resp.ok, resp.reason) == (200, True, "OK")
    assert resp.headers["content-type"] == "application/json"
    assert resp.json() == {"answer": "scripted"} and resp.text == JSON_ANSWER.body.decode()
    assert resp.url == f"{url}&extra=x+y"
    (sent,) = lock_.seen
    assert (sent.client, sent.method) == ("urllib3", "POST")
    assert sent.api is model_api("openai.chat")
    assert sent.url == f"{url}&extra=x+y"
    headers = dict(sent.headers)
    assert headers["Authorization"] == KEY
    assert headers["Content-Type"] == "application/json"
    assert headers["Content-Length"] == str(len(sent.body))
    assert json.loads(sent.body) == {"model": "m"}


def test_an_answered_stream_iterates_by_line() -> None:
    answer = WireAnswer(200, "text/event-stream", SSE_BODY)
    with toy(lambda sent: answer), requests.Session() as session:
        resp = session.post(f"{CLOSED}/chat/completions", json={"stream": True}, stream=True)
        lines = list(resp.iter_lines())
        again = session.post(f"{CLOSED}/chat/completions", json={"stream": True}, stream=True)
        chunks = b"".join(again.iter_content(chunk_size=5))
    assert lines == [b'data: {"n": 1}', b"", b'data: {"n": 2}', b"", b"data: [DONE]", b""]
    assert chunks == SSE_BODY


def test_error_answers_raise_for_status() -> None:
    limited = WireAnswer(429, "application/json", b'{"error": {"message": "slow down"}}')
    with toy(lambda sent: limited):
        resp = requests.post(f"{CLOSED}/chat/completions", json={})
    assert (resp.status_code, resp.ok, resp.reason) == (429, False, "Too Many Requests")
    assert resp.json()["error"]["message"] == "slow down"
    with pytest.raises(requests.HTTPError, match="429"):
        resp.raise_for_status()


def test_urllib3_direct_preload_and_stream() -> None:
    with toy(lambda sent: JSON_ANSWER), urllib3.PoolManager() as pool:
        loaded = pool.request("POST", f"{CLOSED}/x", body=b"{}")
        lazy = pool.request("POST", f"{CLOSED}/x", body=b"{}", preload_content=False)
        assert lazy.read(5) == JSON_ANSWER.body[:5]
        rest = b"".join(lazy.stream(4))
        streamed = pool.request("GET", f"{CLOSED}/x", preload_content=False)
        whole = b"".join(streamed.stream(3))
    assert loaded.data == JSON_ANSWER.body and loaded.json() == {"answer": "scripted"}
    assert JSON_ANSWER.body[:5] + rest == JSON_ANSWER.body == whole
    assert loaded.headers["Content-Type"] == "application/json"


def test_the_url_is_built_from_the_pool() -> None:
    with toy(lambda sent: JSON_ANSWER) as lock_:
        HTTPSConnectionPool("api.example.com", 443).urlopen("GET", "/v1/models?limit=2")
        HTTPSConnectionPool("api.example.com", 8443).urlopen("GET", "/v1/models")
        HTTPConnectionPool("::1", 8080).urlopen("POST", "/v1/chat/completions", b"{}")
        HTTPConnectionPool("proxy.local", 3128).urlopen("GET", "http://example.com/a?b=1")
        pool = HTTPConnectionPool("127.0.0.1", 9, headers={"X-Pool": "1"})
        pool.urlopen("POST", "/p", "text \u00e9", None, False)  # positional retries
    assert [s.url for s in lock_.seen] == [
        "https://api.example.com/v1/models?limit=2",
        "https://api.example.com:8443/v1/models",
        "http://[::1]:8080/v1/chat/completions",
        "http://example.com/a?b=1",
        "http://127.0.0.1:9/p",
    ]
    assert lock_.seen[2].api is model_api("openai.chat")
    assert dict(lock_.seen[4].headers) == {"X-Pool": "1"}  # the pool's, none given
    assert lock_.seen[4].body == "text \u00e9".encode()


def _chunks() -> Iterator[bytes]:
    yield b"streamed "
    yield b"upload"


BODIES: dict[str, Callable[[], Any]] = {
    "bytes": lambda: b"raw \x00 bytes",
    "str": lambda: "text \u00e9",
    "file": lambda: io.BytesIO(b"from a file"),
    "generator": _chunks,
    "none": lambda: None,
}


@pytest.mark.parametrize("kind", BODIES)
def test_every_body_kind_is_seen_as_sent(kind: str, model_server: ModelServer) -> None:
    """Forwarded, the server gets the very bytes the lock was shown, even for a file or
    a generator the lock read first."""
    model_server.route("*", json_answer({"ok": True}))
    with toy(lambda sent: "forward") as lock_:
        resp = requests.post(f"{model_server.base_url}/upload", data=BODIES[kind]())
    assert resp.json() == {"ok": True}
    (sent,), (hit,) = lock_.seen, model_server.hits
    assert sent.body == hit.body and sent.api is None
    if kind == "generator":
        assert hit.body == b"streamed upload"
        assert dict(sent.headers)["Transfer-Encoding"] == "chunked"
    assert lock_.told == [WireAnswer(200, "application/json", b'{"ok": true}')]


def test_a_forward_is_read_whole_reported_decoded_and_handed_back(
    model_server: ModelServer,
) -> None:
    model_server.route("*/chat/completions", chat_stream(text_chunks("live ", "words")))
    zipped = Answer(body=gzip.compress(b'{"z": 1}'), headers={"Content-Encoding": "gzip"})
    model_server.route("*/gzipped", zipped, method="GET")
    with toy(lambda sent: "forward") as lock_:
        resp = requests.post(
            f"{model_server.base_url}/chat/completions", json={"model": "m"}, stream=True
        )
        lines = [line for line in resp.iter_lines() if line]
        unzipped = requests.get(f"{model_server.base_url}/gzipped")
        raw = urllib3.request("GET", f"{model_server.base_url}/gzipped", decode_content=False)
    assert len(model_server.hits) == 3
    assert lines[-1] == b"data: [DONE]" and len(lines) == 3
    assert unzipped.json() == {"z": 1} and raw.data == b'{"z": 1}'  # decoded once, for all
    stream, answer, _ = lock_.told
    assert stream is not None and stream.content_type == "text/event-stream"
    assert stream.body == b"".join(line + b"\n\n" for line in lines)
    assert answer == WireAnswer(200, "application/json", b'{"z": 1}')


def test_a_pass_is_untouched_and_a_failed_forward_is_reported_once(
    model_server: ModelServer,
) -> None:
    model_server.route("*", json_answer({"live": True}))
    with toy(lambda sent: None) as lock_:
        resp = requests.post(f"{model_server.base_url}/anything", json={})
    assert "Server" in resp.headers and resp.json() == {"live": True}
    assert lock_.told == [] and len(lock_.seen) == 1

    retries = urllib3.Retry(total=2, backoff_factor=0)
    with toy(lambda sent: "forward") as lock_, pytest.raises(urllib3.exceptions.MaxRetryError):
        urllib3.PoolManager(retries=retries).request("POST", f"{CLOSED}/chat/completions")
    assert lock_.told == [None] and len(lock_.seen) == 1  # its retries are part of it


def test_a_redirect_followed_inside_urlopen_is_one_request(model_server: ModelServer) -> None:
    model_server.route("/old", Answer(302, headers={"Location": "/new"}), method="GET")
    model_server.route("/new", json_answer({"moved": True}), method="GET")
    host, port = model_server.origin.removeprefix("http://").split(":")
    with toy(lambda sent: "forward") as lock_:
        resp = HTTPConnectionPool(host, int(port)).urlopen("GET", "/old", redirect=True)
    assert resp.json() == {"moved": True} and len(model_server.hits) == 2
    assert [s.path for s in lock_.seen] == ["/old"]
    assert lock_.told == [WireAnswer(200, "application/json", b'{"moved": true}')]


def test_botocore_sends_through_urlopen() -> None:
    botocore_session = pytest.importorskip("botocore.session")
    listing = (
        b'<?xml version="1.0" encoding="UTF-8"?><ListAllMyBucketsResult>'
        b"<Buckets><Bucket><Name>recorded</Name></Bucket></Buckets></ListAllMyBucketsResult>"
    )
    client = botocore_session.get_session().create_client(
        "s3",
        endpoint_url=CLOSED.removesuffix("/v1"),
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="not-a-secret",
    )
    with toy(lambda sent: WireAnswer(200, "application/xml", listing)) as lock_:
        buckets = client.list_buckets()["Buckets"]
    assert [b["Name"] for b in buckets] == ["recorded"]
    (sent,) = lock_.seen
    assert (sent.method, sent.path) == ("GET", "/")
    assert dict(sent.headers)["Authorization"].startswith("AWS4-HMAC-SHA256")


def test_a_refusal_reaches_the_caller_and_nothing_goes_out(model_server: ModelServer) -> None:
    def refuse(sent: SentRequest) -> Decision:
        raise NetworkSealedError(f"headerlock: refused {sent.method} {sent.url}")

    with toy(refuse), pytest.raises(NetworkSealedError, match="refused POST"):
        urllib3.request("POST", f"{model_server.base_url}/chat/completions", body=b"{}")
    with toy(refuse), pytest.raises(requests.ConnectionError, match="refused POST"):
        requests.post(f"{model_server.base_url}/chat/completions", json={})  # requests wraps it
    assert model_server.hits == []


def test_patched_only_while_a_lock_is_open_and_once() -> None:
    assert HTTPConnectionPool.__dict__["urlopen"] is ORIGINAL
    with toy(lambda sent: None):
        patched = HTTPConnectionPool.__dict__["urlopen"]
        assert patched is not ORIGINAL
        urllib3_client.install()  # idempotent
        assert HTTPConnectionPool.__dict__["urlopen"] is patched
        assert urllib3_client.patched_classes() == [HTTPConnectionPool]
        assert "urlopen" not in HTTPSConnectionPool.__dict__  # inherits the patch
    assert HTTPConnectionPool.__dict__["urlopen"] is ORIGINAL
    assert urllib3_client.patched_classes() == []
    assert {"requests", "urllib3", "botocore"} <= set(install.seen_clients())


def test_a_missing_urllib3_is_looked_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    looked: list[str] = []
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        if name == "urllib3":
            looked.append(name)
            return None
        return real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(urllib3_client, "_found", {})
    monkeypatch.setattr(urllib3_client, "_absent", {})
    for _ in range(3):
        urllib3_client.install()
        assert urllib3_client.patched_classes() == []
    assert looked == ["urllib3"]
    assert HTTPConnectionPool.__dict__["urlopen"] is ORIGINAL


# -- end to end: requests.post through a wire lock ------------------------------------

LIVE = [{"text": "live answer"}, {"text": "streamed live words"}]


def _requests_agent(base: str, text: str) -> list[str]:
    """A plain chat completion, then a streamed one, over ``requests``."""
    headers = {"Authorization": f"Bearer {KEY}"}
    body: dict[str, Any] = {"model": "gpt-test", "messages": [{"role": "user", "content": text}]}
    with requests.Session() as session:
        reply = session.post(f"{base}/chat/completions", json=body, headers=headers)
        first = reply.json()["choices"][0]["message"]["content"]
        stream = session.post(
            f"{base}/chat/completions", json={**body, "stream": True}, headers=headers, stream=True
        )
        words = []
        for line in stream.iter_lines():
            data = line.removeprefix(b"data: ")
            if line.startswith(b"data: ") and data != b"[DONE]":
                choices = json.loads(data)["choices"]
                words += [c["delta"].get("content") or "" for c in choices]
    return [first, "".join(words)]


def test_requests_post_records_and_replays_with_no_hit(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "requests.yaml"
    model_server.script(LIVE)
    with lock(path, mode="record") as recorded:
        assert _requests_agent(model_server.base_url, "hi") == [
            "live answer",
            "streamed live words",
        ]
    assert len(model_server.hits) == 2 and len(recorded.requests) == 2
    assert KEY not in path.read_text()
    with lock(path) as replayed:
        assert _requests_agent(CLOSED, "hi") == ["live answer", "streamed live words"]
    assert len(model_server.hits) == 2  # replay: no hit
    assert [r.body for r in replayed.requests] == [r.body for r in recorded.requests]
    replies: list[requests.Response] = []
    changed: dict[str, Any] = {
        "model": "gpt-test",
        "messages": [{"role": "user", "content": "changed"}],
    }
    with pytest.raises(WireMismatch), lock(path):
        replies.append(requests.post(f"{CLOSED}/chat/completions", json=changed))
    assert [r.status_code for r in replies] == [400]
    assert len(model_server.hits) == 2
