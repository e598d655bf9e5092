"""Hypothesis strategies for tools, tool orders and load schedules (public)."""

from headerlock.testing.order.strategies import (
    invalid_tool_orders,
    load_schedules,
    registration_orders,
    tool_names,
    tool_orders,
    tool_schemas,
    tool_sets,
)

__all__ = [
    "invalid_tool_orders",
    "load_schedules",
    "registration_orders",
    "tool_names",
    "tool_orders",
    "tool_schemas",
    "tool_sets",
]
