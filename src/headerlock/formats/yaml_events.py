"""Plain data from a YAML parser's events (libyaml's when present), strictly.

The YAML 1.2 core schema: ``12:30``, ``yes``, ``0b1`` and ``2024-01-02`` are
strings, ``017`` is 17, ``0o17`` is 15. Refused: aliases and anchors (alias bombs),
merge keys, duplicate keys, non-string keys, tags other than the core ones, nesting
deeper than the limit, integers of more than ``MAX_INT_DIGITS`` digits and lone
surrogates; every error names the file and line. ``strict_yaml.loads`` uses this for
any text ``canonical_read`` does not take (imported then: PyYAML takes a while to
import, and a run that reads only what headerlock wrote never needs it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

import yaml

from headerlock.errors import YamlError
from headerlock.formats.canonical_yaml import MAX_INT_DIGITS

YAML_C: Final = hasattr(yaml, "CSafeLoader")
"""Whether PyYAML's C (libyaml) parser is available (it is used when it is)."""

_Parser: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TAG: Final = "tag:yaml.org,2002:"
_CORE: Final = re.compile(
    r"(?P<null>~|null|Null|NULL)"
    r"|(?P<bool>true|True|TRUE|false|False|FALSE)"
    r"|(?P<int>[-+]?[0-9]+)"
    r"|(?P<oct>0o[0-7]+)"
    r"|(?P<hex>0x[0-9a-fA-F]+)"
    r"|(?P<float>[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?)"
    r"|(?P<inf>[-+]?\.(?:inf|Inf|INF))"
    r"|(?P<nan>\.(?:nan|NaN|NAN))"
)
_MAYBE_NOT_STR: Final = frozenset("~nNtTfF0123456789+-.")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_INT_LIMIT: Final = 10**MAX_INT_DIGITS
_REFUSED_TAGS: Final = frozenset(f"{_TAG}{t}" for t in ("binary", "set", "omap", "pairs"))
_MAP_TAGS: Final = (None, "!", f"{_TAG}map")
_SEQ_TAGS: Final = (None, "!", f"{_TAG}seq")


