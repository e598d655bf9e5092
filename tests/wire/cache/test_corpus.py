"""The planted-break corpus: every code on each API where it applies is found at the
right request, segment and code, from the bytes sent and from the pinned recording;
stable sessions give no finding."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from headerlock import wire
from headerlock.testing.wire.cache.findings import CODES
from tests.model_server import ModelServer
from tests.wire.cache.corpus import (
    APIS,
    BREAKPOINT_APIS,
    BREAKPOINTS_ONLY,
    EXPECTED,
    applies,
    base,
    planted,
    record,
)

CASES = [(code, api) for code in CODES for api in APIS if applies(code, api)]


def where(code: str, api: str) -> tuple[int, str, str]:
    number, segment = EXPECTED[code]
    if code == "prefix-too-short" and api in BREAKPOINT_APIS:
        segment = "system"  # up to its last breakpoint: the system's
    return number, segment, code


def found(report: wire.CacheReport) -> list[tuple[int, str, str]]:
    return [(f.number, f.segment, f.code) for f in report.findings]


def test_every_code_is_planted_on_some_api() -> None:
    assert sorted({code for code, _ in CASES}) == sorted(CODES)
    others = len(APIS) - len(BREAKPOINT_APIS)  # the breakpoint codes apply to none of them
    assert len(CASES) == len(APIS) * len(CODES) - len(BREAKPOINTS_ONLY) * others
    assert {api for _, api in CASES} == set(APIS) and "bedrock.converse" in BREAKPOINT_APIS


@pytest.mark.parametrize(("code", "api"), CASES, ids=[f"{a}-{c}" for c, a in CASES])
def test_a_planted_break_is_found_where_it_is(
    model_server: ModelServer, tmp_path: Path, code: str, api: str
) -> None:
    path = tmp_path / "session.yaml"
    run = record(model_server, api, planted(code, api), path)
    sent = wire.cache_report(run)
    expected = [where(code, api)]
    if code == "no-breakpoint":  # every request above the minimum writes nothing
        expected = [(n, "config", code) for n in (1, 2, 3)]
    assert found(sent) == expected, sent.to_text()
    from_file = wire.cache_report(path)
    assert found(from_file) == found(sent)
    sized = code in ("prefix-too-short", "no-breakpoint")  # their detail counts the messages
    if "messages" not in (f.segment for f in sent.findings) and not sized:
        assert from_file.findings == sent.findings  # the same prefix bytes, the same offsets
    else:  # a recording keeps the messages' data, not their bytes (botocore's spacing)
        assert [f.index for f in from_file.findings] == [f.index for f in sent.findings]
    finding = sent.findings[0]
    assert finding.api == api
    if finding.segment in ("tools", "system", "messages") and code not in (
        "prefix-too-short",
        "no-breakpoint",
        "too-many-breakpoints",
        "breakpoint-lookback",
        "tool-choice-changed",
    ):
        assert finding.offset is not None and finding.before is not None


@pytest.mark.parametrize("api", APIS)
def test_a_stable_session_gives_no_finding(
    model_server: ModelServer, tmp_path: Path, api: str
) -> None:
    run = record(model_server, api, base(api), tmp_path / "stable.yaml")
    report = wire.cache_report(run)
    assert report.findings == (), report.to_text()
    assert [r.shared_percent > 90 for r in report.requests] == [False, True, True]
    assert report.requests[1].predicted > 1024
    assert wire.assert_cache_stable(tmp_path / "stable.yaml").stable


def test_anthropic_agent_pattern_and_sampling_keys_are_no_break(
    model_server: ModelServer, tmp_path: Path
) -> None:
    """The breakpoint moving to the newest block, max_tokens and temperature: no break."""
    reqs = [
        replace(
            r,
            mark_last=True,
            extra={"max_tokens": 100 * r.turn, "extra_body": {"temperature": r.turn / 4}},
        )
        for r in base("anthropic.messages")
    ]
    run = record(model_server, "anthropic.messages", reqs, tmp_path / "agent.yaml")
    report = wire.cache_report(run)
    assert report.findings == (), report.to_text()
    # each request reads all the previous one wrote at its newest block
    sizes = [r.prefix_tokens for r in report.requests]
    assert [r.predicted for r in report.requests] == [0, *sizes[:-1]]
    assert [r.shared_bytes for r in report.requests[1:]] == [
        r.prefix_bytes for r in report.requests[:-1]
    ]


def test_an_unpinned_recording_says_what_it_cannot_see(
    model_server: ModelServer, tmp_path: Path
) -> None:
    added = tmp_path / "added.yaml"
    record(model_server, "openai.chat", planted("tool-added", "openai.chat"), added, pin=False)
    report = wire.cache_report(added)
    assert report.unseen == ("tools", "system")
    assert found(report) == [(3, "tools", "tool-added")]
    assert "not seen: tools, system" in report.to_text()
    moved = tmp_path / "moved.yaml"
    run = record(
        model_server, "openai.chat", planted("system-changed", "openai.chat"), moved, pin=False
    )
    assert found(wire.cache_report(moved)) == []  # the system is not kept
    assert found(wire.cache_report(run)) == [(3, "system", "system-changed")]  # but it was sent
