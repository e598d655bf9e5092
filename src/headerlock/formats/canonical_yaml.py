"""A canonical YAML emitter for plain data (dicts, lists, strings, numbers, bools, None).

Why not PyYAML's dumper: its C (libyaml) and pure-Python emitters disagree on
many strings (line breaks, control characters, astral characters, empty and
long keys), and its representer costs more than the emitting. This emitter is
small, has one code path on every platform, and is conservative: a string is
written plain only when it cannot resolve to anything but itself, as a literal
block when that is exact, and double-quoted otherwise. Keys are sorted; nothing
wraps; no anchors or aliases; the output loads back equal with PyYAML's safe
loaders (C and pure), which the tests check over every BMP character.

A dump writes each list item that is a mapping or a list once per indent, by identity
(``_Shared``): a recording whose requests share their messages (an agent session sends
the whole conversation again with every request) is written in time linear in its
distinct messages, not in its size.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from json.encoder import encode_basestring
from typing import Any

from headerlock.errors import SerializationError

_PLAIN = re.compile(r"[A-Za-z_](?:[A-Za-z0-9_ .,/()'?!+=<>@-]*[A-Za-z0-9_.,/()'?!+=<>@-])?")
_RESERVED = frozenset(
    [
        "yes",
        "Yes",
        "YES",
        "no",
        "No",
        "NO",
        "true",
        "True",
        "TRUE",
        "false",
        "False",
        "FALSE",
        "on",
        "On",
        "ON",
        "off",
        "Off",
        "OFF",
        "null",
        "Null",
        "NULL",
    ]
)
_EXOTIC = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPES = {
    ord('"'): '\\"',
    ord("\\"): "\\\\",
    ord("\n"): "\\n",
    ord("\t"): "\\t",
    ord("\r"): "\\r",
}
_ESCAPES.update({c: f"\\x{c:02X}" for c in (*range(0x20), *range(0x7F, 0xA0)) if c not in _ESCAPES})
_ESCAPES.update({0x85: "\\N", 0x2028: "\\L", 0x2029: "\\P"})
_ESCAPES.update({c: f"\\u{c:04X}" for c in (0xFEFF, 0xFFFE, 0xFFFF)})
MAX_SIMPLE_KEY = 1000
MAX_KEY_TEXTS = 4096
_KEY_TEXTS: dict[str, str] = {}
"""Each simple key's text (``_string``) as first written: a recording repeats a few keys."""
MAX_INT_DIGITS = 4300
"""Longer integers are refused both ways (Python's default ``int``/``str`` conversion limit)."""
_INT_LIMIT = 10**MAX_INT_DIGITS


def dump(data: Any) -> str:
    """Canonical YAML text of ``data``; the same content always gives the same string."""
    return "".join(dump_chunks(data))


CHUNK_PIECES = 4096
"""Pieces joined into one chunk of ``dump_chunks`` (bounds the memory a dump needs)."""


def dump_chunks(data: Any) -> Iterator[str]:
    """``dump(data)`` in consecutive pieces: the items of a top-level list (also the
    value of a top-level key) are joined a few thousand pieces at a time."""
    out: list[str] = []
    shared: _Shared = {}
    if isinstance(data, Mapping) and data:
        for key in sorted(_keys(data)):
            _key(key, "", "", out)
            value = data[key]
            if isinstance(value, (list, tuple)) and value:
                out.append("\n")
                yield from _items(value, out, shared)
            else:
                _value(value, 0, out, shared)
    elif isinstance(data, (list, tuple)) and data:
        yield from _items(data, out, shared)
    else:
        _scalar_value(data, 0, out, root=True)
    yield "".join(out)


def dump_item(item: Any, indent: int) -> str:
    """The text of ``item`` as one item of a block sequence at ``indent`` (what
    ``dump`` writes for each item of a list: ``- `` and the item, at that indent)."""
    out: list[str] = []
    _sequence((item,), indent, out, {}, inline=False)
    return "".join(out)


