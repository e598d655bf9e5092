"""The scrub fast path: JSON data proven clean from its text is returned as it is, and
that is exactly what the string-by-string walk gives."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from headerlock.formats.wire_scrub import Scrubber

SECRETS = [
    "sk-live-0123456789abcdef",
    'quote"inside-secret',
    "back\\slash-secret",
    "tab\tsecret-xx",
]
AWS_KEY_ID = "AKIA" + "ABCDEFGHIJKLMNOP"
# text that may hold a secret, a piece of one, or a key shape, in JSON-escaped places too
PIECES = st.sampled_from(
    [*SECRETS, "sk-live-0123", AWS_KEY_ID, "AKIA", "\n", '"', "\\", "é", "\u2028", "plain"]
)
TEXT = st.lists(PIECES | st.text(max_size=6), max_size=4).map("".join)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(value=JSON, secrets=st.lists(st.sampled_from(SECRETS), max_size=3))
def test_the_fast_path_gives_what_the_walk_gives(value: Any, secrets: list[str]) -> None:
    scrubber = Scrubber.of(secrets)
    assert scrubber.json_data(value) == scrubber.data(value)
    if scrubber.untouched(value):
        assert scrubber.data(value) == value


@pytest.mark.parametrize(
    "value",
    [
        {"content": "key sk-live-0123456789abcdef here"},
        ["a", {"nested": ["x", "line\nsk-live-0123456789abcdef"]}],
        {"sk-live-0123456789abcdef": 1},  # a mapping key
        {"text": f"aws {AWS_KEY_ID} id"},
        {"text": f"line\n{AWS_KEY_ID}"},
    ],
)
def test_data_holding_a_secret_or_key_shape_is_walked(value: Any) -> None:
    scrubber = Scrubber.of(["sk-live-0123456789abcdef"])
    assert not scrubber.untouched(value)
    assert "<<secret>>" in repr(scrubber.json_data(value))


def test_clean_data_is_copied_as_it_is() -> None:
    value = {"messages": [{"role": "user", "content": 'line one\nline "two"'}]}
    scrubber = Scrubber.of(["sk-live-0123456789abcdef"])
    assert scrubber.untouched(value)
    copy = scrubber.json_data(value)
    assert copy == value and copy is not value  # a caller may keep it while value changes
    assert copy["messages"][0] is not value["messages"][0]


def test_a_redact_callable_or_an_escaped_secret_turns_the_fast_path_off() -> None:
    value = {"content": "nothing secret"}
    assert not Scrubber.of([], redact=str.upper).untouched(value)
    assert Scrubber.of([], redact=str.upper).json_data(value) == {"CONTENT": "NOTHING SECRET"}
    escaped = Scrubber.of(['quote"inside-secret'])
    assert not escaped.untouched(value)  # its form holds '"', which JSON text escapes
    assert escaped.json_data({"c": 'x quote"inside-secret'}) == {"c": "x <<secret>>"}
