"""Model-API tool lists in the deterministic order, with canonical key order.

An agent that passes its tools through :func:`order_wire_tools` before each
request sends the same bytes whatever order its framework registered them in.
:func:`wire_tool_name` is the one way a tool on the wire is named, here and in
the wire capture.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from headerlock.errors import WireToolError
from headerlock.runtime.canonical import canonical_json, code_unit_key
from headerlock.runtime.tool_order import (
    TOOL_ORDER_REST,
    reject_reserved_name,
    reject_unregistered,
    validate_tool_order,
)

_SCALARS = (str, int, float, bool, type(None))
GEMINI_DECLARATIONS: Final = ("functionDeclarations", "function_declarations")
"""The keys a Gemini ``tools[]`` entry lists its function declarations under (the REST
API's camelCase, which the SDK sends, and the SDK's own snake_case)."""
BEDROCK_SPEC: Final = "toolSpec"
"""The key a Bedrock Converse ``toolConfig.tools`` entry holds its tool under."""
BEDROCK_CACHE_POINT: Final = "cachePoint"
"""A Bedrock ``toolConfig.tools`` entry that is a cache breakpoint, not a tool."""


def is_cache_point(entry: Any) -> bool:
    """Whether a tools-list entry is a Bedrock ``{"cachePoint": ...}`` breakpoint."""
    return isinstance(entry, Mapping) and list(entry) == [BEDROCK_CACHE_POINT]


def wire_tool_name(
    tool: Any, index: int = 0, *, strict: bool = True, where: str | None = None
) -> str:
    """The name of one tool on the wire, in any model API's shape.

    OpenAI chat: ``{"type": "function", "function": {"name": ...}}``; OpenAI
    responses: ``{"type": "function", "name": ...}``; Anthropic:
    ``{"name": ..., "input_schema": ...}`` (or a named server tool); Gemini: one
    function declaration ``{"name": ..., "parameters": ...}`` of a ``tools[]``
    entry; Bedrock Converse: ``{"toolSpec": {"name": ..., "inputSchema": ...}}``.
    ``strict`` (what ordering needs) raises ``WireToolError`` naming
    ``where`` (default ``tools[index]``) for any other shape. Otherwise (naming
    what a request sent) a built-in tool is named by its ``type``, or by its only
    key (Gemini's ``{"googleSearch": {}}``), and anything else is ``"?"``.
    """
    if not strict:
        return _sent_name(tool)
    where = where or f"tools[{index}]"
    if not isinstance(tool, Mapping):
        raise WireToolError(
            f"{where}: expected a tool dict, got {type(tool).__name__}", index=index
        )
    if isinstance(tool.get(BEDROCK_SPEC), Mapping):
        name = tool[BEDROCK_SPEC].get("name")
    elif "function" in tool:
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
            f"{where}: not an OpenAI chat, OpenAI responses, Anthropic, Bedrock or Gemini tool"
            f" (no name); keys: {', '.join(sorted(map(str, tool)))}",
            index=index,
        )
    return name


def _sent_name(tool: Any) -> str:
    if not isinstance(tool, Mapping):
        return "?"
    for key in ("function", BEDROCK_SPEC):
        inner = tool.get(key)
        if isinstance(inner, Mapping) and isinstance(inner.get("name"), str):
            return str(inner["name"])
    for key in ("name", "type"):
        if isinstance(tool.get(key), str):
            return str(tool[key])
    if len(tool) == 1:
        (only,) = tool
        return str(only)
    return "?"


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


@dataclass(frozen=True, slots=True)
class _Named:
    """One tool to place: its sort key, name, canonical dict, and whether it is a
    Gemini function declaration (regrouped into a ``tools[]`` entry afterwards)."""

    key: tuple[bytes, str]
    name: str
    tool: dict[str, Any]
    declaration: bool = False


def _named(tool: Any, index: int, *, name: str | None = None, where: str | None = None) -> _Named:
    """``tool`` with its name (``name``, else its wire name) and canonical form; a
    Gemini declaration when ``where`` says where it sits."""
    name = name if name is not None else wire_tool_name(tool, index, where=where)
    canonical = _canonical(tool, "", index, name)
    declaration = where is not None
    return _Named((code_unit_key(name), canonical_json(canonical)), name, canonical, declaration)


def _declarations_key(tools: Sequence[Any]) -> str | None:
    """The key Gemini entries list their declarations under; ``None`` for other APIs."""
    for tool in tools:
        if isinstance(tool, Mapping):
            for key in GEMINI_DECLARATIONS:
                if key in tool:
                    return key
    return None


def _gemini_tools(tools: Sequence[Any]) -> list[_Named]:
    """Every function declaration and every built-in tool (``{"googleSearch": {}}``,
    named by its key) of a Gemini ``tools`` list."""
    named: list[_Named] = []
    for index, entry in enumerate(tools):
        if not isinstance(entry, Mapping):
            raise WireToolError(
                f"tools[{index}]: expected a tool dict, got {type(entry).__name__}", index=index
            )
        for key, value in entry.items():
            where = f"tools[{index}].{key}"
            if key not in GEMINI_DECLARATIONS:
                named.append(_named({key: value}, index, name=str(key)))
                continue
            if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
                raise WireToolError(
                    f"{where}: expected a list of function declarations,"
                    f" got {type(value).__name__}",
                    index=index,
                )
            named += [_named(d, index, where=f"{where}[{n}]") for n, d in enumerate(value)]
    return named


def _regroup(ordered: Sequence[_Named], key: str) -> list[dict[str, Any]]:
    """Gemini ``tools[]`` entries: each run of declarations in one entry, built-ins alone."""
    entries: list[dict[str, Any]] = []
    group: list[dict[str, Any]] | None = None
    for item in ordered:
        if not item.declaration:
            entries.append(item.tool)
            group = None
        elif group is not None:
            group.append(item.tool)
        else:
            group = [item.tool]
            entries.append({key: group})
    return entries


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
    sends only some. Gemini tools (entries with ``functionDeclarations``) are
    ordered by declaration: the result holds each run of declarations in one
    entry and each built-in tool (named by its key) in its own. Raises
    ``WireToolError`` for an unknown tool shape and ``ToolOrderError`` for a
    malformed or unsatisfiable ``tool_order``. Bedrock Converse tools (the
    ``toolConfig.tools`` list: ``{"toolSpec": ...}`` entries) are ordered by their
    ``toolSpec`` name; a ``{"cachePoint": ...}`` entry is no tool and keeps its index
    in the list (one at the end stays at the end), the tools fill the other places.
    """
    policy = validate_tool_order(tool_order)
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        raise WireToolError(f"tools must be a list of tool dicts, got {type(tools).__name__}")
    points = {n: dict(t) for n, t in enumerate(tools) if is_cache_point(t)}
    if points:
        others = [t for n, t in enumerate(tools) if n not in points]
        ordered = iter(order_wire_tools(others, tool_order, known_names=known_names))
        return [points[n] if n in points else next(ordered) for n in range(len(tools))]
    gemini = _declarations_key(tools)
    if gemini is not None:
        named = _gemini_tools(tools)
    else:
        named = [_named(tool, index) for index, tool in enumerate(tools)]
    names = [item.name for item in named]
    reject_reserved_name(names)
    named.sort(key=lambda item: item.key)
    if policy is not None:
        reject_unregistered(policy, names if known_names is None else known_names)
        by_entry: dict[str, list[_Named]] = {entry: [] for entry in policy}
        rest = by_entry[TOOL_ORDER_REST]
        for item in named:
            by_entry.get(item.name, rest).append(item)
        named = [item for entry in policy for item in by_entry[entry]]
    if gemini is not None:
        return _regroup(named, gemini)
    return [item.tool for item in named]