class FlowMapping(dict[str, Any]):
    """A mapping the emitter writes on one line, as compact JSON-like flow YAML (keys
    sorted, every string double-quoted): a stream's events, one line each, smaller and
    diffed event by event. It loads back as a plain mapping; one with a key too long
    for a flow key is written as a block mapping instead."""


def _flow(value: Any) -> str:
    """``value`` as flow YAML on one line (``_NoFlow`` when a key is too long)."""
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        parts = []
        for key in sorted(_keys(value)):
            quoted = _quoted(key)
            if len(quoted) > MAX_SIMPLE_KEY:  # a flow key is a simple key: 1,024 at most
                raise _NoFlow
            parts.append(f"{quoted}:{_flow(value[key])}")
        return "{" + ",".join(parts) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_flow(item) for item in value) + "]" if value else "[]"
    return _quoted(value) if isinstance(value, str) else _scalar(value)


class _NoFlow(Exception):
    """A value the flow style cannot hold: written as a block instead."""


def _flow_line(value: FlowMapping) -> str | None:
    try:
        return _flow(value)
    except _NoFlow:
        return None


_Shared = dict[tuple[int, int], str]
"""One dump's text of each list item (a mapping or a list) written so far, by the item's
identity and indent: an item the data holds in several places is written once. The
items stay alive (the data holds them) while the dump runs, so no identity is reused."""


def _items(items: Any, out: list[str], shared: _Shared) -> Iterator[str]:
    """The items of a block sequence at indent 0, flushed in chunks (each written afresh:
    a top-level item is not kept, so the chunks bound the memory a dump needs)."""
    for item in items:
        _sequence((item,), 0, out, shared, inline=False, keep=False)
        if len(out) >= CHUNK_PIECES:
            yield "".join(out)
            out.clear()


def _mapping(
    mapping: Mapping[Any, Any], indent: int, out: list[str], shared: _Shared, *, inline: bool
) -> None:
    pad = " " * indent
    texts = _KEY_TEXTS
    for n, key in enumerate(sorted(_keys(mapping))):
        text = texts.get(key)
        if text is None:
            _key(key, "" if inline and n == 0 else pad, pad, out)
        else:
            out.append(f"{text}:" if inline and n == 0 else f"{pad}{text}:")
        _value(mapping[key], indent, out, shared)


def _key(key: str, prefix: str, pad: str, out: list[str]) -> None:
    text = _string(key)
    if len(text) <= MAX_SIMPLE_KEY and len(_KEY_TEXTS) < MAX_KEY_TEXTS:
        _KEY_TEXTS[key] = text
    if len(text) > MAX_SIMPLE_KEY:
        out.append(f"{prefix}? {text}\n{pad}:")
    else:
        out.append(f"{prefix}{text}:")


def _keys(mapping: Mapping[Any, Any]) -> list[str]:
    keys = list(mapping)
    for key in keys:
        if not isinstance(key, str):
            raise SerializationError(f"mapping keys must be strings, got {key!r}")
    return keys


def _value(value: Any, indent: int, out: list[str], shared: _Shared) -> None:
    """The value of a mapping entry; the key and colon are already written."""
    kind = type(value)
    if kind is str and "\n" not in value:  # the common cases first, by exact type
        out.append(f" {_string(value)}\n")
        return
    if kind is dict and value:
        out.append("\n")
        _mapping(value, indent + 2, out, shared, inline=False)
        return
    if kind is int:
        out.append(f" {_int(value)}\n")
        return
    line = _flow_line(value) if kind is FlowMapping else None
    if line is not None:
        out.append(f" {line}\n")
    elif isinstance(value, Mapping) and value:
        out.append("\n")
        _mapping(value, indent + 2, out, shared, inline=False)
    elif isinstance(value, (list, tuple)) and value:
        out.append("\n")
        _sequence(value, indent, out, shared, inline=False)
    else:
        out.append(" ")
        _scalar_value(value, indent + 2, out)


