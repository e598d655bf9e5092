"""Hypothesis strategies for tools, tool orders and load schedules (public).

Names resolve on first use (Hypothesis is imported then); ``_PUBLIC`` lists them once.
"""

import typing as _typing

from headerlock._facade import facade as _facade

if _typing.TYPE_CHECKING:
    from headerlock.testing.order.strategies import (
        invalid_tool_orders as invalid_tool_orders,
        load_schedules as load_schedules,
        registration_orders as registration_orders,
        tool_names as tool_names,
        tool_orders as tool_orders,
        tool_schemas as tool_schemas,
        tool_sets as tool_sets,
    )

_PUBLIC = {
    "headerlock.testing.order.strategies": (
        "invalid_tool_orders",
        "load_schedules",
        "registration_orders",
        "tool_names",
        "tool_orders",
        "tool_schemas",
        "tool_sets",
    ),
}

__all__, __getattr__, __dir__ = _facade(__name__, _PUBLIC, globals())
