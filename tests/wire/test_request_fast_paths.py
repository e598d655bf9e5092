"""Each per-request fast path of a replay equals the slow path it stands for (issue 31), on
generated and hostile requests (secrets in odd places, escapes, id keys written escaped,
invalid bytes): the remembered request header the header made afresh, a member key read
from its bytes ``json.loads``' reading, a message scrubbed and its ids found from its bytes
the walks', and the memo's element spans shared by ``shared`` and ``entry``."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from headerlock.formats.wire_recording import WireRecording, sorted_names
from headerlock.formats.wire_scrub import IdTokens, Scrubber
from headerlock.runtime.canonical import canonical_json
from headerlock.testing.wire.apis import Split, split_body
from headerlock.testing.wire.clients.core import SentRequest
from headerlock.testing.wire.entry import _sorted_names, build_entry
from headerlock.testing.wire.header_book import HeaderBook
from headerlock.testing.wire.matching import request_key
from headerlock.testing.wire.members import (
    _CHECKED,
    DuplicateKeyError,
    _unique_keys,
    member_values,
)
from headerlock.testing.wire.memo import MessageMemo
from headerlock.testing.wire.request_header import HttpRules, _http, _made, _query, request_header
from headerlock.testing.wire.spans import _key, body_members

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


def _changed(body: bytes, config_id: bool, no_tools: bool) -> bytes:
    """``body`` with a top-level config id (numbered before the messages' ids), and without
    its tools."""
    data = json.loads(body)
    if config_id:
        data = {"previous_response_id": "resp_7", **data}
    if no_tools:
        data = {k: v for k, v in data.items() if k not in ("tools", "toolConfig")}
    return json.dumps(data).encode()


@PROPERTY
@given(
    requests(),
    st.lists(st.sampled_from(range(len(SCRUBBERS))), min_size=1, max_size=3),
    st.booleans(),
    st.booleans(),
    st.data(),
)
def test_a_request_key_made_without_its_entry_is_the_entrys_key(
    sent: list[Sent], which: list[int], pinned: bool, config_id: bool, data: st.DataObject
) -> None:
    sent = [
        (a, _changed(b, config_id, data.draw(st.booleans())), p, h, q) for a, b, p, h, q in sent
    ]
    books = [HeaderBook(HttpRules(add=("anthropic-beta",)), None), HeaderBook(None, None)]
    for scrubber, book in ((SCRUBBERS[i], books[i % 2]) for i in which):
        memo = MessageMemo()
        for _ in range(2):  # again: each message and the key's frame from the memo
            for api, body, path, headers, query in sent:
                split = memo.shared(split_body(api, body), body)  # as ``LockSession`` does
                request = SentRequest(
                    "httpx", "POST", f"http://h{path}?{query}", headers, body, None
                )
                header = book.header(split, request, pinned, scrubber)
                key = memo.key(split, body, path, pinned, scrubber, header)
                fresh = build_entry(
                    split_body(api, body),
                    path,
                    pinned=pinned,
                    scrubber=scrubber,
                    ids=IdTokens(),
                    header=header,
                )
                known = split.messages_at is not None and body[split.messages_at] == ord("[")
                if pinned or scrubber.redact is not None or not known:
                    assert key is None
                    continue
                assert key == request_key(fresh) == canonical_json(fresh.request_data())


def _escaped(text: str) -> str:
    """``text`` (JSON) with every ASCII letter of its strings' keys and values written as a
    ``\\u`` escape now and then: what a hostile client may send for ``"id"``."""
    return text.replace('"id"', '"\\u0069d"').replace("sk-", "s\\u006b-")


@PROPERTY
@given(
    st.text(_CHAR, max_size=8) | st.sampled_from(["id", "a\\b", 'q"', "\x00", "\x1f", "é"]),
    st.booleans(),
)
def test_a_key_read_from_its_bytes_is_the_key_json_reads(key: str, ascii_only: bool) -> None:
    raw = json.dumps(key, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    assert _key(raw, 0, len(raw)) == json.loads(raw) == key


@PROPERTY
@given(st.binary(max_size=8) | st.sampled_from([b"\xed\xa0\x80", b"\xff", b"\x00a", b"a\\"]))
def test_a_key_of_hostile_bytes_is_read_or_refused_as_json_reads_it(inside: bytes) -> None:
    raw = b'"' + inside + b'"'
    try:
        want: Any = json.loads(raw)
    except ValueError:
        want = ValueError
    try:
        got: Any = _key(raw, 0, len(raw))
    except ValueError:
        got = ValueError
    assert got == want


MESSAGE = st.dictionaries(
    st.sampled_from(["role", "content", "id", "tool_call_id", "call_id", "idx", "ID", "é"]),
    JSON,
    max_size=4,
)


HOSTILE: list[Any] = [
    {"role": "user", "content": SECRET},
    {"id": "call_1", "content": [{"text": f"a{SECRET}"}]},
    {"nested": [{"tool_call_id": "call_2"}], "id": 7},
    {"content": "id", "x": QUOTED},
    {"id": "call_3", "x": [{"id": "call_4"}, {"id": "call_3"}], "tool_call_id": "call_5"},
]


@PROPERTY
@given(
    st.lists(MESSAGE | JSON, min_size=1, max_size=3),
    st.booleans(),
    st.sampled_from([None, 1]),
    st.sampled_from(range(len(SCRUBBERS))),
)
def test_a_message_scrubbed_and_its_ids_found_from_its_bytes_are_the_walks(
    values: list[Any], ascii_only: bool, indent: int | None, which: int
) -> None:
    scrubber = SCRUBBERS[which]
    for value in [*values, *HOSTILE]:
        text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
        for raw in (text.encode("utf-8", "surrogatepass"), _escaped(text).encode()):
            parsed = json.loads(raw)
            assert parsed == value
            assert IdTokens().raw_message_ids(raw, parsed) == IdTokens().message_ids(value)
            walk = IdTokens()
            walk.messages(value)  # the ids found without a copy are the ones it numbers
            assert IdTokens().message_ids(value) == list(walk.tokens)
            got, want = scrubber.json_raw(raw, parsed), scrubber.data(value)
            assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
            if scrubber.secrets:
                assert SECRET not in json.dumps(got, ensure_ascii=False)
            owned = scrubber.json_owned(IdTokens().messages(parsed))
            want = scrubber.data(IdTokens().messages(value))
            assert json.dumps(owned, sort_keys=True) == json.dumps(want, sort_keys=True)
            assert not _containers(owned) & _containers(parsed)  # nothing shared


def _containers(value: Any) -> set[int]:
    """The identities of the lists and mappings in ``value``, at any depth."""
    if isinstance(value, dict):
        return {id(value)}.union(*(_containers(v) for v in value.values()))
    if isinstance(value, list):
        return {id(value)}.union(*(_containers(v) for v in value))
    return set()


@st.composite
def sessions(draw: st.DrawFn) -> list[tuple[str, bytes]]:
    """The bodies of growing sessions of two APIs, interleaved, some escaped."""
    found: list[tuple[str, bytes]] = []
    for api in ("openai.chat", "anthropic.messages"):
        messages: list[Any] = []
        if api == "openai.chat" and draw(st.booleans()):
            messages.append({"role": "system", "content": draw(TEXT)})
        for n in range(draw(st.integers(1, 4))):
            message: dict[str, Any] = {"role": "user", "content": draw(TEXT | JSON)}
            if draw(st.booleans()):
                message = {"role": "assistant", "tool_calls": [{"id": f"call_{n % 2}"}]}
            messages.append(message)
            body = json.dumps(
                {"model": "m", "messages": messages}, indent=draw(st.sampled_from([None, 1]))
            )
            found.append((api, (_escaped(body) if draw(st.booleans()) else body).encode()))
    return draw(st.permutations(found)) if draw(st.booleans()) else found


@PROPERTY
@given(sessions(), st.sampled_from(range(3)))
def test_the_memo_in_a_sessions_order_builds_what_a_fresh_build_entry_does(
    bodies: list[tuple[str, bytes]], which: int
) -> None:
    memo = MessageMemo()
    scrubber = SCRUBBERS[which]
    for api, body in [*bodies, *bodies]:
        split = memo.shared(split_body(api, body), body)  # as ``LockSession.request`` does
        fresh = build_entry(
            split_body(api, body), "/v1/x", pinned=False, scrubber=scrubber, ids=IdTokens()
        )
        entry, key = memo.entry(split, body, "/v1/x", pinned=False, scrubber=scrubber)
        assert entry == fresh
        assert key == request_key(fresh) == canonical_json(fresh.request_data())
        assert json.dumps(entry.messages, sort_keys=True) == json.dumps(
            fresh.messages, sort_keys=True
        )


LONG = [{"role": "system", "content": "x" * 1100}]  # past CHECKED_MIN: remembered
TAILS = st.sampled_from(
    [
        b"",
        b", ",  # a trailing comma: no JSON
        b', {"a": 1, "a": 2}',  # a duplicate key in a new message
        b', {"a": 1, "b": [1, 2.50, -0.0, 1e400, true]}',
        b', {"t": "\\u00e9\\ud800"}, "x"',  # escapes, a lone surrogate escaped
        b', {"t": "\xed\xa0\x80"}',  # a surrogate as UTF-8 bytes: no UTF-8
        b", 1 2",
        b',\n  {"k": {"k": {"k": null}}}',
        b", [[[[[]]]]]",
    ]
)


def _strict_outcome(raw: bytes) -> Any:
    """The slow path: the member's bytes parsed whole, duplicate keys refused."""
    try:
        return ("ok", json.dumps(json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys)))
    except DuplicateKeyError as error:
        return ("duplicate", error.key)
    except (ValueError, RecursionError):
        return ("refused", None)


