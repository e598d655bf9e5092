"""The model APIs on the wire: one module per API, and the registry that lists them.

Everything headerlock knows about one model API lives in its module here:
the paths that identify its requests, how a body splits into config, system,
tools and messages, its volatile config keys, how its tools are listed and
named, its error body, its scripted reply and stream renderers, and its cache's
names for a changed prefix (see ``base.ModelApi``). The rest of the wire code
asks this registry (``model_api(name)``, ``detect_api``), never names a provider.
Adding a provider is one new module and one line in ``REGISTERED``.
"""

from __future__ import annotations

from typing import Final

from headerlock.errors import ConfigError
from headerlock.formats.wire_vocabulary import WireVocabulary, merge
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

VOCABULARY: Final[WireVocabulary] = merge(entry.vocabulary for entry in REGISTERED)
"""What every API hands the format layer (``formats.wire_vocabulary``), merged."""

_BY_NAME: Final = {entry.name: entry for entry in REGISTERED}
NAMES: Final = tuple(sorted(_BY_NAME))
"""The api names, sorted (what a recording's ``api`` may be)."""


def model_api(name: str) -> ModelApi:
    """The model API called ``name``; ``ConfigError`` naming the known ones otherwise."""
    found = _BY_NAME.get(name)
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
    "VOCABULARY",
    "ModelApi",
    "Split",
    "detect_api",
    "find_api",
    "model_api",
    "split_body",
]
