"""The other HTTP traffic of a wire recording: every request that is not a model request.

Embeddings, model lists, token counts, a tool's own HTTP calls, and a model request whose
body is not a JSON object are kept in ``http:`` beside the model requests, so that a
replay (or a scripted record) answers them too and nothing leaves the process. An entry
is the method, the path and query (no scheme, host or userinfo), the body and the
response, scrubbed like the rest of the recording. A body is kept as JSON data when it
parses, as text when it is UTF-8, else as base64, so it replays exactly. A body sent
with a ``content-encoding`` (gzip, deflate, br) is kept decoded, and ``encoding`` notes
how it was sent.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, NoReturn

from headerlock.formats.wire_response import JSON_MAX_DEPTH, WireResponse, deeper_than

RequestBodyKind = Literal["json", "text", "base64"]
REQUEST_BODY_KINDS: Final[tuple[RequestBodyKind, ...]] = ("json", "text", "base64")
HTTP_KEYS: Final = ("method", "path", "query", "body", "encoding", "response")
Fail = Callable[[str, str], NoReturn]


@dataclass(frozen=True, slots=True)
class WireBody:
    """A request body: JSON data, UTF-8 text or base64 of the bytes."""

    kind: RequestBodyKind
    value: Any

    @classmethod
    def from_bytes(cls, raw: bytes) -> WireBody | None:
        """The body of ``raw`` bytes (``None`` when empty): JSON data when it parses and
        nests at most ``JSON_MAX_DEPTH`` levels, else UTF-8 text, else base64."""
        if not raw:
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return cls("base64", base64.b64encode(raw).decode("ascii"))
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):  # not JSON, or too deep to parse
            return cls("text", text)
        return cls("text", text) if deeper_than(data, JSON_MAX_DEPTH) else cls("json", data)

    def to_data(self) -> dict[str, Any]:
        return {self.kind: self.value}


@dataclass(frozen=True, slots=True)
class HttpEntry:
    """One non-model exchange: what was asked and what came back."""

    method: str
    path: str
    query: str
    body: WireBody | None
    response: WireResponse | None = None
    encoding: str = ""
    """The ``content-encoding`` the body was sent with (it is kept decoded)."""

    def request_data(self) -> dict[str, Any]:
        """Plain data of the request side (what replay compares)."""
        data = {
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "body": None if self.body is None else self.body.to_data(),
        }
        if self.encoding:
            data["encoding"] = self.encoding
        return data

    def to_data(self) -> dict[str, Any]:
        data = self.request_data()
        if self.response is not None:
            data["response"] = self.response.to_data()
        return data


def read_http_entry(
    value: Any, key: str, fail: Fail, response: Callable[[Any, str], WireResponse]
) -> HttpEntry:
    """An ``HttpEntry`` from loaded data; ``fail(key, message)`` reports a bad value and
    ``response`` reads the response as the model entries' reader does."""
    if not isinstance(value, Mapping):
        fail(key, f"must be a mapping, got {type(value).__name__}")
    unknown = sorted(k for k in value if k not in HTTP_KEYS)
    if unknown:
        fail(f"{key}.{unknown[0]}", "unknown key")
    strings = {}
    for name in ("method", "path", "query"):
        if name not in value:
            fail(f"{key}.{name}", "missing")
        if not isinstance(value[name], str):
            fail(f"{key}.{name}", f"must be a string, got {value[name]!r}")
        strings[name] = value[name]
    body = _body(value.get("body"), f"{key}.body", fail)
    answer = response(value["response"], f"{key}.response") if "response" in value else None
    encoding = value.get("encoding", "")
    if not isinstance(encoding, str):
        fail(f"{key}.encoding", f"must be a string, got {encoding!r}")
    return HttpEntry(strings["method"], strings["path"], strings["query"], body, answer, encoding)


def _body(value: Any, key: str, fail: Fail) -> WireBody | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or len(value) != 1:
        fail(key, f"must be one of {', '.join(REQUEST_BODY_KINDS)} with its value, or null")
    [(kind, data)] = value.items()
    if kind not in REQUEST_BODY_KINDS:
        fail(f"{key}.{kind}", f"unknown body kind; expected {', '.join(REQUEST_BODY_KINDS)}")
    if kind in ("text", "base64") and not isinstance(data, str):
        fail(f"{key}.{kind}", f"must be a string, got {type(data).__name__}")
    if kind == "base64":
        try:
            base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            fail(f"{key}.base64", "is not base64")
    return WireBody(kind, data)
