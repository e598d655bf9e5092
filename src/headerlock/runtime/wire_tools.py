"""Model-API tool lists in the deterministic order, with canonical key order.

An agent that passes its tools through :func:`order_wire_tools` before each
request sends the same bytes whatever order its framework registered them in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from headerlock.errors import WireToolError
from headerlock.runtime.canonical import canonical_json, code_unit_key
from headerlock.runtime.tool_order import (
    TOOL_ORDER_REST,
    reject_reserved_name,
    reject_unregistered,
    validate_tool_order,
)

_SCALARS = (str, int, float, bool, type(None))


def wire_tool_name(tool: Any, index: int = 0) -> str:
    """The name of an OpenAI chat, OpenAI responses or Anthropic tool dict.

    OpenAI chat: ``{"type": "function", "function": {"name": ...}}``; OpenAI
    responses: ``{"type": "function", "name": ...}``; Anthropic:
    ``{"name": ..., "input_schema": ...}`` (or a named server tool). Raises
    ``WireToolError`` naming ``tools[index]`` for any other shape.
    """
    where = f"tools[{index}]"
    if not isinstance(tool, Mapping):
        raise WireToolError(
            f"{where}: expected a tool dict, got {type(tool).__name__}", index=index
        )
    if "function" in tool:
        function = tool["function"]
        if tool.get("type") != "function" or not isinstance(function, Mapping):
            raise WireToolError(
                f'{where}: an OpenAI chat tool is {{"type": "function", "function": {{...}}}}',
                index=index,
            )
        name = function.get("name")
    else:
        name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise WireToolError(
            f"{where}: not an OpenAI chat, OpenAI responses or Anthropic tool"
            f" (no name); keys: {', '.join(sorted(map(str, tool)))}",
            index=index,
        )
    return name


def _canonical(value: Any, where: str, index: int, name: str) -> Any:
    """A copy with every dict's keys sorted; lists (and tuples) keep their order."""
    if isinstance(value, Mapping):
        keys = list(value)
        for key in keys:
            if not isinstance(key, str):
                raise WireToolError(
                    f"tools[{index}] ({name}): key {key!r} at {where or 'the top'} is not a string",
                    index=index,
                    name=name,
                )
        prefix = f"{where}." if where else ""
        return {k: _canonical(value[k], f"{prefix}{k}", index, name) for k in sorted(keys)}
    if isinstance(value, (list, tuple)):
        return [_canonical(v, f"{where}[{i}]", index, name) for i, v in enumerate(value)]
    if isinstance(value, _SCALARS):
        return value
    hint = " (a set has no order; use a sorted list)" if isinstance(value, set | frozenset) else ""
    kind = type(value).__name__
    raise WireToolError(
        f"tools[{index}] ({name}): {kind} at {where or 'the top'} is not JSON{hint}",
        index=index,
        name=name,
    )


def order_wire_tools(
    tools: Sequence[Mapping[str, Any]],
    tool_order: Sequence[str] | None = None,
    *,
    known_names: Iterable[str] | None = None,
) -> list[dict[str, Any]]:
    """``tools`` in the deterministic order, each as a new dict with sorted keys.

    Without ``tool_order``: code-unit order of names (UTF-16, as JavaScript
    compares). With it: listed tools at their positions and every other tool
    at the ``<unlisted-tools>`` rest entry, in code-unit order. Same-named tools
    are ordered by their canonical JSON. Lists inside a schema keep their
    order. ``known_names`` (default: the names in ``tools``) are the names a
    ``tool_order`` entry may list, e.g. every tool of an agent when a step
    sends only some. Raises ``WireToolError`` for an unknown tool shape and
    ``ToolOrderError`` for a malformed or unsatisfiable ``tool_order``.
    """
    policy = validate_tool_order(tool_order)
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        raise WireToolError(f"tools must be a list of tool dicts, got {type(tools).__name__}")
    named: list[tuple[bytes, str, str, dict[str, Any]]] = []
    for index, tool in enumerate(tools):
        name = wire_tool_name(tool, index)
        canonical = _canonical(tool, "", index, name)
        named.append((code_unit_key(name), canonical_json(canonical), name, canonical))
    names = [entry[2] for entry in named]
    reject_reserved_name(names)
    named.sort(key=lambda entry: entry[:2])
    if policy is None:
        return [tool for *_, tool in named]
    reject_unregistered(policy, names if known_names is None else known_names)
    by_entry: dict[str, list[dict[str, Any]]] = {entry: [] for entry in policy}
    rest = by_entry[TOOL_ORDER_REST]
    for _, _, name, tool in named:
        by_entry.get(name, rest).append(tool)
    return [tool for entry in policy for tool in by_entry[entry]]
