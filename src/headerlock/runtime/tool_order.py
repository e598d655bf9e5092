"""The deterministic model-side tool order (pure functions, no I/O)."""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable, Sequence
from typing import Final

from headerlock.errors import ToolOrderError
from headerlock.runtime.canonical import canonical_json, code_unit_key
from headerlock.runtime.tools import ToolSchema

TOOL_ORDER_REST: Final = "<unlisted-tools>"
"""The mandatory rest entry of a ``tool_order``: where unlisted tools go."""


def validate_tool_order(tool_order: Sequence[str] | None) -> tuple[str, ...] | None:
    """Check a policy's shape and return it as a tuple (``None`` stays ``None``).

    Raises ``ToolOrderError`` for a non-list, a non-string entry, a name listed
    twice (checked first) or a missing rest entry.
    """
    if tool_order is None:
        return None
    if isinstance(tool_order, (str, bytes)) or not isinstance(tool_order, Sequence):
        raise ToolOrderError(
            f"tool_order must be a list of tool names, got {type(tool_order).__name__}"
            f" {tool_order!r}",
            kind="type",
        )
    seen: set[str] = set()
    for position, name in enumerate(tool_order):
        if not isinstance(name, str):
            raise ToolOrderError(
                f"tool_order[{position}] must be a tool name (string), got {name!r}",
                kind="type",
                names=[str(name)],
            )
        if name in seen:
            raise ToolOrderError(
                f'tool_order lists "{name}" more than once', kind="duplicate", names=[name]
            )
        seen.add(name)
    if TOOL_ORDER_REST not in seen:
        raise ToolOrderError(
            f'tool_order must contain the "{TOOL_ORDER_REST}" rest entry'
            " (where unlisted tools are inserted)",
            kind="missing-rest",
        )
    return tuple(tool_order)


def reject_reserved_name(names: Iterable[str]) -> None:
    """Raise ``ToolOrderError`` when a collected tool uses the rest entry's name."""
    if TOOL_ORDER_REST in names:
        raise ToolOrderError(
            f'tool provider returned reserved tool name "{TOOL_ORDER_REST}"'
            " (reserved for tool_order's rest entry)",
            kind="reserved",
            names=[TOOL_ORDER_REST],
        )


def reject_unregistered(tool_order: Sequence[str], known_names: Iterable[str]) -> None:
    """Raise ``ToolOrderError`` naming every listed name that is not known."""
    known = set(known_names)
    unknown = [n for n in tool_order if n != TOOL_ORDER_REST and n not in known]
    if not unknown:
        return
    noun = "tool" if len(unknown) == 1 else "tools"
    listed = ", ".join(f'"{n}"' for n in unknown)
    known_text = ", ".join(sorted(known, key=code_unit_key)) or "(none)"
    raise ToolOrderError(
        f"tool_order lists unregistered {noun} {listed}; known tools: {known_text}",
        kind="unregistered",
        names=unknown,
    )


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_name = operator.attrgetter("name")


def _canonical_key(tool: ToolSchema) -> tuple[bytes, str]:
    return code_unit_key(tool.name), canonical_json(tool.to_data())


def _sorted_tools(tools: list[ToolSchema], names: list[str]) -> list[ToolSchema]:
    """Code-unit order of names; same-named tools (from two providers) are ordered
    by their canonical serialization, never by collection order."""
    if len(set(names)) < len(names):
        return sorted(tools, key=_canonical_key)
    # Code-unit and code-point order differ only for characters beyond U+FFFF.
    if _ASTRAL.search("".join(names)):
        return sorted(tools, key=lambda t: code_unit_key(t.name))
    return sorted(tools, key=_name)


def order_tools(
    tools: Iterable[ToolSchema],
    tool_order: Sequence[str] | None = None,
    *,
    known_names: Iterable[str] | None = None,
) -> tuple[ToolSchema, ...]:
    """Return ``tools`` in the authoritative model-side order.

    Without ``tool_order``: code-unit order of names. With it: listed tools at
    their listed positions, every other tool at the rest entry in code-unit
    order. ``known_names`` (default: the names of ``tools``) are the names a
    listed entry may refer to. Never drops a tool.
    """
    tools = list(tools)
    names = [t.name for t in tools]
    reject_reserved_name(names)
    policy = validate_tool_order(tool_order)
    collected = _sorted_tools(tools, names)
    if policy is None:
        return tuple(collected)
    reject_unregistered(policy, names if known_names is None else known_names)
    by_entry: dict[str, list[ToolSchema]] = {entry: [] for entry in policy}
    rest = by_entry[TOOL_ORDER_REST]
    for tool in collected:
        by_entry.get(tool.name, rest).append(tool)
    return tuple(tool for entry in policy for tool in by_entry[entry])
