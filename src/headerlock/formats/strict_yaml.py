"""YAML in and out: strict, safe loading and canonical, byte-stable dumping.

Loading gives plain data under the YAML 1.2 core schema and refuses aliases and
anchors, merge keys, duplicate keys, non-string keys, tags other than the core
ones, nesting deeper than ``MAX_DEPTH``, huge integers and lone surrogates; every
error names the file and line (``yaml_events``). What headerlock wrote itself is
read line by line (``canonical_read``), to the same data. Dumping is
``headerlock.formats.canonical_yaml``: sorted keys, no wrapping, no aliases,
literal blocks for multi-line strings.
"""

from __future__ import annotations

import codecs
import gc
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from headerlock.errors import YamlError
from headerlock.formats import canonical_read, canonical_yaml as emitter

MAX_DEPTH: Final = 64
MAX_BYTES: Final = 32 * 1024 * 1024


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector paused for a bulk load (the objects built are
    acyclic; collecting while millions are made costs more than the building),
    restored to its previous state after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def loads(
    text: str,
    *,
    path: str = "<string>",
    pure: bool = False,
    fast: bool = True,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """Parse YAML text strictly; errors are ``YamlError`` naming ``path`` and the line.

    A text in the canonical subset (what headerlock writes) is read by
    ``canonical_read`` (the same data, several times faster); any other text, and
    every text when ``fast`` is false or ``pure`` is true, from the parser's events
    (``yaml_events``, imported when first needed).
    """
    with paused_gc():
        if fast and not pure:
            data = canonical_read.read(text, max_depth=max_depth)
            if data is not None:
                return data
        from headerlock.formats import yaml_events

        return yaml_events.parse(text, path=path, pure=pure, max_depth=max_depth)


def decode(data: bytes, *, path: str) -> str:
    """UTF-8 text of a file's bytes (a BOM is dropped); errors name the byte offset."""
    skip = 3 if data.startswith(codecs.BOM_UTF8) else 0  # "utf-8-sig" is a slower codec
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as error:
        at = error.start + skip
        why = f"not UTF-8 text (byte 0x{data[at]:02x} at offset {at})"
        raise YamlError(why, path=path) from None


_KINDS: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_OPEN_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def _regular(mode: int, label: str) -> None:
    """Refuse anything but a regular file before it is read (a FIFO would hang)."""
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise YamlError(f"is {kind}, not a regular file", path=label)


def read_bytes(path: Path, *, max_bytes: int = MAX_BYTES, missing: str = "no such file") -> bytes:
    """A regular file's bytes; missing, too large, unreadable or not a regular file is an error.

    The file is checked with ``stat`` before it is opened and with ``fstat``
    after (opened non-blocking, so a FIFO swapped in meanwhile cannot hang).
    """
    label = str(path)
    try:
        _regular(os.stat(path).st_mode, label)
        fd = os.open(path, _OPEN_FLAGS)
        try:
            info = os.fstat(fd)
            _regular(info.st_mode, label)
            if info.st_size > max_bytes:
                raise YamlError(
                    f"file is {info.st_size} bytes, more than the limit of {max_bytes}", path=label
                )
            chunks: list[bytes] = []
            size = 0
            while chunk := os.read(fd, max(min(max_bytes + 1 - size, 1 << 20), 1)):
                chunks.append(chunk)
                size += len(chunk)
                if size > max_bytes:
                    raise YamlError(f"file is more than the limit of {max_bytes} bytes", path=label)
        finally:
            os.close(fd)
    except FileNotFoundError:
        raise YamlError(missing, path=label) from None
    except OSError as error:
        raise YamlError(f"cannot read: {error.strerror or error}", path=label) from None
    return b"".join(chunks)


def read_text(path: Path, *, max_bytes: int = MAX_BYTES, missing: str = "no such file") -> str:
    """A file's UTF-8 text; too large, missing, unreadable, undecodable or blank is an error."""
    label = str(path)
    text = decode(read_bytes(path, max_bytes=max_bytes, missing=missing), path=label)
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
    import yaml  # an error path: PyYAML is imported when first needed

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
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