class _Refused(Exception):
    """A problem found while building; ``line`` is 0-based."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


def _line(event: yaml.Event) -> int | None:
    return event.start_mark.line if event.start_mark is not None else None


def _core(value: str, event: yaml.Event) -> Any:
    """A plain scalar under the YAML 1.2 core schema."""
    if not value:
        return None
    if value[0] not in _MAYBE_NOT_STR:
        return value
    match = _CORE.fullmatch(value)
    if match is None:
        return value
    kind = match.lastgroup
    if kind == "null":
        return None
    if kind == "bool":
        return value[0] in "tT"
    if kind == "int":
        digits = value.lstrip("+-").lstrip("0")
        if len(digits) > MAX_INT_DIGITS:
            raise _Refused(_too_long(len(digits)), _line(event))
        if len(value) < 20:  # the common case
            return int(value)
        try:
            number = int(digits)
        except ValueError:  # a lower sys.set_int_max_str_digits() limit
            raise _Refused(_too_long(len(digits)), _line(event)) from None
        return -number if value[0] == "-" else number
    if kind in ("oct", "hex"):
        number = int(value[2:], 8 if kind == "oct" else 16)
        if number >= _INT_LIMIT:
            base = "octal" if kind == "oct" else "hexadecimal"
            raise _Refused(_too_long(len(value) - 2, base=base), _line(event))
        return number
    if kind == "inf":
        return float("-inf") if value[0] == "-" else float("inf")
    if kind == "nan":
        return float("nan")
    return float(value)


def _too_long(digits: int, *, base: str = "decimal") -> str:
    what = f"{digits} digits" if base == "decimal" else f"{digits} {base} digits"
    return (
        f"integer of {what} is too long (more than {MAX_INT_DIGITS} decimal digits);"
        " quote it to keep it as a string"
    )


def _tagged(tag: str, value: str, event: yaml.Event) -> Any:
    """A scalar with an explicit tag: only the core tags, each strictly."""
    if tag == f"{_TAG}str" or tag == "!" or tag == f"{_TAG}timestamp":
        return value
    kind = tag[len(_TAG) :] if tag.startswith(_TAG) else None
    if kind in ("null", "bool", "int", "float"):
        result = _core(value, event)
        if _CORE_KINDS[kind](result):
            return float(result) if kind == "float" else result
        raise _Refused(f"{value!r} is not a YAML 1.2 core !!{kind}", _line(event))
    raise _Refused(_tag_problem(tag), _line(event))


_CORE_KINDS: Final[dict[str, Callable[[Any], bool]]] = {
    "null": lambda result: result is None,
    "bool": lambda result: isinstance(result, bool),
    "int": lambda result: isinstance(result, int) and not isinstance(result, bool),
    "float": lambda result: isinstance(result, (int, float)) and not isinstance(result, bool),
}


def _tag_problem(tag: str) -> str:
    if tag in _REFUSED_TAGS:
        return f"the tag {tag!r} is not allowed here"
    return f"could not determine a constructor for the tag {tag!r}"


_MAPPING: Final = yaml.MappingStartEvent
_SEQUENCE: Final = yaml.SequenceStartEvent
_SCALAR: Final = yaml.ScalarEvent


class _Frame:
    """An open mapping (keys and values alternate in ``items``) or sequence."""

    __slots__ = ("items", "lines", "mapping", "start")

    def __init__(self, start: Any, *, mapping: bool) -> None:
        self.items: list[Any] = []
        self.lines: list[Any] = []  # where a mapping's keys start (marks), for errors
        self.mapping = mapping
        self.start = start


def _build(next_event: Callable[[], Any], max_depth: int) -> Any:
    """Plain data from a stream of parser events, refusing what strict YAML refuses.

    Equal strings share one object (keys and values repeat across a recording's
    events: this keeps a loaded log a fraction of its size otherwise).
    """
    stack: list[_Frame] = []
    documents = 0
    maybe_not_str = _MAYBE_NOT_STR
    strings: dict[str, str] = {}
    shared = strings.setdefault
    scalar_kind, mapping_kind, sequence_kind = _SCALAR, _MAPPING, _SEQUENCE
    mapping_end, sequence_end = yaml.MappingEndEvent, yaml.SequenceEndEvent
    top: _Frame | None = None  # the innermost open collection (stack[-1])
    while True:
        event = next_event()
        kind = event.__class__
        plain: str | None = None
        if kind is scalar_kind:
            if event.anchor is not None:
                raise _Refused("anchors and aliases are not allowed", _line(event))
            value: str = event.value
            if event.style == '"':  # escapes like \ud800 can make a lone surrogate
                surrogate = _SURROGATE.search(value)
                if surrogate is not None:
                    raise _Refused(_surrogate(surrogate[0]), _line(event))
            if event.tag is not None:
                data: Any = _tagged(event.tag, value, event)
            elif not event.implicit[0]:
                data = shared(value, value)
            else:
                plain = value
                if value and value[0] not in maybe_not_str:
                    data = shared(value, value)
                elif value.isdigit() and value.isascii() and len(value) < 19:
                    data = int(value)  # the common case: seq, turn, step
                else:
                    data = _core(value, event)
                    if data.__class__ is str:
                        data = shared(data, data)
        elif kind is mapping_kind or kind is sequence_kind:
            mapping = kind is mapping_kind
            if event.anchor is not None:
                raise _Refused("anchors and aliases are not allowed", _line(event))
            if event.tag not in (_MAP_TAGS if mapping else _SEQ_TAGS):
                raise _Refused(_tag_problem(event.tag), _line(event))
            if len(stack) >= max_depth:
                raise _Refused(f"nesting deeper than {max_depth} levels", _line(event))
            top = _Frame(event, mapping=mapping)
            stack.append(top)
            continue
        elif kind is mapping_end:
            frame = stack.pop()
            items = frame.items
            data = dict(zip(items[::2], items[1::2], strict=True))
            if len(data) * 2 != len(items):
                _duplicate(frame)
            event = frame.start
            top = stack[-1] if stack else None
        elif kind is sequence_end:
            frame = stack.pop()
            data = frame.items
            event = frame.start
            top = stack[-1] if stack else None
        elif kind is yaml.AliasEvent:
            raise _Refused("anchors and aliases are not allowed", _line(event))
        elif kind is yaml.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise _Refused(
                    "expected a single document in the stream, but found another document",
                    _line(event),
                )
            continue
        elif kind is yaml.StreamEndEvent or event is None:
            return None
        else:
            continue
        if top is None:
            return _rest(next_event, data)
        items = top.items
        if top.mapping and not len(items) & 1:
            if plain == "<<":
                raise _Refused("merge keys (<<) are not allowed", _line(event))
            if data.__class__ is not str:
                raise _Refused(f"mapping keys must be strings, got {data!r}", _line(event))
            top.lines.append(event.start_mark)
        items.append(data)


def _rest(next_event: Callable[[], Any], root: Any) -> Any:
    """``root`` once the stream has no second document."""
    while True:
        event = next_event()
        if event is None or event.__class__ is yaml.StreamEndEvent:
            return root
        if event.__class__ is yaml.DocumentStartEvent:
            raise _Refused(
                "expected a single document in the stream, but found another document",
                _line(event),
            )


def _duplicate(frame: _Frame) -> None:
    """Raise for the first key of ``frame`` that repeats an earlier one."""
    first: dict[str, int | None] = {}
    for key, mark in zip(frame.items[::2], frame.lines, strict=True):
        line = mark.line if mark is not None else None
        if key in first:
            earlier = first[key]
            where = f" (first at line {earlier + 1})" if earlier is not None else ""
            raise _Refused(f"duplicate key {key!r}{where}", line)
        first[key] = line


def _surrogate(char: str) -> str:
    return f"found a lone surrogate (U+{ord(char):04X}), which is not a Unicode character"


def parse(text: str, *, path: str, pure: bool, max_depth: int) -> Any:
    """The data of YAML ``text``; errors are ``YamlError`` naming ``path`` and the line
    (``pure``: PyYAML's pure-Python parser, even when libyaml is present)."""
    parser: Any = None
    try:
        parser = yaml.SafeLoader(text) if pure or not YAML_C else _Parser(text)
        return _build(parser.get_event, max_depth)
    except _Refused as error:
        line = error.line + 1 if error.line is not None else None
        raise YamlError(str(error), path=path, line=line) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = str(error.problem or error.context or "invalid YAML")
        lines = text.splitlines()
        if mark and mark.line < len(lines) and "\t" in lines[mark.line]:
            problem += " (a tab: YAML indents with spaces only)"
        raise YamlError(problem, path=path, line=mark.line + 1 if mark else None) from None
    except yaml.YAMLError as error:
        raise YamlError(str(error).replace("\n", " "), path=path) from None
    except UnicodeEncodeError as error:  # libyaml is given UTF-8: a lone surrogate in ``text``
        line = text.count("\n", 0, error.start) + 1
        raise YamlError(_surrogate(text[error.start]), path=path, line=line) from None
    except RecursionError:
        raise YamlError(f"nesting deeper than {max_depth} levels", path=path) from None
    finally:
        if parser is not None:
            parser.dispose()
