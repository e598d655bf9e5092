"""YAML in and out: strict, safe loading and canonical, byte-stable dumping.

Loading refuses aliases and merge keys (alias bombs), duplicate keys, tags
other than the plain JSON-like types, and nesting deeper than ``MAX_DEPTH``.
Dumping is ``headerlock.formats.canonical_yaml``: sorted keys, no wrapping, no aliases,
literal blocks for multi-line strings, one code path on every platform.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from headerlock.errors import YamlError
from headerlock.formats import canonical_yaml as emitter

MAX_DEPTH = 64
MAX_BYTES = 32 * 1024 * 1024
YAML_C = hasattr(yaml, "CSafeLoader")
"""Whether PyYAML's C (libyaml) loader is available (it is used when it is)."""


_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _strict_loader(base: type[yaml.SafeLoader]) -> type[yaml.SafeLoader]:
    class StrictLoader(base):  # type: ignore[valid-type,misc]
        """Safe loader that rejects duplicate keys and non-plain types."""

        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
            seen: dict[Any, yaml.Node] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise yaml.constructor.ConstructorError(
                        None, None, "merge keys (<<) are not allowed", key_node.start_mark
                    )
                key = self.construct_object(key_node, deep=True)
                if not isinstance(key, str):
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"mapping keys must be strings, got {key!r}",
                        key_node.start_mark,
                    )
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"duplicate key {key!r} (first at line {seen[key].start_mark.line + 1})",
                        key_node.start_mark,
                    )
                seen[key] = key_node
            return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]

    def as_string(loader: yaml.SafeLoader, node: yaml.Node) -> str:
        return str(node.value)

    def refuse(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
        raise yaml.constructor.ConstructorError(
            None, None, f"the tag {node.tag!r} is not allowed here", node.start_mark
        )

    StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", as_string)
    for tag in ("binary", "set", "omap", "pairs"):
        StrictLoader.add_constructor(f"tag:yaml.org,2002:{tag}", refuse)
    return StrictLoader


StrictLoader = _strict_loader(_BaseLoader)
PureStrictLoader = _strict_loader(yaml.SafeLoader)


def _check_events(text: str, path: str, loader: type[yaml.SafeLoader]) -> None:
    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            line = event.start_mark.line + 1 if event.start_mark else None
            raise YamlError("anchors and aliases are not allowed", path=path, line=line)
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark else None
                raise YamlError(f"nesting deeper than {MAX_DEPTH} levels", path=path, line=line)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def loads(text: str, *, path: str = "<string>", pure: bool = False) -> Any:
    """Parse YAML text strictly; errors are ``YamlError`` naming ``path`` and the line."""
    loader = PureStrictLoader if pure or not YAML_C else StrictLoader
    try:
        _check_events(text, path, loader)
        return yaml.load(text, Loader=loader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = str(error.problem or error.context or "invalid YAML")
        lines = text.splitlines()
        if mark and mark.line < len(lines) and "\t" in lines[mark.line]:
            problem += " (a tab: YAML indents with spaces only)"
        raise YamlError(problem, path=path, line=mark.line + 1 if mark else None) from None
    except yaml.YAMLError as error:
        raise YamlError(str(error), path=path) from None
    except RecursionError:
        raise YamlError(f"nesting deeper than {MAX_DEPTH} levels", path=path) from None


def decode(data: bytes, *, path: str) -> str:
    """UTF-8 text of a file's bytes (a BOM is dropped); errors name the byte offset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise YamlError(
            f"not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start})", path=path
        ) from None


def read_text(path: Path, *, max_bytes: int = MAX_BYTES, missing: str = "no such file") -> str:
    """A file's UTF-8 text; too large, missing, unreadable, undecodable or blank is an error."""
    label = str(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise YamlError(f"file is {size} bytes, more than the limit of {max_bytes}", path=label)
        data = path.read_bytes()
    except FileNotFoundError:
        raise YamlError(missing, path=label) from None
    except IsADirectoryError:
        raise YamlError("is a directory, not a file", path=label) from None
    except OSError as error:
        raise YamlError(f"cannot read: {error.strerror}", path=label) from None
    text = decode(data, path=label)
    if not text.strip():
        raise YamlError("file is empty", path=label)
    return text


def load_file(path: Path, *, max_bytes: int = MAX_BYTES) -> Any:
    """Read and parse a YAML file; an empty file is an error."""
    return loads(read_text(path, max_bytes=max_bytes), path=str(path))


def dumps(data: Any) -> str:
    """Canonical YAML text: the same content always gives the same string."""
    return emitter.dump(data)


def locate(text: str, keys: Sequence[str | int]) -> int | None:
    """The 1-based line of the node at ``keys`` in ``text`` (or of its nearest parent)."""
    try:
        node = yaml.compose(text, Loader=PureStrictLoader)
    except yaml.YAMLError:
        return None
    line = node.start_mark.line + 1 if node is not None else None
    for key in keys:
        child = None
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if key_node.value == key:
                    line = key_node.start_mark.line + 1
                    child = value_node
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            child = node.value[key]
            line = child.start_mark.line + 1
        if child is None:
            break
        node = child
    return line
