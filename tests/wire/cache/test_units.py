"""The byte-level pieces: cutting breakpoint markers out of JSON, recognising volatile
values, the per-model minimums."""

from __future__ import annotations

import json

import pytest

from headerlock.formats import aws_eventstream
from headerlock.formats.wire_recording import WireEntry, WirePrefix
from headerlock.formats.wire_response import WireResponse
from headerlock.testing.wire.apis import model_api
from headerlock.testing.wire.cache.prefix import estimate_tokens, from_entry, strip_member
from headerlock.testing.wire.cache.turns import Call, response_turn
from headerlock.testing.wire.cache.volatile import volatile_at


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{"a":1,"cache_control":{"type":"ephemeral"}}', b'{"a":1}'),
        (b'{"cache_control": {"type": "x"}, "a": 2}', b'{"a": 2}'),
        (b'{"text":"cache_control","cache_control":{}}', b'{"text":"cache_control"}'),
        (
            b'{"t":"say \\"cache_control\\": 1","cache_control":1}',
            b'{"t":"say \\"cache_control\\": 1"}',
        ),
        (b'[{"cache_control":{}},{"b":{"cache_control":{"ttl":"1h"}}}]', b'[{},{"b":{}}]'),
        (b'{"a":"x\\\\","cache_control":1,"b":2}', b'{"a":"x\\\\","b":2}'),
        (b'{"a":1}', b'{"a":1}'),
    ],
)
def test_strip_member_cuts_only_the_member(raw: bytes, expected: bytes) -> None:
    out = strip_member(raw, "cache_control")
    assert out == expected
    json.loads(out)


@pytest.mark.parametrize(
    ("before", "after", "text", "kind"),
    [
        (
            b"id 0b8f6e2c-1c4e-4b3a-9a55-0c8e5a9b1d21 x",
            b"id 5a1c77d0-9f3e-4c1b-8d6a-2f4b9e0c7a13 x",
            False,
            "uuid",
        ),
        (b"trace a3f9c0d1e2b4f5a6 end", b"trace a3f9c0d1e2b4f5a7 end", False, "hex id"),
        (b"Today is 2026-01-02.", b"Today is 2026-01-03.", False, "date"),
        (b"at 09:15 sharp", b"at 09:16 sharp", False, "time"),
        (b"turn 9 of", b"turn 10 of", True, "counter"),
    ],
)
def test_volatile_values_are_named_with_their_text(
    before: bytes, after: bytes, text: bool, kind: str
) -> None:
    offset = next(n for n, (a, b) in enumerate(zip(before, after, strict=False)) if a != b)
    found = volatile_at(before, after, offset, text=text)
    assert found is not None and found.kind == kind
    assert found.before in before.decode() and found.after in after.decode()


def test_a_changed_number_in_a_schema_is_no_counter_and_words_are_not_volatile() -> None:
    assert volatile_at(b'{"maxLength":10}', b'{"maxLength":20}', 13, text=False) is None
    assert volatile_at(b"Be kind.", b"Be brief.", 3, text=True) is None


def test_minimums_and_the_estimate() -> None:
    anthropic = model_api("anthropic.messages").cache
    assert [
        anthropic.minimum(m)
        for m in (
            "claude-sonnet-4-5",
            "claude-opus-4-5-20251101",
            "claude-haiku-4-5",
            "claude-3-5-haiku-20241022",
        )
    ] == [1024, 4096, 4096, 2048]
    gemini = model_api("gemini.generate").cache
    assert (gemini.minimum("gemini-2.5-flash"), gemini.minimum("gemini-2.5-pro")) == (1024, 4096)
    openai = model_api("openai.chat").cache
    assert [openai.implicit_hit(t, "gpt-4o") for t in (1023, 1024, 1151, 1152, 2000)] == [
        0,
        1024,
        1024,
        1152,
        1920,
    ]
    assert [estimate_tokens(n) for n in (0, 1, 4, 5)] == [0, 1, 1, 2]


def test_a_null_tools_list_renders_no_tool() -> None:
    """``"tools": null`` in a body (or a pinned recording's prefix) is no tool, no crash."""
    entry = WireEntry(
        api="anthropic.messages", path="/v1/messages", config={"model": "claude-sonnet-4-5"},
        system=None, tools=None, tool_names=(), prefix_sha256="0" * 64,
        messages=[{"role": "user", "content": "hi"}], prefix=WirePrefix("null", ""),
    )  # fmt: skip
    prefix = from_entry(1, entry)
    assert [item.segment for item in prefix.items] == ["messages"]


