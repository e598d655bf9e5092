"""Tool lists of any registered model API: their names and their deterministic order.

``order_wire_tools`` is the public fix an agent imports (``headerlock.order_wire_tools``):
it tells the API of a list by the tool shapes of every registered API (``ModelApi.
tool_shape``) and orders it with ``runtime.wire_tools.order_shaped_tools``. Light to import: no
test dependency, no HTTP client.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from headerlock.runtime.wire_tools import order_shaped_tools, tool_name
from headerlock.testing.wire.apis import tool_shapes


def wire_tool_name(
    tool: Any, index: int = 0, *, strict: bool = True, where: str | None = None
) -> str:
    """The name of one tool on the wire, in any registered API's shape (see
    ``runtime.wire_tools.tool_name``)."""
    return tool_name(tool, tool_shapes(), index, strict=strict, where=where)


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
    return order_shaped_tools(tools, tool_shapes(), tool_order, known_names=known_names)
