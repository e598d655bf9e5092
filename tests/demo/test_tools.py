"""The workspace and the bundled demo tool plugins."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from headerlock.agent import Context, ToolRegistry
from headerlock.demo.tools import files, todos
from headerlock.errors import PluginError, ToolInputError, WorkspaceError
from headerlock.runtime.plugins import resolve_plugin
from headerlock.runtime.workspace import Workspace


@pytest.fixture
def tools(tmp_path: Path) -> dict[str, Any]:
    ctx = Context()
    ctx.provide("tools", ToolRegistry())
    ctx.provide("workspace", Workspace(tmp_path))
    asyncio.run(ctx.load_plugins([files, todos]))
    registry: ToolRegistry = ctx.get("tools")
    handlers = {}
    for name in registry.known_names():
        entry = registry.get(name)
        assert entry is not None
        handlers[name] = entry.handler
    return handlers


def test_files_round_trip(tools: dict[str, Any], tmp_path: Path) -> None:
    assert (
        tools["write"]({"path": "dir/a.txt", "content": "one two"}) == "wrote 7 bytes to dir/a.txt"
    )
    assert tools["read"]({"path": "dir/a.txt"}) == "one two"
    assert tools["edit"]({"path": "dir/a.txt", "old": "two", "new": "2"}) == "edited dir/a.txt"
    assert (tmp_path / "dir" / "a.txt").read_text() == "one 2"
    assert tools["list"]({}) == "dir/"
    assert tools["list"]({"path": "dir"}) == "dir/a.txt"
    assert not [p for p in (tmp_path / "dir").iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("path", ["../escape.txt", "/etc/passwd", "a\x00b", "", "dir/../../x"])
def test_paths_outside_the_workspace_are_refused(
    tools: dict[str, Any], path: str, tmp_path: Path
) -> None:
    with pytest.raises((WorkspaceError, ToolInputError)):
        tools["write"]({"path": path, "content": "x"})
    assert not (tmp_path.parent / "escape.txt").exists()


def test_symlink_escape_is_refused(tools: dict[str, Any], tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / "link").symlink_to(outside)
    with pytest.raises(WorkspaceError, match="leaves the workspace"):
        tools["write"]({"path": "link/x.txt", "content": "x"})


def test_tool_input_errors(tools: dict[str, Any]) -> None:
    with pytest.raises(ToolInputError, match=r"no file 'missing\.txt'"):
        tools["read"]({"path": "missing.txt"})
    tools["write"]({"path": "a", "content": "x x"})
    with pytest.raises(ToolInputError, match="occurs 2 times"):
        tools["edit"]({"path": "a", "old": "x", "new": "y"})
    with pytest.raises(ToolInputError, match="'path' must be a non-empty string"):
        tools["read"]({})


def test_todo_write(tools: dict[str, Any]) -> None:
    result = tools["todo_write"](
        {"todos": [{"content": "a", "status": "completed"}, {"content": "b"}]}
    )
    assert result == "[x] a\n[ ] b"
    with pytest.raises(ToolInputError, match=r"todos\[0\].status"):
        tools["todo_write"]({"todos": [{"content": "a", "status": "later"}]})


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("headerlock.demo.tools", "not of the form"),
        ("../evil:x", "not of the form"),
        ("headerlock.nope:files", "cannot import 'headerlock.nope'"),
        ("headerlock.demo.tools:nope", "has no attribute 'nope'"),
        ("headerlock.demo.tools:MAX_READ_BYTES", "is not callable"),
    ],
)
def test_plugin_paths(path: str, message: str) -> None:
    with pytest.raises(PluginError, match=message):
        resolve_plugin(path)
    assert resolve_plugin("headerlock.demo.tools:files") is files
