"""What a lock sets up once or shares (issue 31) follows what it depends on: the secrets
of the environment when it opens, the header rules when none are given, the header lock
while the same file is there."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from headerlock.errors import ConfigError
from headerlock.formats.header_lock import HeaderLock, header_id
from headerlock.formats.wire_recording import WireEntry, WireRecording
from headerlock.testing.wire.header_book import locked
from headerlock.testing.wire.lock import NO_HTTP_RULES, WireLock
from headerlock.testing.wire.request_header import HttpRules

KEY = "sk-test-0123456789abcdef"


def _lock(http_headers: Sequence[str] = ()) -> WireLock:
    return WireLock(
        None,
        mode="all",
        pin=False,
        script=None,
        redact=None,
        redact_env=(),
        http_headers=http_headers,
    )


def test_each_lock_scrubs_the_secrets_of_its_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    one = _lock()
    assert one._scrubber.text(f"Bearer {KEY}") == "Bearer <<secret>>"
    monkeypatch.setenv("OPENAI_API_KEY", KEY + "-rotated")
    rotated = _lock()
    assert rotated._scrubber.text(f"x {KEY}-rotated") == "x <<secret>>"
    assert rotated._scrubber.text(f"x {KEY}") == f"x {KEY}"  # the old key is no secret now
    monkeypatch.setenv("MY_TOKEN", "another-secret-value")
    named = WireLock(None, mode="all", pin=False, script=None, redact=None, redact_env=["MY_TOKEN"])
    assert named._scrubber.text("another-secret-value") == "<<secret>>"
    assert _lock()._scrubber.text("another-secret-value") == "another-secret-value"


def test_a_lock_with_redact_keeps_its_own_scrubber(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    def redact(text: str) -> str:
        return text.replace("alice", "<<user>>")

    redacting = WireLock(None, mode="all", pin=False, script=None, redact=redact, redact_env=())
    assert redacting._scrubber.text(f"alice {KEY}") == "<<user>> <<secret>>"


@pytest.mark.parametrize("given", [(), []])
def test_no_http_headers_are_the_rules_parsed_from_none(given: list[str] | tuple[()]) -> None:
    assert HttpRules.parse(given, where="http_headers") == NO_HTTP_RULES
    assert _lock(http_headers=given)._http_rules == NO_HTTP_RULES
    assert _lock(http_headers=["x-tenant"])._http_rules == HttpRules(add=("x-tenant",))


def test_a_header_lock_that_is_not_a_file_is_named_as_missing(tmp_path: Path) -> None:
    header = {"api": "openai.chat", "config": {}}
    entry = WireEntry(
        api="openai.chat", path="/v1/chat/completions", config={}, system=None, tools=None,
        tool_names=(), prefix_sha256=None, messages=[], header=header_id(header),
    )  # fmt: skip
    recording = WireRecording(False, (entry,))
    where = tmp_path / "headers.lock.yaml"
    message = (
        f"{(tmp_path / 'r.yaml').as_posix()}: its requests refer to the header lock"
        f" {where.as_posix()}, which does not exist; re-record it"
    )
    for directory in (False, True):
        if directory:
            where.mkdir()
        with pytest.raises(ConfigError) as raised:
            locked(tmp_path / "r.yaml", recording, where)
        assert str(raised.value) == message
    where.rmdir()
    where.write_text(HeaderLock({header_id(header): header}).to_text())
    assert locked(tmp_path / "r.yaml", recording, where) == {header_id(header): header}
    where.unlink()
    with pytest.raises(ConfigError):  # the header lock read before is not served
        locked(tmp_path / "r.yaml", recording, where)