@PROPERTY
@given(
    st.lists(st.tuples(st.lists(JSON, max_size=3), TAILS, st.booleans()), min_size=1, max_size=6)
)
def test_a_member_unpacked_or_grown_from_its_last_bytes_is_the_member_parsed_whole(
    steps: list[tuple[list[Any], bytes, bool]],
) -> None:
    _CHECKED.clear()
    grown: list[Any] = list(LONG)
    for added, tail, restart in steps:
        if restart:
            grown = list(LONG)
        grown.extend(added)
        head = json.dumps(grown, indent=None).encode()
        for raw in (head, head[:-1] + tail + b"]"):  # clean first: the hostile one grows from it
            _check_member(b'{"model": "m", "messages": ' + raw + b"}")


def _check_member(body: bytes) -> None:
    """The messages of ``body`` by ``member_values`` (after the bodies before it) are the
    strict parse of their bytes, or refused as it refuses them."""
    try:
        spans = body_members(body)
    except ValueError:
        return
    got: Any
    values: dict[str, Any] = {}
    try:
        values = member_values(body, spans)
        got = ("ok", json.dumps(values["messages"]))
    except DuplicateKeyError as error:
        got = ("duplicate", error.key)
    except (ValueError, RecursionError):
        got = ("refused", None)
    start, end = spans["messages"]
    assert got == _strict_outcome(body[start:end])
    if got[0] == "ok":  # each split its own objects, never the memo's
        assert values["messages"] is not member_values(body, spans)["messages"]


