"""Ignore rules: paths into a model request whose values are never compared.

A rule is a path over the request as sent, split the way a wire recording keeps it::

    path   := root step*
    root   := config | system | tools | messages
    step   := .NAME      a key of a mapping (any characters but . [ ])
            | .*         every key of a mapping
            | [N]        the N-th item of a list (0-based)
            | [*]        every item of a list

for example ``config.seed``, ``config.metadata.*``, ``messages[*].content``,
``messages[0].content``, ``tools[*].function.description``. A rule must step into its
root, as the request's shape allows: ``config`` is a mapping (``config.NAME``,
``config.*``), ``messages`` and ``tools`` are lists (``[N]``, ``[*]``); a whole segment
(``config``, ``system``, ``tools``, ``messages`` alone) is refused. A value a rule reaches
is written as ``<<ignored>>`` (so a re-record does not churn) and compares equal
to every other ignored value. A rule that reaches nothing is kept as unmatched, so
a misspelled one can be reported instead of silently disabling nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from headerlock.errors import ConfigError
from headerlock.formats.placeholders import IGNORED

ROOTS: Final = ("config", "system", "tools", "messages")
PREFIX_ROOTS: Final = frozenset({"system", "tools"})
"""Roots a pinned recording keeps as raw bytes too: ignoring inside them is refused."""
_STEP: Final = re.compile(r"\.(?P<key>[^.\[\]]+)|\[(?P<index>\*|\d+)\]")

Step = tuple[str, str | int]
"""``("key", name)``, ``("keys", "*")``, ``("index", n)`` or ``("items", "*")``."""


@dataclass(frozen=True, slots=True)
class IgnorePath:
    """One parsed ignore rule: its text, the request part it starts in, its steps."""

    text: str
    root: str
    steps: tuple[Step, ...]


def parse_ignore(text: object, *, where: str = "ignore") -> IgnorePath:
    """Parse one rule; a malformed one is a ``ConfigError`` naming it and the syntax."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"{where}: an ignore rule is a path string, got {text!r}", key=where)
    root = re.split(r"[.\[]", text, maxsplit=1)[0]
    if root not in ROOTS:
        raise ConfigError(
            f"{where}: ignore rule {text!r} must start with one of {', '.join(ROOTS)}"
            " (for example config.seed, messages[*].content)",
            key=where,
        )
    rest, position, steps = text[len(root) :], 0, []
    while position < len(rest):
        found = _STEP.match(rest, position)
        if found is None:
            raise ConfigError(
                f"{where}: ignore rule {text!r} has a bad step at {rest[position:]!r};"
                " steps are .key, .*, [N] or [*]",
                key=where,
            )
        key, index = found.group("key"), found.group("index")
        if key is not None:
            steps.append(("keys", "*") if key == "*" else ("key", key))
        else:
            steps.append(("items", "*") if index == "*" else ("index", int(index)))
        position = found.end()
    _check_shape(text, root, tuple(steps), where)
    return IgnorePath(text, root, tuple(steps))


_EXAMPLES: Final = {
    "config": "config.seed, config.metadata.*",
    "system": "system[0].content",
    "tools": "tools[*].function.description",
    "messages": "messages[*].content",
}
_FIRST_STEP: Final = {
    "config": ("key", "keys"),
    "tools": ("index", "items"),
    "messages": ("index", "items"),
}


def _check_shape(text: str, root: str, steps: tuple[Step, ...], where: str) -> None:
    """Refuse a rule the request's shape rules out: a whole segment, a list step into
    ``config`` (a mapping), a key step into ``tools`` or ``messages`` (lists)."""
    if not steps:
        raise ConfigError(
            f"{where}: ignore rule {text!r} would ignore the whole {root} segment, which"
            " headerlock does not support (it would compare nothing there); name what to"
            f" ignore inside it, e.g. {_EXAMPLES[root]}",
            key=where,
        )
    allowed = _FIRST_STEP.get(root)
    if allowed is not None and steps[0][0] not in allowed:
        shape = "a mapping: .NAME or .*" if root == "config" else "a list: [N] or [*]"
        raise ConfigError(
            f"{where}: ignore rule {text!r} does not fit the request: {root} is {shape}"
            f" (e.g. {_EXAMPLES[root]})",
            key=where,
        )


def parse_ignores(rules: Iterable[object], *, where: str = "ignore") -> tuple[IgnorePath, ...]:
    """Parse a list of rules (a bare string is refused: it is not a list)."""
    if isinstance(rules, str):
        raise ConfigError(f"{where} is a list of paths, got {rules!r}", key=where)
    parsed: dict[str, IgnorePath] = {}
    for rule in rules:
        path = parse_ignore(rule, where=where)
        parsed.setdefault(path.text, path)
    return tuple(parsed.values())


def ignore_in(value: Any, steps: tuple[Step, ...]) -> tuple[Any, bool]:
    """A copy of ``value`` with what ``steps`` reach replaced by ``<<ignored>>``, and
    whether anything was reached (``value`` itself is never edited)."""
    if not steps:
        return IGNORED, True
    (kind, arg), rest = steps[0], steps[1:]
    if isinstance(value, Mapping) and kind in ("key", "keys"):
        names = [k for k in value if kind == "keys" or k == arg]
        copy, hit = dict(value), False
        for name in names:
            copy[name], reached = ignore_in(value[name], rest)
            hit = hit or reached
        return (copy, True) if hit else (value, False)
    if isinstance(value, (list, tuple)) and kind in ("index", "items"):
        positions = range(len(value)) if kind == "items" else [arg]
        items, hit = list(value), False
        for n in positions:
            assert isinstance(n, int)
            if 0 <= n < len(items):
                items[n], reached = ignore_in(value[n], rest)
                hit = hit or reached
        return (items, True) if hit else (value, False)
    return value, False
