"""A lock's ignore rules: applied to each model request's split, and which ones matched.

The path syntax is ``headerlock.formats.wire_ignore``'s (``config.seed``,
``messages[*].content``, ``tools[*].function.description``). Rules apply to the
request as sent, before ids are tokenized and before anything is compared, so both
sides of a comparison hold ``<<ignored>>`` there. ``checked`` rules (``lock(ignore=)``,
the marker's) must match some request of the lock; unchecked ones (the
``headerlock_ignore`` ini option, shared by every test) are only counted, for the
pytest session to report the ones no test used.

A rule over what the header check exists for (the model, a config key that keys the
provider's cache, the system, the tools) or over the messages turns that check off:
``header_notice`` says so in one line, which the pytest session prints once and a
direct ``lock()`` warns once per process.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import replace

from headerlock.errors import ConfigError
from headerlock.formats.wire_ignore import PREFIX_ROOTS, IgnorePath, ignore_in, parse_ignores
from headerlock.testing.wire import apis
from headerlock.testing.wire.apis import Split


def cache_keys() -> frozenset[str]:
    """Config keys that key some registered provider's prompt cache (the model among them)."""
    return frozenset({"model", *(rule.key for api in apis.REGISTERED for rule in api.cache.keyed)})


def header_notice(path: IgnorePath) -> str | None:
    """The line that says which checks ``path`` turns off, when it reaches into the
    header (model, a cache-keying config key, system, tools) or the messages."""
    first = path.steps[0] if path.steps else None
    if path.root == "config":
        if first is None or first[0] == "keys":
            what = f"every config key (the model and {', '.join(sorted(cache_keys() - {'model'}))})"
        elif first[1] in cache_keys():
            what = "the model" if first[1] == "model" else f"config key {first[1]}"
            what += " (it keys the provider's prompt cache)"
        else:
            return None
    else:
        what = {"system": "the system prompt", "tools": "the tools", "messages": "the messages"}[
            path.root
        ]
    return (
        f"ignore rule {path.text!r} turns off the check of {what} where it reaches: a"
        " change there replays green"
    )


class IgnoreRules:
    """The ignore rules of one lock; thread-safe (requests arrive on many threads)."""

    def __init__(
        self,
        checked: Iterable[object] = (),
        shared: Iterable[object] = (),
        *,
        where: str = "ignore",
    ) -> None:
        self.checked = parse_ignores(checked, where=where)
        own = {p.text for p in self.checked}
        self.shared = tuple(p for p in parse_ignores(shared, where=where) if p.text not in own)
        self.matched: set[str] = set()
        self._guard = threading.Lock()

    @property
    def paths(self) -> tuple[IgnorePath, ...]:
        """Every rule, the checked ones first."""
        return (*self.checked, *self.shared)

    def __bool__(self) -> bool:
        return bool(self.checked or self.shared)

    def refuse_pinned(self) -> None:
        """A pinned recording compares the prefix bytes as sent: no rule may reach into
        the system or the tools."""
        inside = [p for p in self.paths if p.root in PREFIX_ROOTS]
        if inside:
            raise ConfigError(
                f"ignore rule {inside[0].text!r} reaches into the {inside[0].root}"
                " of a pinned recording, whose bytes are compared as sent; ignore config or"
                " messages paths only, or unpin the test",
                key="ignore",
            )

    def apply(self, split: Split) -> Split:
        """``split`` with every value a rule reaches replaced by ``<<ignored>>``."""
        if not self:
            return split
        parts = {
            "config": split.config,
            "system": split.system,
            "tools": split.tools,
            "messages": split.messages,
        }
        hits: list[str] = []
        for path in self.paths:
            parts[path.root], reached = ignore_in(parts[path.root], path.steps)
            if reached:
                hits.append(path.text)
        if hits:
            with self._guard:
                self.matched.update(hits)
        return replace(split, **parts)

    def unmatched(self) -> list[str]:
        """The checked rules no request matched."""
        with self._guard:
            return [p.text for p in self.checked if p.text not in self.matched]


def unmatched_message(paths: Sequence[str], where: str) -> str:
    """What to say about rules that matched nothing."""
    noun = "rule matches" if len(paths) == 1 else "rules match"
    shown = ", ".join(repr(p) for p in paths)
    return (
        f"{where}: ignore {noun} no request of the session: {shown}; a misspelled path"
        " ignores nothing (paths look like config.seed, messages[*].content)"
    )
