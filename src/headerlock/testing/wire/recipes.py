"""One-line fixes that make a framework agent send its tools in the RFC order.

Frameworks send tools in the order they were registered. Sorting the tool
objects by name (code-unit order, as the RFC's ``tool_order`` default) before
the framework sees them makes the request bytes independent of that order:
``order_by_name`` for openai-agents ``Agent(tools=...)`` and LangChain
``bind_tools``/``create_agent``, ``pydantic_ai_prepare_tools`` for pydantic-ai,
``order_wire_tools`` (``headerlock.order_wire_tools``) for plain SDK tool dicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import pairwise
from typing import Any, TypeVar

from headerlock.errors import ToolRegistrationError, WireToolError
from headerlock.runtime.canonical import canonical_json, code_unit_key
from headerlock.testing.wire.apis.tool_lists import wire_tool_name

T = TypeVar("T")


def item_name(item: object) -> str | None:
    """The name of a tool of any framework, or ``None`` when it has none.

    A tool dict (OpenAI chat, OpenAI responses, Anthropic) by its wire name;
    an object by its ``name`` attribute (openai-agents ``FunctionTool``,
    LangChain ``BaseTool``, pydantic-ai ``ToolDefinition``), else ``__name__``
    (a plain function).
    """
    if isinstance(item, Mapping):
        try:
            return wire_tool_name(item)
        except WireToolError:
            return None
    for attribute in ("name", "__name__"):
        value = getattr(item, attribute, None)
        if isinstance(value, str) and value:
            return value
    return None


def _tie(tool: object) -> str:
    """A tool dict's canonical JSON (breaks ties between same-named dicts), else ``""``."""
    if not isinstance(tool, Mapping):
        return ""
    try:
        return canonical_json(tool)
    except (TypeError, ValueError):
        return ""


def order_by_name(tools: Iterable[T]) -> list[T]:
    """``tools`` (the same objects) in code-unit order of their names.

    Two tool dicts of one name are ordered by their canonical JSON; any other
    two tools of one name raise ``ToolRegistrationError`` (their order would
    depend on registration order). A tool without a name raises
    ``WireToolError``.
    """
    keyed: list[tuple[bytes, str, T]] = []
    for index, tool in enumerate(tools):
        name = item_name(tool)
        if name is None:
            raise WireToolError(
                f"tools[{index}]: {type(tool).__name__} has no name (a `name` attribute,"
                " `__name__` or a tool dict's name)",
                index=index,
            )
        tie = _tie(tool)
        keyed.append((code_unit_key(name), tie, tool))
    keyed.sort(key=lambda entry: entry[:2])
    for (key, tie, tool), (next_key, next_tie, _) in pairwise(keyed):
        if key == next_key and not (tie and next_tie):
            name = item_name(tool)
            raise ToolRegistrationError(
                f"two tools are named {name!r}: their order would depend on registration order",
                name=str(name),
            )
    return [tool for _, _, tool in keyed]


def pydantic_ai_prepare_tools(ctx: Any, tool_defs: list[T]) -> list[T]:
    """A pydantic-ai ``prepare_tools`` function: the tool definitions by name.

    ``Agent(model, capabilities=[PrepareTools(pydantic_ai_prepare_tools)])``.
    """
    del ctx
    return order_by_name(tool_defs)