def _sequence(
    items: Any, indent: int, out: list[str], shared: _Shared, *, inline: bool, keep: bool = True
) -> None:
    """A block sequence; ``keep``: each item that is a mapping or a list is written once
    per indent (``_Shared``), its text reused wherever the data holds it again."""
    pad = " " * indent
    for n, item in enumerate(items):
        out.append("- " if inline and n == 0 else f"{pad}- ")
        line = _flow_line(item) if type(item) is FlowMapping else None
        if line is not None:
            out.append(f"{line}\n")
            continue
        is_mapping = isinstance(item, Mapping) and bool(item)
        if not is_mapping and not (isinstance(item, (list, tuple)) and item):
            _scalar_value(item, indent + 2, out)
            continue
        known = (id(item), indent)
        text = shared.get(known) if keep else None
        if text is None:
            piece: list[str] = [] if keep else out
            if is_mapping:
                _mapping(item, indent + 2, piece, shared, inline=True)
            else:
                _sequence(item, indent + 2, piece, shared, inline=True)
            if not keep:
                continue
            text = shared[known] = "".join(piece)
        out.append(text)


def _scalar_value(value: Any, content_indent: int, out: list[str], *, root: bool = False) -> None:
    """A scalar at the end of a line: a literal block for exact multi-line text."""
    if isinstance(value, str) and "\n" in value and _literal_ok(value):
        _literal(value, 2 if root else content_indent, out)
    else:
        out.append(_scalar(value))
        out.append("\n")


def _literal_ok(text: str) -> bool:
    """Whether a literal block keeps ``text`` exactly (no tab, carriage return or
    trailing space on a line: plain substring tests, fast on a long stream's text)."""
    body = text.rstrip("\n")
    return (
        text[0] not in " \n"
        and "\t" not in body
        and "\r" not in body
        and " \n" not in body
        and not body.endswith(" ")
        and not _EXOTIC.search(text)
    )


def _literal(text: str, indent: int, out: list[str]) -> None:
    if not text.endswith("\n"):
        chomp, body = "-", text
    elif text.endswith("\n\n"):
        chomp, body = "+", text[:-1]
    else:
        chomp, body = "", text[:-1]
    pad = " " * indent
    out.append(f"|{chomp}\n")
    out.extend(f"{pad}{line}\n" if line else "\n" for line in body.split("\n"))


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, int):
        return _int(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, (list, tuple)):
        return "[]"
    raise SerializationError(f"cannot write {type(value).__name__} as YAML: {value!r}")


def _string(text: str) -> str:
    if _PLAIN.fullmatch(text) and text not in _RESERVED:
        return text
    return _quoted(text)


def _quoted(text: str) -> str:
    """``text`` double-quoted (what a plain scalar cannot hold, and every flow string).
    Text with nothing ``_EXOTIC`` (no control character but tab and line feed, no
    surrogate) needs only ``"``, ``\\``, ``\n`` and ``\t`` escaped, as JSON escapes them:
    quoted in C."""
    if _EXOTIC.search(text) is None:
        return encode_basestring(text)
    surrogate = _SURROGATE.search(text)
    if surrogate:
        raise SerializationError(
            f"cannot write a lone surrogate (U+{ord(surrogate[0]):04X}) as YAML"
            f" in {text[:40]!r}: it is not a Unicode character"
        )
    return f'"{text.translate(_ESCAPES)}"'


def _int(value: int) -> str:
    if -_INT_LIMIT < value < _INT_LIMIT:
        try:
            return str(int(value))
        except ValueError:  # a lower sys.set_int_max_str_digits() limit
            pass
    raise SerializationError(
        f"cannot write an integer of more than {MAX_INT_DIGITS} digits as YAML"
        f" (it has about {int(value.bit_length() * 0.30103) + 1}); reading refuses it"
    )


def _float(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text
