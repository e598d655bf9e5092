"""Each per-request fast path of a replay equals the slow path it stands for (issue 31):
the remembered request header the header made afresh, on generated and hostile requests
(secrets in odd places, escapes, duplicate-looking keys, ids)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from headerlock.formats.wire_scrub import Scrubber
from headerlock.testing.wire.apis import split_body
from headerlock.testing.wire.request_header import HttpRules, _http, _made, _query, request_header

SECRET = "sk-secret-0123456789"
QUOTED = 'sk-"quoted\\secret-99'
PROPERTY = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_CHAR = st.characters(exclude_categories=["Cs"])
TEXT = st.text(_CHAR, max_size=10) | st.sampled_from(
    ["", SECRET, f"x{SECRET}y", QUOTED, "AKIAABCDEFGHIJKLMNOP", "call_7", "\\u0041", '"', "é"]
)
SCALAR = st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from([1.0, -0.0]) | TEXT
JSON = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)


def _body(draw: st.DrawFn, api: str) -> bytes:
    """A body of ``api`` from small pools (so requests repeat each other's parts)."""
    system = draw(st.sampled_from(["be brief", SECRET, QUOTED, "é\n"]) | TEXT)
    tool = {"name": draw(st.sampled_from(["read", "write", SECRET])), "schema": draw(JSON)}
    config = {"model": draw(st.sampled_from(["m", "n", SECRET])), "temperature": draw(SCALAR)}
    user = {"role": "user", "content": draw(TEXT)}
    body: dict[str, Any]
    if api == "openai.chat":
        messages = [{"role": "system", "content": system}, user]
        body = {**config, "messages": messages[draw(st.integers(0, 1)) :]}
        body["tools"] = [{"type": "function", "function": tool}]
    elif api == "anthropic.messages":
        body = {**config, "system": system, "messages": [user], "tools": [tool]}
    elif api == "bedrock.converse":
        body = {"system": [{"text": system}], "messages": [user]}
        body["toolConfig"] = {"tools": [{"toolSpec": tool}], "toolChoice": draw(JSON)}
    else:
        body = {"systemInstruction": {"parts": [{"text": system}]}, "contents": [user]}
        body["tools"] = [{"functionDeclarations": [tool]}]
        body["generationConfig"] = config
    if draw(st.booleans()):
        body.pop(draw(st.sampled_from(sorted(body))))
    return json.dumps(
        body, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 1]))
    ).encode()


Sent = tuple[str, bytes, str, tuple[tuple[str, str], ...], str]


@st.composite
def requests(draw: st.DrawFn) -> list[Sent]:
    found: list[Sent] = []
    for _ in range(draw(st.integers(1, 6))):
        api = draw(
            st.sampled_from(
                ["openai.chat", "anthropic.messages", "bedrock.converse", "gemini.generate"]
            )
        )
        path = draw(st.sampled_from(["/v1/x", f"/v1/models/{SECRET}:generateContent", "/v1/m/n"]))
        headers = (
            ("Authorization", f"Bearer {draw(st.sampled_from([SECRET, 'sk-other-00000000']))}"),
            ("OpenAI-Beta", draw(st.sampled_from(["a", SECRET, QUOTED]))),
            ("anthropic-beta", draw(st.sampled_from(["b", "c"]))),
        )
        query = draw(st.sampled_from(["", "api-version=1", f"api-version={SECRET}", "key=k"]))
        try:
            body = _body(draw, api)
            split_body(api, body)
        except ValueError:
            continue
        found.append((api, body, path, headers, query))
    return found


SCRUBBERS = [
    Scrubber(),
    Scrubber.of([SECRET]),
    Scrubber.of([QUOTED, SECRET]),
    Scrubber.of([SECRET], redact=lambda s: s.replace("read", "<<r>>")),
]


@PROPERTY
@given(requests(), st.lists(st.sampled_from(range(len(SCRUBBERS))), min_size=1, max_size=3))
def test_a_remembered_request_header_is_the_header_made_afresh(
    sent: list[Sent], which: list[int]
) -> None:
    rules = HttpRules(add=("anthropic-beta",))
    for scrubber in (SCRUBBERS[i] for i in which):
        for _ in range(2):  # again: the second time from the memo
            for api, body, path, headers, query in sent:
                split = split_body(api, body)
                got = request_header(
                    split, path=path, headers=headers, query=query, scrubber=scrubber, rules=rules
                )
                fresh = split_body(api, body)
                http = _http(headers, rules.names(fresh.api))
                params = _query(query, fresh.api.unlocked_query)
                want = _made(fresh, path, http, params, scrubber)
                assert got == want
                assert json.dumps(got.data, sort_keys=True) == json.dumps(want.data, sort_keys=True)
                if scrubber.secrets:
                    assert SECRET not in json.dumps(got.data, ensure_ascii=False)
