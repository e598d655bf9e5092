"""The README's framework recipes: every recipe runs as written and passes the wire
order check, and fails it once its one recipe line is taken out."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from headerlock.errors import WireOrderError
from tests import docs

RECIPES: dict[str, str] = docs.examples("recipe")

NEEDS: dict[str, tuple[str, ...]] = {
    "sdk": ("openai",),
    "boto3": ("boto3",),
    "pydantic-ai": ("pydantic_ai",),
    "openai-agents": ("agents",),
    "langchain": ("langchain_openai",),
    "langgraph": ("langchain.agents", "langchain_openai"),
}
"""The modules each recipe imports (all in the ``test`` extra)."""

WITHOUT: dict[str, tuple[str, str]] = {
    "sdk": ("tools=order_wire_tools(list(tools.values()))", "tools=list(tools.values())"),
    "boto3": ("order_wire_tools([*tools.values(), ", "list([*tools.values(), "),
    "pydantic-ai": ("capabilities=[PrepareTools(pydantic_ai_prepare_tools)]", "capabilities=[]"),
    "openai-agents": ("tools=order_by_name(tools)", "tools=tools"),
    "langchain": ("bind_tools(order_by_name(tools))", "bind_tools(tools)"),
    "langgraph": ("create_agent(llm, order_by_name(tools)", "create_agent(llm, tools"),
}
"""Each recipe's one line, and the same line without it."""


def _needs(name: str) -> None:
    for module in NEEDS[name]:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            pytest.skip(f"recipe {name!r} needs {module} (pip install -e '.[test]')")


def _exec(code: str, name: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"recipe_{name.replace('-', '_')}"}
    exec(compile(code, f"recipe {name}", "exec"), namespace)
    return namespace


def test_the_doc_has_every_recipe() -> None:
    assert set(RECIPES) == set(NEEDS) == set(WITHOUT)


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_each_recipe_passes_the_order_check_as_written(name: str) -> None:
    _needs(name)
    namespace = _exec(RECIPES[name], name)
    assert callable(namespace["run"])


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_without_its_recipe_line_the_agent_is_order_dependent(name: str) -> None:
    _needs(name)
    line, without = WITHOUT[name]
    assert RECIPES[name].count(line) == 1, f"the {name} recipe no longer has {line!r}"
    with pytest.raises(WireOrderError) as caught:
        _exec(RECIPES[name].replace(line, without), name)
    error = caught.value
    assert error.first_order == ("search", "fetch", "summarize")
    assert error.second_order == ("fetch", "search", "summarize")
    assert (error.request, error.segment, error.tool) == (1, "tools", "search")


def test_the_sample_failure_in_the_doc_is_what_the_check_prints() -> None:
    line, without = WITHOUT["sdk"]
    with pytest.raises(WireOrderError) as caught:
        _exec(RECIPES["sdk"].replace(line, without), "sdk")
    sample = docs.examples("example")["order-failure"].splitlines()
    assert str(caught.value).splitlines()[: len(sample)] == sample
