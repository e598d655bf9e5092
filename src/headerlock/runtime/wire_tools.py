"""Tool lists in the deterministic order, with canonical key order, for any tool shape.

The order is the same for every model API; how a list holds its tools differs, and each
API says so with a ``ToolShape`` (its module in ``headerlock.testing.wire.apis``). The
public ``order_wire_tools`` (``headerlock.testing.wire.apis.tool_lists``) hands this
module the shapes of every registered API. Nothing here names a provider.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class ToolShape:
    """How one model API's tool list holds its tools.

    ``label`` names the API in messages. A tool is a dict named by its ``name``, or
    wrapped: its definition under ``wrapper`` (and, when ``kind`` is set, a ``type``
    that must be ``kind``). ``groups`` are the keys an entry of the list holds several
    definitions under (each other key of such an entry is a built-in tool, named by the
    key). An entry whose only key is ``breakpoint`` is a cache breakpoint, not a tool.
    """

    label: str
    wrapper: str | None = None
    kind: str | None = None
    groups: tuple[str, ...] = ()
    breakpoint: str | None = None

    def wraps(self, tool: Mapping[str, Any]) -> bool:
        """Whether ``tool`` is wrapped this shape's way."""
        if self.wrapper is None or self.wrapper not in tool:
            return False
        return self.kind is not None or isinstance(tool[self.wrapper], Mapping)

    def is_breakpoint(self, entry: Any) -> bool:
        """Whether a list entry is this shape's cache breakpoint (no tool)."""
        return (
            self.breakpoint is not None
            and isinstance(entry, Mapping)
            and list(entry) == [self.breakpoint]
        )


FLAT: ToolShape = ToolShape("tool")
"""A tool named by its ``name`` (or, naming what was sent, its ``type`` or only key)."""


def tool_name(
    tool: Any,
    shapes: Sequence[ToolShape] = (),
    index: int = 0,
    *,
    strict: bool = True,
    where: str | None = None,
) -> str:
    """The name of one tool on the wire in one of ``shapes`` (or flat: its ``name``).

    ``strict`` (what ordering needs) raises ``WireToolError`` naming ``where``
    (default ``tools[index]``) for a tool of no shape. Otherwise (naming what a request
    sent) a built-in tool is named by its ``type``, or by its only key, and anything
    else is ``"?"``.
    """
    if not strict:
        return _sent_name(tool, shapes)
    where = where or f"tools[{index}]"
    if not isinstance(tool, Mapping):
        raise WireToolError(
            f"{where}: expected a tool dict, got {type(tool).__name__}", index=index
        )
    shape = next((s for s in shapes if s.wraps(tool)), None)
    if shape is not None and shape.wrapper is not None:
        inner = tool[shape.wrapper]
        kind = shape.kind
        if kind is not None and (tool.get("type") != kind or not isinstance(inner, Mapping)):
            raise WireToolError(
                f'{where}: an {shape.label} tool is {{"type": "{shape.kind}",'
                f' "{shape.wrapper}": {{...}}}}',
                index=index,
            )
        name = inner.get("name")
    else:
        name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise WireToolError(
            f"{where}: not {_either(shapes)} tool (no name);"
            f" keys: {', '.join(sorted(map(str, tool)))}",
            index=index,
        )
    return name


def _either(shapes: Sequence[ToolShape]) -> str:
    """``an A, B or C`` of the shapes' labels."""
    labels = [shape.label for shape in shapes] or [FLAT.label]
    listed = ", ".join(labels[:-1]) + (" or " if len(labels) > 1 else "") + labels[-1]
    return f"an {listed}" if listed[:1].lower() in "aeiou" else f"a {listed}"


