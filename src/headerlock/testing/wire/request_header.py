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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from headerlock.errors import ConfigError
from headerlock.formats.header_lock import header_id
from headerlock.formats.secrets import is_credential_name
from headerlock.formats.wire_scrub import Scrubber
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
    """The header of one request (``split`` of its body, sent to ``path?query``)."""
    api = split.api
    config = api.cache.keyed_config(split.config, api.model_of(path, split.config))
    data: dict[str, Any] = {
        "api": api.name,
        "config": scrubber.json_data(config),
        "system": scrubber.json_data(split.system),
        "tools": scrubber.json_data(split.tools),
    }
    http = _http(headers, rules.names(api))
    if http:
        data["http"] = scrubber.json_data(http)
    params = _query(query, api.unlocked_query)
    if params:
        data["query"] = scrubber.json_data(params)
    keys = frozenset(k for k in config if k in split.config)
    return LockedHeader(header_id(data), data, keys)