def test_each_rule_is_one_registry_entry_worded_by_its_own_provider() -> None:
    """One registry: every code has its meaning, rule and check; a finding is explained
    with the rules of its own API only (no other provider's minimums), never "as ..."."""
    from pathlib import Path

    from headerlock.testing.wire.apis import NAMES
    from headerlock.testing.wire.cache.findings import BY_CODE, CODES, RULES

    assert [r.code for r in RULES] == list(CODES) and len(set(CODES)) == len(CODES)
    assert all(r.meaning and r.rule and r.check for r in RULES)
    providers = {model_api(api).cache.provider for api in NAMES}
    for api in NAMES:
        cache = model_api(api).cache
        for rule in RULES:
            text = rule.explain(cache)
            assert not text.startswith("as "), (rule.code, text)
            assert not any(p in text for p in providers - {cache.provider}), (api, text)
        assert cache.provider in BY_CODE["prefix-too-short"].explain(cache)
    assert BY_CODE["no-breakpoint"].applies(model_api("anthropic.messages").cache)
    assert not BY_CODE["no-breakpoint"].applies(model_api("openai.chat").cache)
    guide = Path(__file__).resolve().parents[3] / "docs" / "guides" / "cache.md"
    text = guide.read_text(encoding="utf-8")
    table = text[text.index("| code | meaning |") :].split("\n\n")[0]
    assert [line.split("`")[1] for line in table.splitlines()[2:]] == list(CODES)


def test_the_work_per_request_does_not_grow_with_the_recording() -> None:
    """A prefix index, not a scan of every earlier request: the function calls per request
    are the same at 20 and at 400 requests of constant size (new lineages that read what
    the first wrote, and conversations of five turns). Counted, not timed: the time is
    the benchmark's (``python -m benchmarks --only cache``)."""
    import cProfile
    import pstats

    from benchmarks.cache import conversations, session

    from headerlock.testing.wire.cache.report import cache_report

    for shape in (session, conversations):
        per_request = []
        for n in (20, 400):
            run = shape(n)
            profile = cProfile.Profile()
            profile.enable()
            report = cache_report(run)
            profile.disable()
            assert report.findings == ()
            per_request.append(pstats.Stats(profile).total_calls / n)  # type: ignore[attr-defined]
        assert per_request[1] <= per_request[0] * 1.02, (shape.__name__, per_request)


@pytest.mark.parametrize(
    ("pieces", "arguments"),
    [
        (['{"path": "a.txt",', ' "n": 2}'], {"path": "a.txt", "n": 2}),
        (['{"b": 1, ', '"a": 2}'], {"b": 1, "a": 2}),
        ([""], {}),  # a tool with no input
        ([], {}),
    ],
)
def test_a_converse_stream_tool_use_is_read_from_its_pieces(
    pieces: list[str], arguments: dict[str, int | str]
) -> None:
    """Bedrock names the call in ``contentBlockStart`` and streams its ``toolUse.input`` as
    JSON text pieces: joined and parsed (keys sorted when read from a recording)."""
    start = {"toolUse": {"toolUseId": "tooluse_1", "name": "read_file"}}
    events = [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Let me look."}}),
        ("contentBlockStart", {"contentBlockIndex": 1, "start": start}),
        *(("contentBlockDelta", {"delta": {"toolUse": {"input": p}}}) for p in pieces),
        ("messageStop", {"stopReason": "tool_use"}),
    ]
    body = aws_eventstream.frames(events)
    response = WireResponse.from_http(200, aws_eventstream.MEDIA_TYPE, body)
    rules = model_api("bedrock.converse").cache
    turn = response_turn(rules, response)
    assert turn is not None and turn.text == "Let me look."
    assert turn.calls == (Call("read_file", arguments),)
    assert list(turn.calls[0].arguments) == list(arguments)  # the order the model emitted
    recorded = response_turn(rules, response, canonical=True)
    assert recorded is not None and list(recorded.calls[0].arguments) == sorted(arguments)
