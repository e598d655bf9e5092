"""The httpx client's fast paths equal what they stand for: a replayed answer's
``Response`` built without running its body through the library's decoders
(``httpx_client._read``) is the response ``Response(content=...)`` gives, in every
attribute (a library whose constructor reads otherwise gets its own), and a request's
header pairs decoded from the memo are the pairs decoded afresh."""

from __future__ import annotations

import asyncio
import types
from typing import Any

import httpx
import httpx2
import pytest
from hypothesis import given, settings, strategies as st

from headerlock.testing.wire.clients import httpx_client
from headerlock.testing.wire.clients.core import WireAnswer

LIBRARIES = [httpx, httpx2]


def _state(response: Any) -> dict[str, Any]:
    state = {k: v for k, v in vars(response).items() if k not in ("stream", "_decoder")}
    state["headers"] = list(response.headers.raw)
    state["stream"] = (type(response.stream), list(response.stream))
    state["text"] = response.text
    state["num_bytes_downloaded"] = response.num_bytes_downloaded
    return state


@settings(max_examples=150, deadline=None)
@given(
    library=st.sampled_from(LIBRARIES),
    status=st.sampled_from([200, 201, 400, 429, 500]),
    content_type=st.none() | st.sampled_from(["application/json", "text/event-stream"]),
    body=st.binary(max_size=64) | st.sampled_from([b"", b'{"id": "x"}', "é".encode()]),
)
def test_a_response_built_read_is_the_one_its_constructor_reads(
    library: Any, status: int, content_type: str | None, body: bytes
) -> None:
    request = library.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    headers = [] if content_type is None else [("content-type", content_type)]
    made = library.Response(status, headers=list(headers), content=body, request=request)
    read = httpx_client._read(library, status, list(headers), body, request)
    assert _state(read) == _state(made)
    assert read.read() == made.read() == body
    assert list(read.iter_bytes()) == list(made.iter_bytes())
    assert asyncio.run(read.aread()) == body


@pytest.mark.parametrize("library", LIBRARIES)
def test_the_installed_libraries_are_built_read(library: Any) -> None:
    httpx_client._CHECKED.pop(library.__name__, None)
    assert httpx_client._read_is_set(library)
    answer = WireAnswer(200, "application/json", b'{"ok": true}')
    request = library.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx_client._response(library, request, answer)
    assert response.json() == {"ok": True} and response.is_closed


class _Counted(httpx2.Response):
    """A ``Response`` whose constructor keeps one more thing when it reads its content."""

    def read(self) -> bytes:
        self.reads = getattr(self, "reads", 0) + 1
        return super().read()


def test_a_library_whose_constructor_reads_otherwise_gets_its_constructor() -> None:
    library = types.SimpleNamespace(
        __name__="counted_httpx",
        Request=httpx2.Request,
        Response=_Counted,
        ByteStream=httpx2.ByteStream,
    )
    httpx_client._CHECKED.pop("counted_httpx", None)
    assert not httpx_client._read_is_set(library)
    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx_client._response(library, request, WireAnswer(200, None, b"{}"))
    assert response.reads == 1 and response.content == b"{}"


PAIR = st.tuples(st.binary(max_size=6), st.binary(max_size=6)) | st.sampled_from(
    [(b"Content-Length", b"336"), (b"authorization", b"Bearer sk-\xe9"), (b"", b"")]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(PAIR, max_size=6), max_size=6), st.integers(1, 4))
def test_header_pairs_decoded_from_the_memo_are_the_pairs_decoded_afresh(
    requests: list[list[tuple[bytes, bytes]]], kept: int
) -> None:
    httpx_client._PAIRS.clear()
    before, httpx_client._PAIRS_KEPT = httpx_client._PAIRS_KEPT, kept  # a full memo starts afresh
    try:
        for raw in [*requests, *requests]:
            fresh = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in raw)
            assert httpx_client._decoded(raw) == fresh
    finally:
        httpx_client._PAIRS_KEPT = before
