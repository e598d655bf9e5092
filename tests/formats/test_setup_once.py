"""Secret tables are built once per environment, and follow every change of it."""

from __future__ import annotations

import pytest

from headerlock.formats import secrets
from headerlock.formats.scrub import find_secret
from headerlock.formats.secrets import add_signing_secrets, redact_env, secret_env
from headerlock.formats.wire_scrub import Scrubber

KEY = "sk-test-0123456789abcdef"


def test_a_changed_environment_changes_the_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("MY_TOKEN", raising=False)
    assert secret_env()[KEY] == "OPENAI_API_KEY"
    assert find_secret({"a": f"x{KEY}"}) == ("a", "OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_API_KEY", KEY + "-rotated")
    assert KEY not in secret_env() and secret_env()[KEY + "-rotated"] == "OPENAI_API_KEY"
    assert find_secret({"a": f"x{KEY}-rotated"}) == ("a", "OPENAI_API_KEY")
    monkeypatch.setenv("MY_TOKEN", "another-secret-value")
    assert "another-secret-value" not in secret_env()
    undo = redact_env(["MY_TOKEN"])
    try:
        assert secret_env()["another-secret-value"] == "MY_TOKEN"
    finally:
        undo()
    assert "another-secret-value" not in secret_env()
    monkeypatch.setenv("HEADERLOCK_REDACT_ENV", "MY_TOKEN")
    assert secret_env()["another-secret-value"] == "MY_TOKEN"
    monkeypatch.setenv("OPENAI_BASE_URL", "https://user:pass-word-123@proxy.example/v1")
    assert "pass-word-123" in secret_env()


def test_a_signing_secret_added_later_is_a_secret() -> None:
    before = secret_env()
    add_signing_secrets(["signing-secret-added-later"])
    try:
        assert "signing-secret-added-later" not in before
        assert "signing-secret-added-later" in secret_env()
    finally:
        secrets._signing.remove("signing-secret-added-later")


def test_the_table_is_a_copy_callers_may_change(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    secret_env().clear()
    assert KEY in secret_env()


def test_scrubbers_of_the_same_secrets_share_their_forms() -> None:
    one, two = Scrubber.of([KEY]), Scrubber.of([KEY])
    assert one.forms is two.forms  # computed once per process, not per lock
    assert one.text(f"Bearer {KEY}") == "Bearer <<secret>>" == two.text(f"Bearer {KEY}")
    other = Scrubber.of([KEY + "-other"])
    assert other.text(f"{KEY}-other") == "<<secret>>"


def test_a_requests_secrets_follow_the_registry_and_the_signing_secrets() -> None:
    from dataclasses import replace

    from headerlock.formats import vocabulary_source, wire_vocabulary
    from headerlock.formats.secrets import request_secrets

    headers = (("x-toy-credential", "toy-secret-value-123"),)
    assert "toy-secret-value-123" not in request_secrets(headers, "http://h/v1")
    before = wire_vocabulary.vocabulary()
    toy = replace(
        before,
        credentials=replace(before.credentials, headers=("x-toy-credential",)),
    )
    vocabulary_source.SOURCES.insert(0, lambda: toy)
    try:
        assert "toy-secret-value-123" in request_secrets(headers, "http://h/v1")
    finally:
        vocabulary_source.SOURCES.pop(0)
    assert "toy-secret-value-123" not in request_secrets(headers, "http://h/v1")
    add_signing_secrets(["signing-secret-for-a-request"])
    try:
        assert "signing-secret-for-a-request" in request_secrets(headers, "http://h/v1")
    finally:
        secrets._signing.remove("signing-secret-for-a-request")


def test_held_secrets_read_the_environment_once_for_this_thread_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading

    from headerlock.formats.secrets import held_secrets, secret_values

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    seen: list[bool] = []
    with held_secrets() as table:
        assert table[KEY] == "OPENAI_API_KEY"
        monkeypatch.setenv("OPENAI_API_KEY", KEY + "-rotated")
        assert KEY in secret_env() and KEY in secret_values()  # the table of the block's start
        assert find_secret({"a": KEY}) == ("a", "OPENAI_API_KEY")
        other = threading.Thread(target=lambda: seen.append(KEY + "-rotated" in secret_env()))
        other.start()
        other.join()
        with held_secrets() as inner:  # a nested block keeps the outer table
            assert KEY in inner
        assert KEY in secret_env()
    assert seen == [True]  # another thread reads the environment as it is
    assert KEY not in secret_env() and KEY + "-rotated" in secret_env()
