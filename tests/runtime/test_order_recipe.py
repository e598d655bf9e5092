"""The fix is free at run time (issue 27): the README's standard-library lines order every
API's tool shape exactly as ``order_wire_tools`` does, they run where headerlock cannot be
imported, and ``from headerlock import order_wire_tools`` loads no test dependency."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from headerlock import order_wire_tools
from tests import docs

RECIPE = docs.examples("production")["order-tools"]

NAMES = ("search", "fetch", "summarize", "Zeta", "é_accent", "x\U0001f600", "x\uff46")


def _schema(name: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"query": {"type": "string", "description": f"for {name}"}},
        "required": ["query"],
    }


ToolOf = Callable[[str, str], dict[str, Any]]
SHAPES: dict[str, ToolOf] = {
    "openai.chat": lambda n, about: {
        "type": "function",
        "function": {"name": n, "description": about, "parameters": _schema(n)},
    },
    "openai.responses": lambda n, about: {
        "type": "function",
        "name": n,
        "description": about,
        "parameters": _schema(n),
    },
    "anthropic": lambda n, about: {"name": n, "description": about, "input_schema": _schema(n)},
    "bedrock": lambda n, about: {
        "toolSpec": {"name": n, "description": about, "inputSchema": {"json": _schema(n)}}
    },
}
"""Every API's tool shape (one tool, by name and description); Gemini's grouped shape is
built by ``gemini_tools``, Bedrock's cachePoints are added by ``bedrock_tools``. A new API's
shape is one more entry (and one more line in the recipe's ``_name``)."""
CACHE_POINT = {"cachePoint": {"type": "default"}}


def _tools(shape: ToolOf, rng: random.Random) -> list[dict[str, Any]]:
    """One tool per name and a second ``search`` (ordered by content), shuffled."""
    tools = [shape(n, f"{n} tool") for n in NAMES] + [shape("search", "again")]
    rng.shuffle(tools)
    return tools


def _shuffled_keys(value: Any, rng: random.Random) -> Any:
    """``value`` with every dict's keys in a random insertion order."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {k: _shuffled_keys(value[k], rng) for k in keys}
    if isinstance(value, list):
        return [_shuffled_keys(v, rng) for v in value]
    return value


def gemini_tools(rng: random.Random) -> list[dict[str, Any]]:
    """Declarations over two entries, a built-in tool between them, keys in any order."""
    declarations = [
        {"name": n, "description": f"{n} tool", "parameters": _schema(n)} for n in NAMES
    ]
    rng.shuffle(declarations)
    key = rng.choice(["functionDeclarations", "function_declarations"])
    half = len(declarations) // 2
    tools = [{key: declarations[:half]}, {"googleSearch": {}}, {key: declarations[half:]}]
    return _shuffled_keys(tools, rng)  # type: ignore[no-any-return]


def bedrock_tools(rng: random.Random) -> list[dict[str, Any]]:
    """Bedrock tools with a cachePoint (no tool: it keeps its index) at the start, in the
    middle and at the end, keys in any order."""
    tools = _tools(SHAPES["bedrock"], rng)
    middle = rng.randrange(1, len(tools))
    tools = [CACHE_POINT, *tools[:middle], CACHE_POINT, *tools[middle:], CACHE_POINT]
    return _shuffled_keys(tools, rng)  # type: ignore[no-any-return]


def cases() -> list[tuple[str, list[dict[str, Any]]]]:
    found = []
    for seed in range(3):
        rng = random.Random(seed)
        for api, shape in SHAPES.items():
            found.append((f"{api}-{seed}", _shuffled_keys(_tools(shape, rng), rng)))
        found.append((f"gemini-{seed}", gemini_tools(rng)))
        found.append((f"bedrock.cachePoint-{seed}", bedrock_tools(rng)))
    return found


CASES = cases()


def _recipe() -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    namespace: dict[str, Any] = {"__name__": "readme_production"}
    exec(compile(RECIPE, "README.md:order-tools", "exec"), namespace)
    return namespace["order_tools"]  # type: ignore[no-any-return]


def _bytes(tools: Any) -> str:
    """What an SDK sends: JSON in insertion order."""
    return json.dumps(tools, ensure_ascii=False)


@pytest.mark.parametrize(("name", "tools"), CASES, ids=[name for name, _ in CASES])
def test_the_recipe_gives_order_wire_tools_bytes(name: str, tools: list[dict[str, Any]]) -> None:
    assert _bytes(_recipe()(tools)) == _bytes(order_wire_tools(tools))


def test_the_recipe_runs_where_headerlock_cannot_be_imported() -> None:
    probe = (
        f"{RECIPE}\n"
        "import importlib.util, json, sys\n"
        "assert importlib.util.find_spec('headerlock') is None, 'headerlock is importable'\n"
        "for tools in json.load(sys.stdin):\n"
        "    print(json.dumps(order_tools(tools), ensure_ascii=False))\n"
    )
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe],  # no site-packages, no PYTHONPATH
        input=json.dumps([tools for _, tools in CASES]),
        capture_output=True, text=True, encoding="utf-8", timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    expected = [_bytes(order_wire_tools(tools)) for _, tools in CASES]
    assert result.stdout.splitlines() == expected


def test_order_wire_tools_loads_no_test_dependency() -> None:
    watch = ("pytest", "_pytest", "hypothesis", "syrupy", "deepdiff", "yaml", "pydantic")
    code = (
        "import sys\n"
        "from headerlock import order_wire_tools\n"
        "order_wire_tools([{'name': 'b', 'input_schema': {}}, {'name': 'a', 'input_schema': {}}])\n"
        f"print(' '.join(sorted(m for m in {watch!r} if m in sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.split() == []
