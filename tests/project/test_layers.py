"""The package layout: layers, lazy imports, module sizes."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "headerlock"
HEAVY = ("hypothesis", "deepdiff", "openai", "anthropic", "acp", "httpx", "httpx2", "pydantic")


def _loaded_after(statement: str, watch: tuple[str, ...]) -> list[str]:
    code = (
        f"import sys\n{statement}\n"
        f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & {set(watch)!r})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return result.stdout.split()


def test_import_headerlock_loads_no_heavy_dependency() -> None:
    watch = (*HEAVY, "syrupy", "pytest", "yaml")
    assert _loaded_after("import headerlock", watch) == []


def test_the_pytest_plugin_entry_module_loads_no_heavy_dependency() -> None:
    assert _loaded_after("import headerlock.testing.plugin.hooks", HEAVY) == []


def test_a_public_name_resolves_on_first_use() -> None:
    statement = "import headerlock\nheaderlock.ToolSchema\nheaderlock.AgentApp"
    assert "pydantic" in _loaded_after(statement, HEAVY)


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.name)
def test_no_module_is_over_500_lines(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 500


TOP_LEVEL = {
    "__init__.py": "the public facade: what a test or an agent writes",
    "__main__.py": "python -m headerlock",
    "_cli_parser.py": "the command line's arguments",
    "_facade.py": "the one helper of the lazy facades",
    "agent.py": "the facade of the RFC's agent runtime",
    "cli.py": "the command line",
    "errors.py": "the one exception tree",
    "strategies.py": "the facade of the Hypothesis strategies",
    "wire.py": "the facade of the wire capture",
}


def test_the_top_level_holds_the_cli_the_error_tree_and_the_facades_only() -> None:
    files = sorted(p.name for p in PACKAGE.iterdir() if p.is_file() and p.suffix == ".py")
    assert set(files) <= set(TOP_LEVEL), sorted(set(files) - set(TOP_LEVEL))


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _dynamic_targets(call: ast.Call, modules: set[str]) -> set[str]:
    """The headerlock modules an ``import_module(...)`` call may import: the one its
    string names, or every module its f-string's leading text starts (a run-time name)."""
    if not call.args:
        return set()
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return {arg.value} & modules
    if isinstance(arg, ast.JoinedStr) and arg.values:
        first = arg.values[0]
        if isinstance(first, ast.Constant) and str(first.value).startswith("headerlock."):
            return {m for m in modules if m.startswith(str(first.value))}
    return set()


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The headerlock modules ``path`` imports at run time, at any depth (inside functions
    too, and ``importlib.import_module`` of a headerlock name; ``if TYPE_CHECKING:``
    blocks excluded)."""
    found: set[str] = set()
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]

    def visit(node: ast.AST) -> None:
        if _is_type_checking(node):
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in modules else base)
        elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith("import_module"):
            found.update(_dynamic_targets(node, modules))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {m for m in found if m in modules and m != _module_name(path)}


def test_no_import_cycle_in_src_counting_imports_inside_functions() -> None:
    paths = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    graph = {name: _imports(path, set(paths)) for name, path in paths.items()}
    cycles = []
    for start in graph:  # a cycle through ``start``: a path from one of its imports back to it
        seen: set[str] = set()
        stack = [(start, [start])]
        while stack:
            node, trail = stack.pop()
            for target in sorted(graph[node]):
                if target == start:
                    cycles.append(" -> ".join([*trail, start]))
                elif target not in seen:
                    seen.add(target)
                    stack.append((target, [*trail, target]))
    assert cycles == []
