"""The header of a model request, as a header lock keeps it (``formats.header_lock``).

A request's header is what its agent sends the same on every request of one role: the
api, the config keys that key the provider's cache (``CacheRules.keyed``, the model
always), the semantic HTTP headers its API module lists (``ModelApi.http_headers``) and
every query parameter that is not a credential nor a signature, the system and the tool
list as sent (order kept). Scrubbed like the rest of a recording. Its id is
``header_id``; an unpinned recording's entry keeps the id and, of its config, only the
keys the header does not hold.

``HttpRules`` are a test's own changes to the headers locked: ``"x-tenant"`` locks one
more, ``"-openai-beta"`` drops one the API module locks. A credential header is never
locked.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl

from headerlock.errors import ConfigError
from headerlock.formats.header_lock import header_id
from headerlock.formats.secrets import is_credential_name
from headerlock.formats.wire_scrub import Scrubber
from headerlock.formats.wire_vocabulary import WireVocabulary, vocabulary
from headerlock.testing.wire.apis import ModelApi, Split


@dataclass(frozen=True, slots=True)
class HttpRules:
    """Headers a test locks beyond its API's (``add``) or leaves out (``drop``)."""

    add: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()

    @classmethod
    def parse(cls, values: Sequence[str], *, where: str) -> HttpRules:
        """``["x-tenant", "-openai-beta"]``; a bad value is a ``ConfigError`` naming it."""
        if isinstance(values, str) or not isinstance(values, Sequence):
            raise ConfigError(
                f"{where}: http_headers is a list of header names, got {values!r}",
                key="http_headers",
            )
        add: list[str] = []
        drop: list[str] = []
        for value in values:
            name = value[1:] if isinstance(value, str) and value.startswith("-") else value
            if not isinstance(name, str) or not name or any(c in name for c in " :\t\r\n"):
                raise ConfigError(
                    f"{where}: http_headers: {value!r} is not a header name", key="http_headers"
                )
            if is_credential_name(name):
                raise ConfigError(
                    f"{where}: http_headers: {name!r} carries a credential; it is never recorded",
                    key="http_headers",
                )
            (drop if value.startswith("-") else add).append(name.lower())
        return cls(tuple(sorted(set(add))), tuple(sorted(set(drop))))

    def names(self, api: ModelApi) -> frozenset[str]:
        """The header names locked for a request of ``api``."""
        return frozenset(api.http_headers + self.add) - frozenset(self.drop)


@dataclass(frozen=True, slots=True)
class LockedHeader:
    """A request's header: its id, its data, and the config keys it took from the entry."""

    id: str
    data: Mapping[str, Any]
    config_keys: frozenset[str]


def _http(headers: Iterable[tuple[str, str]], names: frozenset[str]) -> dict[str, str]:
    found: dict[str, list[str]] = {}
    for name, value in headers:
        lowered = name.lower()
        if lowered in names and not is_credential_name(lowered):
            found.setdefault(lowered, []).append(value)
    return {name: ", ".join(values) for name, values in sorted(found.items())}


def _query(query: str, unlocked: Sequence[str]) -> dict[str, str]:
    found: dict[str, list[str]] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        lowered = name.lower()
        if is_credential_name(name) or lowered.startswith(tuple(unlocked)):
            continue
        found.setdefault(name, []).append(value)
    return {name: ",".join(values) for name, values in sorted(found.items())}


def request_header(
    split: Split,
    *,
    path: str,
    headers: Iterable[tuple[str, str]],
    query: str,
    scrubber: Scrubber,
    rules: HttpRules,
) -> LockedHeader:
    """The header of one request (``split`` of its body, sent to ``path?query``).

    Remembered per process by what it is made of (``_Made``): an agent sends the same
    system and tools with every request of every test, and scrubbing and hashing them
    again costs more than the rest of the request. The header returned is then shared
    by every request that made it: read-only (``HeaderBook`` copies what leaves it)."""
    api = split.api
    http = _http(headers, rules.names(api))
    params = _query(query, api.unlocked_query)
    if scrubber.redact is not None:  # a callable may answer differently each time
        return _made(split, path, http, params, scrubber)
    try:
        config = _CONFIG_TEXT.encode(split.config)
    except (TypeError, ValueError, RecursionError):
        return _made(split, path, http, params, scrubber)
    key = (
        api.name,
        path,
        config,
        split.system is None,
        split.system_raw,
        split.tools is None,
        split.tools_raw,
        tuple(http.items()),
        tuple(params.items()),
        scrubber.secrets,
    )
    words = vocabulary()
    memo = _MEMO
    if memo.words is not words:
        with memo.guard:
            memo.words, memo.made = words, {}
    held = memo.made.get(key)
    if held is not None and held[0] is api:
        return held[1]
    found = _made(split, path, http, params, scrubber)
    with memo.guard:
        if len(memo.made) >= MEMO_SIZE:
            memo.made = {}
        if memo.words is words:
            memo.made[key] = (api, found)
    return found


def _made(
    split: Split,
    path: str,
    http: dict[str, str],
    params: dict[str, str],
    scrubber: Scrubber,
) -> LockedHeader:
    """``request_header`` computed afresh."""
    api = split.api
    config = api.cache.keyed_config(split.config, api.model_of(path, split.config))
    data: dict[str, Any] = {
        "api": api.name,
        "config": scrubber.json_data(config),
        "system": scrubber.json_data(split.system),
        "tools": scrubber.json_data(split.tools),
    }
    if http:
        data["http"] = scrubber.json_data(http)
    if params:
        data["query"] = scrubber.json_data(params)
    keys = frozenset(k for k in config if k in split.config)
    return LockedHeader(header_id(data), data, keys)


MEMO_SIZE: Final = 32
"""Distinct headers remembered (more start the memo afresh: slower, never different); a
suite has few (that is what a header lock dedupes), and each holds its tools twice."""

_CONFIG_TEXT: Final = json.JSONEncoder(ensure_ascii=False, check_circular=False)
"""The config's part of a memo key: equal texts are equal parsed JSON data (a float
writes ``1.0``, an int ``1``; ``true`` is not ``1``), whatever its key order."""


class _Memo:
    """The headers made, by what made them (``request_header``): the api's name, the
    path (the model may be in it), the config's JSON text, the system's and the tools'
    bytes as sent (their values are parsed from exactly those bytes), the HTTP headers
    and query parameters locked, and the scrubber's secrets; kept while the model APIs'
    vocabulary (key shapes, id keys) is the same object, each with the api object."""

    def __init__(self) -> None:
        self.guard = threading.Lock()
        self.words: WireVocabulary | None = None
        self.made: dict[tuple[Any, ...], tuple[ModelApi, LockedHeader]] = {}


_MEMO: Final = _Memo()
