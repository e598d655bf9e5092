"""Hypothesis strategies for tool sets, tool orders and plugin load schedules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from headerlock.runtime.tool_order import TOOL_ORDER_REST
from headerlock.runtime.tools import ToolSchema
from headerlock.testing.order.schedules import LoadSchedule

T = TypeVar("T")

_NAME_ALPHABET = st.characters(
    codec="utf-8",
    categories=("L", "N", "Pc", "Pd", "So"),
    include_characters="_-\uff5e\U0001f600",
)


def _check_bounds(min_size: int, max_size: int | None, what: str) -> None:
    if min_size < 0:
        raise InvalidArgument(f"{what}: min_size={min_size!r} must be >= 0")
    if max_size is not None and max_size < min_size:
        raise InvalidArgument(f"{what}: max_size={max_size!r} < min_size={min_size!r}")


def tool_names(*, min_size: int = 1, max_size: int = 12) -> st.SearchStrategy[str]:
    """Tool names, ASCII and not (astral and high-BMP characters included).

    Never the reserved rest entry ``<unlisted-tools>``.
    """
    _check_bounds(min_size, max_size, "tool_names")
    if min_size < 1:
        raise InvalidArgument(f"tool_names: min_size={min_size!r} must be >= 1")
    return st.text(_NAME_ALPHABET, min_size=min_size, max_size=max_size).filter(
        lambda n: n != TOOL_ORDER_REST
    )


def tool_schemas(*, names: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[ToolSchema]:
    """Tool schemas with a description and a small JSON-schema of parameters."""
    params = st.dictionaries(
        st.sampled_from(["path", "text", "count", "flag"]),
        st.sampled_from(["string", "integer", "boolean"]).map(lambda t: {"type": t}),
        max_size=3,
    ).map(lambda props: {"type": "object", "properties": props})
    return st.builds(
        ToolSchema,
        name=names if names is not None else tool_names(),
        description=st.text(max_size=20),
        parameters=params,
    )


def tool_sets(
    *, min_size: int = 0, max_size: int = 8, shared_names: bool = False
) -> st.SearchStrategy[list[ToolSchema]]:
    """Lists of tool schemas with distinct names.

    With ``shared_names=True``, some names may appear twice (as when two
    providers offer a tool of the same name), with different schemas.
    """
    _check_bounds(min_size, max_size, "tool_sets")
    distinct = st.lists(
        tool_schemas(), min_size=min_size, max_size=max_size, unique_by=lambda t: t.name
    )
    if not shared_names:
        return distinct

    @st.composite
    def with_twins(draw: st.DrawFn) -> list[ToolSchema]:
        tools = draw(distinct)
        if not tools:
            return tools
        twins = draw(st.lists(st.sampled_from(tools), max_size=2, unique_by=lambda t: t.name))
        for tool in twins:
            tools.append(draw(tool_schemas(names=st.just(tool.name)).filter(tool.__ne__)))
        return tools

    return with_twins()


def tool_orders(names: Sequence[str]) -> st.SearchStrategy[list[str]]:
    """Valid ``tool_order`` policies over ``names``: a listed subset, one rest entry."""
    if isinstance(names, str):
        raise InvalidArgument("tool_orders(names): names must be a sequence of names, not a str")
    pool = list(dict.fromkeys(names))

    @st.composite
    def policies(draw: st.DrawFn) -> list[str]:
        listed = draw(st.lists(st.sampled_from(pool), unique=True)) if pool else []
        position = draw(st.integers(min_value=0, max_value=len(listed)))
        return [*listed[:position], TOOL_ORDER_REST, *listed[position:]]

    return policies()


def invalid_tool_orders(names: Sequence[str]) -> st.SearchStrategy[list[Any]]:
    """Policies with a shape error: no rest entry, a repeated name, a non-string."""
    if isinstance(names, str):
        raise InvalidArgument("invalid_tool_orders(names): names must be a sequence, not a str")
    pool = [*dict.fromkeys(names), TOOL_ORDER_REST]
    missing_rest = (
        st.lists(st.sampled_from(pool[:-1]), unique=True) if len(pool) > 1 else st.just([])
    )
    repeated = tool_orders(names).flatmap(
        lambda policy: st.sampled_from(policy).flatmap(
            lambda twin: st.integers(0, len(policy)).map(
                lambda at: [*policy[:at], twin, *policy[at:]]
            )
        )
    )
    non_string = tool_orders(names).flatmap(
        lambda policy: st.sampled_from([0, None, 1.5, b"x"]).map(lambda bad: [*policy, bad])
    )
    return st.one_of(missing_rest, repeated, non_string)


def registration_orders(plugins: Sequence[T]) -> st.SearchStrategy[list[T]]:
    """Permutations of ``plugins`` (for n <= 5, n! examples cover them all)."""
    return st.permutations(list(plugins))


def load_schedules(
    plugins: Sequence[object], *, max_delay: float = 0.002, max_yields: int = 5
) -> st.SearchStrategy[LoadSchedule]:
    """Per-plugin delays and yields (in the given order) that change which plugin
    finishes loading first; combine with ``registration_orders`` for the order."""
    if max_delay < 0:
        raise InvalidArgument(f"load_schedules: max_delay={max_delay!r} must be >= 0")
    if max_yields < 0:
        raise InvalidArgument(f"load_schedules: max_yields={max_yields!r} must be >= 0")
    n = len(plugins)
    delays = st.lists(
        st.floats(min_value=0, max_value=max_delay, allow_nan=False), min_size=n, max_size=n
    )
    yields = st.lists(st.integers(min_value=0, max_value=max_yields), min_size=n, max_size=n)
    identity = tuple(range(n))
    return st.builds(lambda d, y: LoadSchedule(identity, tuple(d), tuple(y)), delays, yields)
