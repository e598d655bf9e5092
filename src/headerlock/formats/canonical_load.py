"""Loading a long recording headerlock wrote itself without parsing each repeat again.

A recording of an agent session repeats the conversation in every request: request
``n`` holds the ``n - 1`` messages before it again, byte for byte. ``load_repeating``
cuts the text where ``canonical_yaml.dump`` puts the items of a top-level list
(``requests``) and of one list in each of them (``messages``), reads each distinct
message text once with the line reader (``canonical_read``) and the rest of each item
whole, and shares the read message among the items that repeat it.

It is only a shortcut: every piece is exactly what ``dump`` writes for what was read
from it (the line reader takes nothing else; a message, read dedented, is checked
against ``dump_item`` at its indent), so the whole text is ``dump`` of the result,
which the strict loader reads back equal (the emitter's round trip, which its tests
check). Any other text (written by hand, another layout, or one the strict loader
refuses: duplicate keys, tags, anchors, depth) gives ``None``, and the caller loads it
strictly, with the strict loader's result or error. The shared messages are
read-only, as any loaded recording is.
"""

from __future__ import annotations

import re
from typing import Any, Final

from headerlock.errors import HeaderlockError
from headerlock.formats.canonical_read import read
from headerlock.formats.canonical_yaml import dump_item
from headerlock.formats.strict_yaml import paused_gc

MIN_CHARS: Final = 1 << 20
"""Shorter texts are loaded strictly: the shortcut pays off on long sessions."""
MIN_ITEMS: Final = 8
"""Texts with fewer top-level list items are loaded strictly too: few requests repeat
little, and checking a long stream's text costs more than loading it (format 2)."""
_OUTER_END: Final = re.compile(r"\n(?![ \n]|- )")
"""The end of a top-level list: a line at column 0 that is not an item's."""
_INNER_END: Final = re.compile(r"\n(?!\n|   |  - )")
"""The end of a list in a top-level item: a line before column 3 that is not an item's."""
_OUTER_DEPTH: Final = 1
"""The nesting above an outer item loaded alone (``- item``) that the whole text adds."""
_INNER_DEPTH: Final = 3
"""The same for an inner item: the top mapping, the outer list, the outer item."""


class _NotCanonical(Exception):
    """A piece is not what ``dump`` writes: load the text strictly."""


def load_repeating(
    text: str, *, max_depth: int, outer: str = "requests", inner: str = "messages"
) -> Any | None:
    """The data of ``text`` (what ``strict_yaml.loads`` gives), or ``None`` when the
    text is not one ``dump`` wrote with a non-empty ``outer`` list at the top."""
    if len(text) < MIN_CHARS or not _has_items(text, MIN_ITEMS):
        return None
    try:
        with paused_gc():
            return _load(text, max_depth, outer, inner)
    except (_NotCanonical, HeaderlockError, RecursionError, ValueError, TypeError):
        return None


def _has_items(text: str, count: int) -> bool:
    """Whether ``text`` has at least ``count`` lines that start a top-level item
    (found without reading a long text to its end)."""
    at = 0
    for _ in range(count):
        at = text.find("\n- ", at) + 1
        if not at:
            return False
    return True


def _whole(text: str, max_depth: int) -> Any:
    """``text`` read by the line reader (it is what ``dump`` writes of the result)."""
    data = read(text, max_depth=max_depth)
    if data is None:
        raise _NotCanonical
    return data


def _load(text: str, max_depth: int, outer: str, inner: str) -> Any:
    head = f"{outer}:\n"
    if text.startswith(f"{head}- "):
        at = 0
    else:
        at = text.find(f"\n{head}- ") + 1
        if at == 0:
            raise _NotCanonical
    start = at + len(head)
    end = _end(_OUTER_END, text, start)
    top = _whole(f"{text[:at]}{outer}: []\n{text[end:]}", max_depth)
    if not isinstance(top, dict) or top.get(outer) != []:
        raise _NotCanonical
    seen: dict[str, Any] = {}
    items = text[start + 2 : end - 1].split("\n- ")  # each item without "- " and "\n"
    top[outer] = [_item(f"- {item}\n", max_depth, inner, seen) for item in items]
    return top


def _item(text: str, max_depth: int, inner: str, seen: dict[str, Any]) -> Any:
    """One outer item; its ``inner`` list's items loaded once per distinct text."""
    head = f"\n  {inner}:\n  - "
    at = text.find(head)
    if at < 0:
        return _one(text, max_depth - _OUTER_DEPTH, text, 0)
    start = at + len(head) - len("  - ")
    end = _end(_INNER_END, text, start)
    rest = f"{text[: at + 1]}  {inner}: []\n{text[end:]}"
    item = _one(rest, max_depth - _OUTER_DEPTH, rest, 0)
    if not isinstance(item, dict) or item.get(inner) != []:
        raise _NotCanonical
    values = []
    for piece in text[start + 4 : end - 1].split("\n  - "):  # without "  - " and "\n"
        value = seen.get(piece, seen)
        if value is seen:  # dedented by the two spaces of its indent, loaded alone
            alone = f"- {piece.replace(chr(10) + '  ', chr(10))}\n"
            value = seen.setdefault(
                piece, _one(alone, max_depth - _INNER_DEPTH, f"  - {piece}\n", 2)
            )
        values.append(value)
    item[inner] = values
    return item


def _end(pattern: re.Pattern[str], text: str, start: int) -> int:
    """Where the list starting at ``start`` ends: the start of the line ``pattern``
    finds (the list's text ends with a line break)."""
    found = pattern.search(text, start)
    if found is None:
        raise _NotCanonical
    return found.start() + 1


def _one(source: str, max_depth: int, written: str, indent: int) -> Any:
    """The one item of ``source`` (``- item`` at indent 0) read by the line reader,
    checked to be ``written``: what ``dump_item`` writes of it at ``indent`` (the line
    reader took ``source`` only if it is that at indent 0)."""
    data = read(source, max_depth=max_depth)
    if not isinstance(data, list) or len(data) != 1:
        raise _NotCanonical
    if (indent or written is not source) and dump_item(data[0], indent) != written:
        raise _NotCanonical
    return data[0]
