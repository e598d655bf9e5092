"""How two tool lists differ by name: removed, added, and the order of the rest.

The one comparison behind every message that names tools: a replay's differences,
the explainer, the order check, the pin guard and the cache report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from headerlock.runtime.canonical import code_unit_key


@dataclass(frozen=True, slots=True)
class ToolSetChange:
    """``before`` and ``after`` are the names both lists have, each in its own order."""

    removed: tuple[str, ...]
    added: tuple[str, ...]
    before: tuple[str, ...]
    after: tuple[str, ...]

    @property
    def reordered(self) -> bool:
        """Whether the names both lists have come in another order."""
        return self.before != self.after

    @property
    def same_set(self) -> bool:
        """The same names, none added or removed (perhaps in another order)."""
        return not self.removed and not self.added

    @property
    def sorted_now(self) -> bool:
        """Whether the common names now come in the RFC order (by name, in UTF-16 code
        units) and did not before: an order fixed since, not a flake."""
        return self.reordered and _rfc_order(self.after) and not _rfc_order(self.before)

    @property
    def first_moved(self) -> str | None:
        """The first common name (in ``before``) whose position changed."""
        pairs = zip(self.before, self.after, strict=True)
        return next((a for a, b in pairs if a != b), None)

    @property
    def first_changed(self) -> str | None:
        """The first removed name, else the first added one."""
        return (*self.removed, *self.added, None)[0]

    def membership(self) -> list[str]:
        """``["removed a, b", "added c"]`` (empty when the sets are the same)."""
        parts = [f"removed {', '.join(self.removed)}"] if self.removed else []
        return parts + ([f"added {', '.join(self.added)}"] if self.added else [])

    def order(self) -> str:
        """``a, b -> b, a``: the common names before and after."""
        return f"{', '.join(self.before)} -> {', '.join(self.after)}"


def _rfc_order(names: Sequence[str]) -> bool:
    keys = [code_unit_key(name) for name in names]
    return keys == sorted(keys)


def compare_tool_names(old: Sequence[str], new: Sequence[str]) -> ToolSetChange:
    """How the tool names ``new`` differ from ``old``."""
    kept, now = set(new), set(old)
    return ToolSetChange(
        removed=tuple(n for n in old if n not in kept),
        added=tuple(n for n in new if n not in now),
        before=tuple(n for n in old if n in kept),
        after=tuple(n for n in new if n in now),
    )