@PROPERTY
@given(
    st.lists(
        st.tuples(st.sampled_from([b"", b"[1]", b"[1] ", b"[]"]), st.sampled_from([b"", b'"a"'])),
        min_size=1,
        max_size=6,
    ),
    st.lists(st.lists(st.sampled_from(["b", "a", "é", "B", "\U0001f600", "\uff01"]), max_size=3)),
)
def test_a_remembered_prefix_digest_and_tool_order_are_the_ones_computed(
    prefixes: list[tuple[bytes, bytes]], names: list[list[str]]
) -> None:
    api = split_body("openai.chat", b'{"messages": []}').api
    for tools, system in prefixes:
        split = Split(api, {}, None, None, [], tools, system, [])
        assert split.prefix_sha256 == hashlib.sha256(tools + system).hexdigest()
    for sent in [*names, *names]:
        assert _sorted_names(sent) == sorted_names(sent)
        sent.append("z")  # the caller's list changed afterwards: the memo kept its copy


def test_a_header_shared_by_locks_leaves_each_book_as_a_copy() -> None:
    """A test that edits the headers its run wrote (``run.headers``) changes nothing the
    next lock records: the remembered header stays as it was made."""
    body = json.dumps({"model": "m", "messages": [], "tools": [{"name": "read"}]}).encode()
    api = split_body("openai.chat", body).api
    sent = SentRequest("httpx", "POST", "http://127.0.0.1/v1/chat/completions", (), body, api)
    books = [HeaderBook(HttpRules(), None) for _ in range(2)]
    made = []
    for book in books:
        split = split_body("openai.chat", body)
        found = book.header(split, sent, False, Scrubber())
        assert found is not None
        entry = build_entry(split, sent.path, pinned=False, scrubber=Scrubber(), ids=IdTokens())
        recording = WireRecording(False, (replace(entry, header=found.id),), ())
        written = book.of(recording)
        assert written == {found.id: dict(found.data)}
        written[found.id]["tools"].append({"name": "edited"})  # the test's own copy
        made.append((found.id, recording))
    assert books[0].headers == books[1].headers
    header, recording = made[1]
    assert [t["name"] for t in books[1].of(recording)[header]["tools"]] == ["read"]
