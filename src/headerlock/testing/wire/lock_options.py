"""What ``lock()`` accepts, checked once: its keywords, by name and value.

``lock()`` calls ``lock_options``, and so does the ``headerlock_wire`` fixture with its
marker's keywords (they are ``lock()``'s keywords, passed straight through, as respx and
pytest-recording pass theirs). A bad keyword or value is one ``ConfigError`` line that
names where it was written, the keyword and what is valid.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from headerlock.errors import ConfigError
from headerlock.formats.wire_ignore import parse_ignores
from headerlock.testing.wire.record_mode import DEFAULT, RecordMode, record_mode
from headerlock.testing.wire.request_header import HttpRules

if TYPE_CHECKING:
    from headerlock.formats.wire_scrub import Redact
    from headerlock.runtime.adapters.scripted import ReplySpec


@dataclass(frozen=True, slots=True)
class LockOptions:
    """``lock()``'s keywords, checked (defaults: ``lock()``'s)."""

    mode: RecordMode = DEFAULT
    pin: bool = False
    script: Sequence[ReplySpec] | None = None
    redact: Redact | None = None
    redact_env: tuple[str, ...] = ()
    allow_hosts: tuple[str, ...] = ()
    record_errors: bool = False
    ignore: tuple[str, ...] = ()
    pending: bool = False
    header_lock: Path | None = None
    http_headers: tuple[str, ...] = ()

    def keywords(self) -> dict[str, Any]:
        """The options as ``WireLock``'s keywords."""
        return {name: getattr(self, name) for name in KEYWORDS}


KEYWORDS: Final = tuple(LockOptions.__slots__)
"""``lock()``'s keywords (after its path)."""


def lock_options(
    given: Mapping[str, Any],
    *,
    where: str,
    owned: Mapping[str, str] | None = None,
    also: Collection[str] = (),
) -> LockOptions:
    """``given`` checked and normalised. ``where`` starts every error (``lock()``, a
    test's marker); ``owned`` maps a keyword the caller sets itself to what sets it
    instead; ``also`` names the caller's own keywords (left in ``given``, not checked)."""
    owned = owned or {}
    valid = sorted({*KEYWORDS, *also} - set(owned))
    for name in sorted(given):
        if name in owned:
            raise ConfigError(f"{where}: {name} is not set here; {owned[name]} sets it", key=name)
        if name not in valid:
            raise ConfigError(
                f"{where}: unknown keyword {name!r}; expected one of {', '.join(valid)}",
                key=name,
            )
    values = {k: v for k, v in given.items() if k in KEYWORDS}
    return LockOptions(**{name: _CHECKS[name](where, values[name]) for name in values})


def _mode(where: str, value: object) -> RecordMode:
    return record_mode(value, where=f"{where}: mode")


def _flag(name: str) -> Any:
    def check(where: str, value: object) -> bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: {name} must be True or False, got {value!r}", key=name)
        return value

    return check


def _string_list(name: str, what: str) -> Any:
    def check(where: str, value: object) -> tuple[str, ...]:
        items = None if isinstance(value, str | bytes | Mapping) else _listed(value)
        if items is None or not all(isinstance(item, str) and item for item in items):
            raise ConfigError(f"{where}: {name} must be a list of {what}, got {value!r}", key=name)
        return tuple(str(item) for item in items)

    return check


def _listed(value: object) -> tuple[object, ...] | None:
    """The items of a list, tuple or other iterable (``None``: not one)."""
    if isinstance(value, set | frozenset):  # sorted: no hash seed in the order
        return tuple(sorted(value, key=str))
    return tuple(value) if isinstance(value, list | tuple) else None


def _script(where: str, value: object) -> Sequence[ReplySpec] | None:
    if value is not None and (isinstance(value, str) or not isinstance(value, list | tuple)):
        raise ConfigError(
            f"{where}: script must be a list of replies (text, tool calls), got {value!r}",
            key="script",
        )
    return value


def _redact(where: str, value: object) -> Redact | None:
    if value is not None and not callable(value):
        raise ConfigError(
            f"{where}: redact must be a callable taking and returning a string, got {value!r}",
            key="redact",
        )
    return value


def _ignore(where: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, str | list | tuple):
        raise ConfigError(f"{where}: ignore is a list of paths, got {value!r}", key="ignore")
    return tuple(rule.text for rule in parse_ignores(value, where=f"{where}: ignore"))


def _header_lock(where: str, value: object) -> Path | None:
    if value is not None and not isinstance(value, str | os.PathLike):
        raise ConfigError(
            f"{where}: header_lock must be a path or None, got {value!r}", key="header_lock"
        )
    return None if value is None else Path(value)


def _http_headers(where: str, value: object) -> tuple[str, ...]:
    HttpRules.parse(value, where=where)  # type: ignore[arg-type]  # it checks the type
    return tuple(str(item) for item in value)  # type: ignore[attr-defined]  # checked


_CHECKS: Final[dict[str, Any]] = {
    "mode": _mode,
    "pin": _flag("pin"),
    "script": _script,
    "redact": _redact,
    "redact_env": _string_list("redact_env", "environment variable names"),
    "allow_hosts": _string_list("allow_hosts", "host names"),
    "record_errors": _flag("record_errors"),
    "ignore": _ignore,
    "pending": _flag("pending"),
    "header_lock": _header_lock,
    "http_headers": _http_headers,
}
