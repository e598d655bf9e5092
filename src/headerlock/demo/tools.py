"""Demo tool plugins with real behaviour, confined to the ``workspace`` service.

Load them by import path, e.g. ``headerlock.demo.tools:files``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headerlock.errors import ToolInputError
from headerlock.formats.atomic import atomic_write
from headerlock.runtime.context import Context
from headerlock.runtime.tools import ToolSchema
from headerlock.runtime.workspace import Workspace

MAX_READ_BYTES = 256 * 1024


def _string(arguments: Mapping[str, Any], key: str, *, allow_empty: bool = False) -> str:
    value = arguments.get(key)
    if not isinstance(value, str) or (not value and not allow_empty):
        raise ToolInputError(f"argument {key!r} must be a non-empty string, got {value!r}")
    return value


def _schema(name: str, description: str, **properties: str) -> ToolSchema:
    required = [k for k in properties if not k.endswith("_")]
    props = {k.rstrip("_"): {"type": "string", "description": v} for k, v in properties.items()}
    return ToolSchema(
        name,
        description,
        {"type": "object", "properties": props, "required": required},
    )


def files(ctx: Context) -> None:
    """``read``, ``write``, ``edit`` and ``list`` over the workspace."""
    workspace: Workspace = ctx.get("workspace")

    def read(arguments: Mapping[str, Any]) -> str:
        path = workspace.resolve(_string(arguments, "path"))
        if not path.is_file():
            raise ToolInputError(f"no file {workspace.relative(path)!r} in the workspace")
        data = path.read_bytes()
        if len(data) > MAX_READ_BYTES:
            raise ToolInputError(
                f"{workspace.relative(path)!r} is larger than {MAX_READ_BYTES} bytes"
            )
        return data.decode("utf-8", errors="replace")

    def write(arguments: Mapping[str, Any]) -> str:
        path = workspace.resolve(_string(arguments, "path"))
        content = _string(arguments, "content", allow_empty=True)
        atomic_write(path, content)
        return f"wrote {len(content.encode('utf-8'))} bytes to {workspace.relative(path)}"

    def edit(arguments: Mapping[str, Any]) -> str:
        path = workspace.resolve(_string(arguments, "path"))
        old, new = _string(arguments, "old"), _string(arguments, "new", allow_empty=True)
        if not path.is_file():
            raise ToolInputError(f"no file {workspace.relative(path)!r} in the workspace")
        text = path.read_text(encoding="utf-8")
        count = text.count(old)
        if count != 1:
            raise ToolInputError(
                f"'old' must occur exactly once in {workspace.relative(path)!r};"
                f" it occurs {count} times"
            )
        atomic_write(path, text.replace(old, new, 1))
        return f"edited {workspace.relative(path)}"

    def list_files(arguments: Mapping[str, Any]) -> str:
        base = workspace.resolve(str(arguments.get("path") or "."))
        if not base.is_dir():
            raise ToolInputError(f"no directory {str(arguments.get('path'))!r} in the workspace")
        names = sorted(
            workspace.relative(p) + ("/" if p.is_dir() else "")
            for p in base.iterdir()
            if not p.name.startswith(".")
        )
        return "\n".join(names)

    tools = ctx.tools
    tools.register(
        _schema("read", "Read a UTF-8 text file from the workspace.", path="File path"), read
    )
    tools.register(
        _schema(
            "write", "Create or replace a file in the workspace.", path="File path", content="Text"
        ),
        write,
    )
    tools.register(
        _schema(
            "edit",
            "Replace one exact occurrence of 'old' with 'new' in a file.",
            path="File path",
            old="Text to replace (must occur once)",
            new="Replacement text",
        ),
        edit,
    )
    tools.register(
        _schema(
            "list", "List the entries of a workspace directory.", path_="Directory (default .)"
        ),
        list_files,
    )


def todos(ctx: Context) -> None:
    """``todo_write``: replace the session's todo list and show it."""
    items: list[dict[str, str]] = []

    def todo_write(arguments: Mapping[str, Any]) -> str:
        todos_arg = arguments.get("todos")
        if not isinstance(todos_arg, (list, tuple)):
            raise ToolInputError("argument 'todos' must be a list of {content, status}")
        new: list[dict[str, str]] = []
        for i, todo in enumerate(todos_arg):
            if not isinstance(todo, Mapping) or not isinstance(todo.get("content"), str):
                raise ToolInputError(f"todos[{i}] must have a string 'content'")
            status = todo.get("status", "pending")
            if status not in ("pending", "in_progress", "completed"):
                raise ToolInputError(f"todos[{i}].status must be pending, in_progress or completed")
            new.append({"content": todo["content"], "status": status})
        items[:] = new
        marks = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
        return "\n".join(f"{marks[t['status']]} {t['content']}" for t in items) or "(no todos)"

    ctx.tools.register(
        ToolSchema(
            "todo_write",
            "Replace the todo list of this session.",
            {
                "type": "object",
                "properties": {
                    "todos": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "content": {"type": "string"},
                                "status": {"enum": ["pending", "in_progress", "completed"]},
                            },
                            "required": ["content"],
                        },
                    }
                },
                "required": ["todos"],
            },
        ),
        todo_write,
    )
