"""File-safe, reversible names of Python-test recordings."""

from __future__ import annotations

from pathlib import Path, PurePath

import pytest
from hypothesis import given, strategies as st

from headerlock.testing.plugin.names import (
    MAX_PART,
    decode_part,
    encode_part,
    module_key,
    name_in_file,
    python_recording_path,
)

SAFE = set("abcdefghijklmnopqrstuvwxyz0123456789_-.+%~")
names = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40)


@given(names)
def test_encoding_round_trips_and_is_lowercase_and_file_safe(name: str) -> None:
    encoded = encode_part(name)
    assert len(encoded) <= MAX_PART
    assert decode_part(encoded) == (name if "~" not in encoded else None)
    assert set(encoded) <= SAFE and encoded == encoded.lower()
    assert not encoded.startswith(".") and not encoded.endswith(".")


@given(names, names)
def test_distinct_names_never_share_a_file_even_case_folded(a: str, b: str) -> None:
    if a != b:
        assert encode_part(a).casefold() != encode_part(b).casefold()


@pytest.mark.parametrize(
    ("name", "encoded"),
    [
        ("test_agent", "test_agent"),
        ("test_Agent", "test_+agent"),
        ("test_x[a b]", "test_x%5ba%20b%5d"),
        ("test_x[a-b]", "test_x%5ba-b%5d"),
        ("TestGroup.test_y", "+test+group.test_y"),
        ("..", "%2e%2e"),
        ("con", "%63on"),
        ("nul.txt", "%6eul.txt"),
        ("a/b\\c", "a%2fb%5cc"),
        ("é", "%c3%a9"),
        ("É", "%c3%89"),
        ("x+y%z~", "x%2by%25z%7e"),
    ],
)
def test_examples(name: str, encoded: str) -> None:
    assert encode_part(name) == encoded
    assert decode_part(encoded) == name


def test_a_long_name_keeps_a_prefix_and_a_hash() -> None:
    long_a, long_b = "test_" + "a" * 300, "test_" + "a" * 299 + "b"
    assert len(encode_part(long_a)) == MAX_PART
    assert encode_part(long_a) != encode_part(long_b)
    assert "~" in encode_part(long_a) and decode_part(encode_part(long_a)) is None


def test_foreign_and_empty_names() -> None:
    assert decode_part("Upper") is None and decode_part("a%zz") is None
    assert decode_part("%2fetc") == "/etc"
    with pytest.raises(ValueError, match="empty"):
        encode_part("")


def test_the_recording_path_of_a_test(tmp_path: Path) -> None:
    module = module_key(tmp_path / "tests" / "Unit" / "test_agent.py", tmp_path)
    assert module == PurePath("tests/+unit/test_agent")
    name = name_in_file(["TestGroup", "test_y[a b]"])
    path = python_recording_path(Path("recordings"), module, name)
    assert path.as_posix() == "recordings/tests/+unit/test_agent/+test+group.test_y%5ba%20b%5d.yaml"
