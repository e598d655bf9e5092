"""The package layout: layers, lazy imports, module sizes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "headerlock"
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


def test_the_top_level_keeps_at_most_eight_files() -> None:
    files = sorted(p.name for p in PACKAGE.iterdir() if p.is_file() and p.suffix == ".py")
    assert len(files) <= 8, files
    assert {"__init__.py", "cli.py", "errors.py"} <= set(files)
