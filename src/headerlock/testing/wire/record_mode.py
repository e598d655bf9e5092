"""The one record vocabulary: ``none | new | all``, the same on ``lock(mode=...)``, the
``headerlock_wire`` marker's ``mode=``, ``--headerlock-record``, the ini key
``headerlock_record`` and ``headerlock record --record``.

- ``none`` (the default): replay; a missing recording is an error.
- ``new``: record what has no recording yet, replay the rest.
- ``all``: record everything again.

Aliases, kept because tests already say them: ``replay`` = ``none``, ``record`` =
``all`` (and pytest's ``--snapshot-update`` = ``all``). ``record_mode`` is the one check
every place calls, so a name one place knows is known to all of them.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

from headerlock.errors import ConfigError

RecordMode = Literal["none", "new", "all"]
"""A record mode by its name."""
ModeName = Literal["none", "new", "all", "replay", "record"]
"""What a user may write: a record mode or an alias."""
RECORD_MODES: Final[tuple[RecordMode, ...]] = get_args(RecordMode)
ALIASES: Final[dict[str, RecordMode]] = {"replay": "none", "record": "all"}
DEFAULT: Final[RecordMode] = "none"
VALID: Final = "none, new or all (aliases: replay = none, record = all)"
"""The valid names, as every error says them."""


def record_mode(value: object, *, where: str = "") -> RecordMode:
    """``value`` (a mode or an alias) as its record mode; anything else raises
    ``ConfigError`` naming ``where`` (the key or option), the value and the valid names."""
    if isinstance(value, str):
        if value in RECORD_MODES:
            return value
        if value in ALIASES:
            return ALIASES[value]
    head = f"{where} = {value!r}" if where else repr(value)
    raise ConfigError(f"{head}: expected a record mode: {VALID}", key="mode")


def records(mode: RecordMode, *, exists: bool) -> bool:
    """Whether ``mode`` records a test whose recording ``exists`` (or not)."""
    return mode == "all" or (mode == "new" and not exists)
