"""What the model APIs hand the format layer: the credentials their clients carry, the
keys of their ids and the volatile fields of their answers.

The format layer scrubs, tokenizes and normalizes by these values and never names a
provider. Each API module declares its own ``WireVocabulary``; the registry
(``headerlock.testing.wire.apis.vocabulary``) merges them, and the package root
(``headerlock/__init__.py``) installs it as this module's source
(``vocabulary_source.provide``): it is loaded on first use and asked on every use (the
registry keeps the merge until its list changes), so every path that scrubs sees every
registered API's credentials, whichever modules it imported. Nothing is ever scrubbed
with less: without a source, ``vocabulary`` raises.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from headerlock.formats import vocabulary_source

SecretParts = Callable[[str], list[str]]
"""The secrets inside one credential header's value (a signature's key id and signature)."""


@dataclass(frozen=True, slots=True)
class TextShape:
    """A credential found by its shape in any text: ``pattern`` (a regular expression),
    and ``hints``, substrings one of which every match holds (a text holding none is not
    searched)."""

    hints: tuple[str, ...]
    pattern: str


@dataclass(frozen=True, slots=True)
class Credentials:
    """The credentials one API's clients carry.

    ``env``: environment variables whose values are secrets; ``url_env``: base URL
    variables whose URLs' credentials are; ``headers``: request headers (lowercase) that
    carry a credential; ``key_shapes``: ``(label, pattern)`` of well-known keys at their
    real lengths, looked for in a URL; ``text_shapes``: keys looked for in any text;
    ``header_parts``: the secrets inside a credential header's value.
    """

    env: tuple[str, ...] = ()
    url_env: tuple[str, ...] = ()
    headers: tuple[str, ...] = ()
    key_shapes: tuple[tuple[str, str], ...] = ()
    text_shapes: tuple[TextShape, ...] = ()
    header_parts: tuple[SecretParts, ...] = ()


@dataclass(frozen=True, slots=True)
class WireVocabulary:
    """The keys the format layer treats by what they mean, not by their name.

    ``message_ids``: keys whose values in a request's messages are ids (tokenized);
    ``config_ids``: top-level config keys that are ids; ``response_ids``: keys whose
    values in an answer are ids (normalized to ``prefix<<id:N>>``); ``times``: keys
    whose values in an answer are times; ``fixed``: keys whose value in an answer is
    stored as the given one when it has that value's type (a fingerprint, a latency, a
    stream's padding).
    """

    credentials: Credentials = Credentials()
    message_ids: frozenset[str] = frozenset()
    config_ids: frozenset[str] = frozenset()
    response_ids: frozenset[str] = frozenset()
    times: frozenset[str] = frozenset()
    fixed: tuple[tuple[str, Any], ...] = ()


NOTHING: WireVocabulary = WireVocabulary()
"""The vocabulary of an API that declares none."""


def _union(values: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    """Every value once, in first-seen order."""
    return tuple(dict.fromkeys(v for group in values for v in group))


def merge(vocabularies: Iterable[WireVocabulary]) -> WireVocabulary:
    """One vocabulary holding all of ``vocabularies`` (first-seen order; for a fixed key
    declared twice, the first value)."""
    given = list(vocabularies)
    creds = [v.credentials for v in given]
    credentials = Credentials(
        env=_union(c.env for c in creds),
        url_env=_union(c.url_env for c in creds),
        headers=_union(c.headers for c in creds),
        key_shapes=tuple(dict.fromkeys(s for c in creds for s in c.key_shapes)),
        text_shapes=tuple(dict.fromkeys(s for c in creds for s in c.text_shapes)),
        header_parts=tuple(dict.fromkeys(p for c in creds for p in c.header_parts)),
    )
    fixed: dict[str, Any] = {}
    for vocabulary in given:
        for key, value in vocabulary.fixed:
            fixed.setdefault(key, value)
    return WireVocabulary(
        credentials,
        frozenset().union(*(v.message_ids for v in given)),
        frozenset().union(*(v.config_ids for v in given)),
        frozenset().union(*(v.response_ids for v in given)),
        frozenset().union(*(v.times for v in given)),
        tuple(fixed.items()),
    )


_loaded: list[Callable[[], Any]] = []
"""The source called once already (its first call, which loads the registry, is guarded)."""
_guard = threading.RLock()


def vocabulary() -> WireVocabulary:
    """The vocabulary of every registered model API (from the installed source,
    ``vocabulary_source``, asked each time: a registry that changed is seen)."""
    sources = vocabulary_source.SOURCES
    if not sources:
        raise RuntimeError("no model API vocabulary was provided (headerlock/__init__)")
    source = sources[0]
    if _loaded and _loaded[0] is source:
        found = source()
    else:
        with _guard:
            found = source()
            _loaded[:] = [source]
    if not isinstance(found, WireVocabulary):
        raise TypeError(f"the vocabulary source gave {type(found).__name__}")
    return found