def _sent_name(tool: Any, shapes: Sequence[ToolShape]) -> str:
    if not isinstance(tool, Mapping):
        return "?"
    for shape in shapes:
        inner = tool.get(shape.wrapper) if shape.wrapper is not None else None
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
    definition of a group (regrouped into one entry of the list afterwards)."""

    key: tuple[bytes, str]
    name: str
    tool: dict[str, Any]
    declaration: bool = False


def _named(
    tool: Any,
    index: int,
    shapes: Sequence[ToolShape],
    *,
    name: str | None = None,
    where: str | None = None,
) -> _Named:
    """``tool`` with its name (``name``, else its wire name) and canonical form; a
    group's definition when ``where`` says where it sits."""
    name = name if name is not None else tool_name(tool, shapes, index, where=where)
    canonical = _canonical(tool, "", index, name)
    declaration = where is not None
    return _Named((code_unit_key(name), canonical_json(canonical)), name, canonical, declaration)


def _groups_key(tools: Sequence[Any], shapes: Sequence[ToolShape]) -> str | None:
    """The key the list's entries group their definitions under; ``None``: no groups."""
    keys = [key for shape in shapes for key in shape.groups]
    for tool in tools:
        if isinstance(tool, Mapping):
            for key in keys:
                if key in tool:
                    return key
    return None


def _grouped_tools(tools: Sequence[Any], shapes: Sequence[ToolShape]) -> list[_Named]:
    """Every definition of every group and every built-in tool (named by its key) of a
    list whose entries group their tools."""
    keys = {key for shape in shapes for key in shape.groups}
    named: list[_Named] = []
    for index, entry in enumerate(tools):
        if not isinstance(entry, Mapping):
            raise WireToolError(
                f"tools[{index}]: expected a tool dict, got {type(entry).__name__}", index=index
            )
        for key, value in entry.items():
            where = f"tools[{index}].{key}"
            if key not in keys:
                named.append(_named({key: value}, index, shapes, name=str(key)))
                continue
            if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
                raise WireToolError(
                    f"{where}: expected a list of function declarations,"
                    f" got {type(value).__name__}",
                    index=index,
                )
            named += [_named(d, index, shapes, where=f"{where}[{n}]") for n, d in enumerate(value)]
    return named


def _regroup(ordered: Sequence[_Named], key: str) -> list[dict[str, Any]]:
    """The list's entries: each run of definitions in one entry, built-ins alone."""
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


def order_shaped_tools(
    tools: Sequence[Mapping[str, Any]],
    shapes: Sequence[ToolShape],
    tool_order: Sequence[str] | None = None,
    *,
    known_names: Iterable[str] | None = None,
) -> list[dict[str, Any]]:
    """``tools`` (in any of ``shapes``) in the deterministic order, each as a new dict
    with sorted keys (``order_wire_tools`` with the shapes of every registered API).

    Without ``tool_order``: code-unit order of names (UTF-16, as JavaScript
    compares). With it: listed tools at their positions and every other tool
    at the ``<unlisted-tools>`` rest entry, in code-unit order. Same-named tools
    are ordered by their canonical JSON. Lists inside a schema keep their
    order. ``known_names`` (default: the names in ``tools``) are the names a
    ``tool_order`` entry may list. A list whose entries group definitions is ordered
    by definition: the result holds each run of definitions in one entry and each
    built-in tool (named by its key) in its own. A breakpoint entry is no tool and
    keeps its index in the list; the tools fill the other places. Raises
    ``WireToolError`` for an unknown tool shape and ``ToolOrderError`` for a
    malformed or unsatisfiable ``tool_order``.
    """
    policy = validate_tool_order(tool_order)
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        raise WireToolError(f"tools must be a list of tool dicts, got {type(tools).__name__}")
    points = {n: dict(t) for n, t in enumerate(tools) if any(s.is_breakpoint(t) for s in shapes)}
    if points:
        others = [t for n, t in enumerate(tools) if n not in points]
        ordered = iter(order_shaped_tools(others, shapes, tool_order, known_names=known_names))
        return [points[n] if n in points else next(ordered) for n in range(len(tools))]
    grouped = _groups_key(tools, shapes)
    if grouped is not None:
        named = _grouped_tools(tools, shapes)
    else:
        named = [_named(tool, index, shapes) for index, tool in enumerate(tools)]
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
    if grouped is not None:
        return _regroup(named, grouped)
    return [item.tool for item in named]
