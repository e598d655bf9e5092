"""Readable explanations of why two recordings differ.

The verdict is always the byte comparison of canonical YAML; this module only
explains it: deepdiff paths (tool lists keyed by tool name) and a unified diff.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

from headerlock.formats.tool_sets import compare_tool_names

MAX_PATHS = 20
MAX_DIFF_LINES = 80
_SEGMENT = re.compile(r"\[('(?:[^'\\]|\\.)*'|\d+)\]")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def key_tools_by_name(value: Any) -> Any:
    """Turn every ``tools`` list of named schemas into a mapping keyed by name."""
    if isinstance(value, Mapping):
        result = {}
        for key, item in value.items():
            if key == "tools" and _named_list(item):
                result[key] = {tool["name"]: key_tools_by_name(tool) for tool in item}
            else:
                result[key] = key_tools_by_name(item)
        return result
    if isinstance(value, list):
        return [key_tools_by_name(v) for v in value]
    return value


def _named_list(value: Any) -> bool:
    if not isinstance(value, list) or not value:
        return False
    names = [v.get("name") for v in value if isinstance(v, Mapping)]
    return (
        len(names) == len(value)
        and all(isinstance(n, str) for n in names)
        and len(set(names)) == len(names)
    )


def tool_order_changes(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Tool lists whose names are the same but in another order (keying by name hides it)."""
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        lines = []
        for key in expected:
            if key not in actual:
                continue
            where = f"{path}.{key}" if path else str(key)
            a, b = expected[key], actual[key]
            if key == "tools" and _named_list(a) and _named_list(b):
                change = compare_tool_names([t["name"] for t in a], [t["name"] for t in b])
                if change.same_set and change.reordered:
                    lines.append(f"{where} order: {change.order()}")
            else:
                lines += tool_order_changes(a, b, where)
        return lines
    if isinstance(expected, list) and isinstance(actual, list):
        return [
            line
            for i, (a, b) in enumerate(zip(expected, actual, strict=False))
            for line in tool_order_changes(a, b, f"{path}[{i}]")
        ]
    return []


def readable_path(path: str) -> str:
    """``root['events'][4]['data']`` → ``events[4].data``."""
    parts = []
    for segment in _SEGMENT.findall(path):
        if segment.startswith("'"):
            key = segment[1:-1]
            parts.append(f".{key}" if _IDENTIFIER.match(key) else f"[{segment}]")
        else:
            parts.append(f"[{segment}]")
    return "".join(parts).lstrip(".")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}..."


def changes(expected: Any, actual: Any, where: str = "", *, limit: int | None = None) -> list[str]:
    """The one structural differ: a line per difference, ``path: expected -> actual``,
    ``path: added value`` or ``path: removed value``, in path order, at most ``limit``.
    Mappings compare by key (their order does not matter), lists by position, and
    ``1``, ``1.0`` and ``true`` all differ, as in JSON. ``where`` prefixes each path."""
    from deepdiff import DeepDiff  # only when there is a difference to explain

    diff = DeepDiff(expected, actual, verbose_level=2)
    lines: list[str] = []
    for kind, found in diff.to_dict().items():
        items = list(found.items()) if isinstance(found, Mapping) else [(p, None) for p in found]
        for path, detail in items:
            at = readable_path(path)
            at = f"{where}{'' if not at or at.startswith('[') else '.'}{at}" if where else at
            if kind in ("values_changed", "type_changes") and isinstance(detail, Mapping):
                old, new = _short(detail["old_value"]), _short(detail["new_value"])
                lines.append(f"{at}: {old} -> {new}")
            elif kind.endswith("_added"):
                lines.append(f"{at}: added {_short(detail)}")
            elif kind.endswith("_removed"):
                lines.append(f"{at}: removed {_short(detail)}")
            else:
                lines.append(f"{at}: {kind}")
    lines.sort(key=_path_order)
    return lines if limit is None else lines[:limit]


def changed_paths(expected: Any, actual: Any) -> list[str]:
    """``changes`` with every ``tools`` list of named schemas keyed by tool name."""
    return changes(key_tools_by_name(expected), key_tools_by_name(actual))


def _path_order(line: str) -> list[Any]:
    return [int(n) if n.isdigit() else n for n in re.split(r"(\d+)", line)]


def unified(expected_text: str, actual_text: str, *, names: tuple[str, str]) -> list[str]:
    """A unified diff of two YAML texts, cut to ``MAX_DIFF_LINES`` lines."""
    lines = list(
        difflib.unified_diff(
            expected_text.splitlines(),
            actual_text.splitlines(),
            fromfile=names[0],
            tofile=names[1],
            n=2,
            lineterm="",
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"... ({len(lines) - MAX_DIFF_LINES} more diff lines)"]
    return lines


def explain(
    expected: Any,
    actual: Any,
    *,
    expected_text: str,
    actual_text: str,
    names: tuple[str, str] = ("recorded", "replayed"),
) -> str:
    """The paths that differ, then the unified diff."""
    paths = tool_order_changes(expected, actual) + changed_paths(expected, actual)
    out = ["what differs (tools keyed by name):"]
    out += [f"  {p}" for p in paths[:MAX_PATHS]] or [
        "  (no structural difference: formatting only)"
    ]
    if len(paths) > MAX_PATHS:
        out.append(f"  ... and {len(paths) - MAX_PATHS} more")
    out.append("")
    out += unified(expected_text, actual_text, names=names)
    return "\n".join(out)
