"""A request's header as a header lock keeps it: what is locked and what never is."""

from __future__ import annotations

import json
from typing import Any

import pytest

from headerlock.errors import ConfigError
from headerlock.formats.header_lock import header_id
from headerlock.formats.wire_scrub import Scrubber
from headerlock.testing.wire.apis import model_api
from headerlock.testing.wire.request_header import HttpRules, request_header

BODY = json.dumps(
    {
        "model": "gpt-test",
        "temperature": 0,
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "search", "parameters": {}}}],
    }
).encode()
SENT = (
    ("User-Agent", "OpenAI/Python 2.3.0"),
    ("X-Stainless-Retry-Count", "0"),
    ("Idempotency-Key", "stainless-python-retry-1"),
    ("Authorization", "Bearer sk-test-not-a-real-key-0001"),
    ("OpenAI-Beta", "assistants=v2"),
    ("X-Tenant", "acme"),
)
NO_RULES = HttpRules()
QUERY = "api-version=2024-10-21&key=AIzaNotARealKey&X-Amz-Signature=abc&X-Amz-Date=20260101"


def header(
    rules: HttpRules = NO_RULES, headers: tuple[tuple[str, str], ...] = SENT
) -> dict[str, Any]:
    split = model_api("openai.chat").split(BODY)
    found = request_header(
        split,
        path="/openai/deployments/d/chat/completions",
        headers=headers,
        query=QUERY,
        scrubber=Scrubber(),
        rules=rules,
    )
    assert found.id == header_id(found.data)
    assert found.config_keys == frozenset({"model"})  # temperature stays with the request
    return dict(found.data)


def test_semantic_headers_and_query_are_locked_and_nothing_per_request_or_secret() -> None:
    data = header()
    assert data["http"] == {"openai-beta": "assistants=v2"}
    assert data["query"] == {"api-version": "2024-10-21"}
    assert data["config"] == {"model": "gpt-test"}
    assert data["system"] == [{"role": "system", "content": "Be brief."}]
    changed = (("User-Agent", "OpenAI/Python 9.9.9"), *SENT[1:])
    assert header(headers=changed) == data  # a new SDK version is the same header


def test_a_test_can_lock_one_more_header_or_drop_one() -> None:
    rules = HttpRules.parse(["X-Tenant", "-openai-beta"], where="test")
    assert header(rules)["http"] == {"x-tenant": "acme"}


@pytest.mark.parametrize("value", ["x-api-key", "-Authorization", "", "a b", 3])
def test_a_credential_or_malformed_header_rule_is_refused(value: object) -> None:
    with pytest.raises(ConfigError, match="http_headers"):
        HttpRules.parse([value], where="test")  # type: ignore[list-item]
