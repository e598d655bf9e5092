"""The secret table reads the environment through ``os.environ``'s own table (issue 31:
a ``get`` of a variable that is not set raises inside, and a table asks for a dozen).
It must read what ``os.environ.get`` reads, after every change, and the table it gives
must be the one a plain read gives."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings, strategies as st

from headerlock.formats import secrets
from headerlock.formats.secrets import env_secrets, secret_env

NAMES = ("HL_TEST_A", "HL_TEST_B", "OPENAI_API_KEY", "HEADERLOCK_REDACT_ENV", "OPENAI_BASE_URL")
VALUES = st.one_of(
    st.none(),
    st.sampled_from(["", "short", "sk-test-0123456789abcdef", "HL_TEST_A, HL_TEST_B",
                     "https://user:pass-word-123@proxy.example/v1", "é\udcff-surrogate-escaped"]),
)  # fmt: skip


def _plain(name: str) -> str | None:
    return os.environ.get(name)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(NAMES), VALUES), max_size=8))
def test_the_environment_is_read_as_os_environ_get_reads_it(
    changes: list[tuple[str, str | None]],
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        for name in NAMES:
            patch.delenv(name, raising=False)
        for name, value in changes:
            if value is None:
                patch.delenv(name, raising=False)
            else:
                patch.setenv(name, value)
            asked = (*NAMES, "NOT_SET_ANYWHERE", "A=B")
            for name in asked:
                assert secrets._getenv(name) == _plain(name)
            assert env_secrets(asked) == [os.environ[n] for n in asked if os.environ.get(n)]
            fast = secret_env()
            with pytest.MonkeyPatch.context() as plain:
                plain.setattr(secrets, "_getenv", _plain)
                assert secret_env() == fast


def test_a_name_the_environment_cannot_hold_is_its_own_error() -> None:
    with pytest.raises(UnicodeError):
        os.environ.get("X\ud800")
    with pytest.raises(UnicodeError):
        secrets._getenv("X\ud800")
