"""The model APIs on the wire: one module per API, and the registry that lists them.

Everything headerlock knows about one model API lives in its module here:
the paths that identify its requests, how a body splits into config, system,
tools and messages, its volatile config keys, how its tools are listed and
named, its error body, its scripted reply and stream renderers, and its cache's
names for a changed prefix (see ``base.ModelApi``). The rest of the wire code
asks this registry (``model_api(name)``, ``detect_api``), never names a provider.
Adding a provider is one new module and one line in ``REGISTERED``: everything else here
(``NAMES``, ``model_api``, ``vocabulary``, ``tool_shapes``) is derived from ``REGISTERED``
when asked, never copied from it at import, so that line is all it takes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from headerlock.errors import ConfigError
from headerlock.formats.wire_vocabulary import WireVocabulary, merge
from headerlock.runtime.wire_tools import ToolShape
from headerlock.testing.wire.apis import (
    anthropic_messages,
    bedrock_converse,
    gemini,
    openai_chat,
    openai_responses,
)
from headerlock.testing.wire.apis.base import ModelApi, Split

REGISTERED: Final[tuple[ModelApi, ...]] = (
    openai_chat.API,
    openai_responses.API,
    anthropic_messages.API,
    bedrock_converse.API,
    gemini.API,
)
"""Every model API, in the order a request path is matched against them."""


@dataclass(frozen=True, slots=True)
class _Derived:
    """What the registry derives from one ``REGISTERED`` tuple."""

    registered: tuple[ModelApi, ...]
    by_name: Mapping[str, ModelApi]
    names: tuple[str, ...]
    vocabulary: WireVocabulary
    tool_shapes: tuple[ToolShape, ...]


_derived: list[_Derived] = []


def _now() -> _Derived:
    """The values derived from ``REGISTERED`` as it is now (kept until it changes)."""
    registered = REGISTERED
    held = _derived[0] if _derived else None
    if held is not None and held.registered is registered:
        return held
    by_name = {entry.name: entry for entry in registered}
    fresh = _Derived(
        registered,
        by_name,
        tuple(sorted(by_name)),
        merge(entry.vocabulary for entry in registered),
        tuple(entry.tool_shape for entry in registered),
    )
    _derived[:] = [fresh]
    return fresh


class _Names(Collection[str]):
    """The registered api names, sorted, read when used (what a recording's ``api`` may be)."""

    def __contains__(self, name: object) -> bool:
        return name in _now().by_name

    def __iter__(self) -> Iterator[str]:
        return iter(_now().names)

    def __len__(self) -> int:
        return len(_now().names)

    def __repr__(self) -> str:
        return repr(_now().names)


NAMES: Final[Collection[str]] = _Names()
"""The api names, sorted (what a recording's ``api`` may be); read from ``REGISTERED``."""


def vocabulary() -> WireVocabulary:
    """What every API hands the format layer (``formats.wire_vocabulary``), merged."""
    return _now().vocabulary


def tool_shapes() -> tuple[ToolShape, ...]:
    """The tool shape of every registered API, in the registry's order."""
    return _now().tool_shapes


def model_api(name: str) -> ModelApi:
    """The model API called ``name``; ``ConfigError`` naming the known ones otherwise."""
    found = _now().by_name.get(name)
    if found is None:
        raise ConfigError(f"unknown model api {name!r}; expected one of {', '.join(NAMES)}")
    return found


def find_api(method: str, path: str, body: bytes = b"") -> ModelApi | None:
    """The model API of a request, or ``None`` for any other traffic (a cloud route
    that serves several APIs needs the ``body`` to tell)."""
    if method.upper() != "POST":
        return None
    return next((entry for entry in REGISTERED if entry.matches(path, body)), None)


def detect_api(method: str, path: str, body: bytes = b"") -> str | None:
    """The name of the model API of a request (``find_api``), or ``None``."""
    found = find_api(method, path, body)
    return None if found is None else found.name


def split_body(name: str, body: bytes) -> Split:
    """Split a request body of api ``name``; ``ValueError`` when it is not a JSON object."""
    return model_api(name).split(body)


__all__ = [
    "NAMES",
    "REGISTERED",
    "ModelApi",
    "Split",
    "detect_api",
    "find_api",
    "model_api",
    "split_body",
    "tool_shapes",
    "vocabulary",
]
