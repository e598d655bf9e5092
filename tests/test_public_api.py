"""The exported members of ``headerlock``."""

from __future__ import annotations

import headerlock


def test_all_is_sorted_and_complete() -> None:
    exported = headerlock.__all__
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), n))
    public = {n for n in dir(headerlock) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(headerlock, n)).__name__ == "module"}
    assert set(exported) == public - modules


def test_exported_members_come_from_headerlock() -> None:
    for name in headerlock.__all__:
        member = getattr(headerlock, name)
        module = getattr(member, "__module__", "headerlock")
        assert module.startswith("headerlock"), name


def test_error_tree() -> None:
    assert issubclass(headerlock.ToolOrderError, headerlock.ConfigError)
    assert issubclass(headerlock.ConfigError, headerlock.HeaderlockError)
    assert issubclass(headerlock.ConfigError, ValueError)
    assert issubclass(headerlock.ToolRegistrationError, headerlock.HeaderlockError)
