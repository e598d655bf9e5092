"""What a provider's prompt cache keys on: the rules one API module gives its ``ModelApi``.

A provider caches an exact prefix of the prompt as it renders it. ``CacheRules``
says, for one model API, in which order the segments render (``order``), which
config keys key the cache and from which segment a change of each invalidates it
(``keyed``), the minimum cacheable prompt per model (``minimums``), the step a hit
grows in (OpenAI: 128 tokens), whether caching needs explicit ``cache_control``
breakpoints (Anthropic: at most four, each looking back twenty blocks), which
config keys mean the history lives on the server (no prefix to compare), and how
to read the cache figures out of a recorded response (``usage_of``).

Each API module builds one of these with its provider's documented rules and the
page they come from (``docs``); the cache report (``testing.wire.cache``) asks
only these values, never a provider's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

SEGMENTS: Final = ("tools", "system", "messages")
"""The prompt segments a cacheable prefix is made of (``config`` keys them all)."""


@dataclass(frozen=True, slots=True)
class KeyedConfig:
    """A config key that keys the cache: a change of it is a break with ``code``, and
    invalidates the prefix from ``scope`` on (``tools``: all of it)."""

    key: str
    code: str = "config-changed"
    scope: str = "tools"


@dataclass(frozen=True, slots=True)
class CacheUsage:
    """What a recorded response says the cache did, in tokens (``None``: not said).

    ``prompt`` is the provider's prompt (input) count, ``read`` the tokens read from
    the cache (``cached_tokens``, ``cache_read_input_tokens``,
    ``cachedContentTokenCount``), ``written`` those written to it (Anthropic's
    ``cache_creation_input_tokens``, OpenAI's ``cache_write_tokens``); ``miss_reason``
    the provider's own diagnosis of a miss (Anthropic's ``cache_miss_reason`` type,
    when its cache-diagnosis beta was on)."""

    prompt: int | None
    read: int | None
    written: int | None
    miss_reason: str | None = None


UsageReader = Callable[[Sequence[Any]], CacheUsage | None]
"""Reads ``CacheUsage`` from a response's JSON objects (the body, or every event's data)."""


def _at(value: Any, path: Sequence[str]) -> Any:
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def usage_reader(
    containers: Sequence[Sequence[str]],
    prompt: Sequence[str],
    read: Sequence[Sequence[str]],
    written: Sequence[Sequence[str]] = (),
    miss_reason: Sequence[Sequence[str]] = (),
) -> UsageReader:
    """A reader looking for a usage mapping at each of ``containers`` (key paths) in each
    object, the last one holding a figure winning (a stream's last chunk): ``prompt``,
    the first of ``read`` and of ``written`` paths present inside it; ``miss_reason``
    paths are read from the object itself (a text value)."""

    def figure(found: Mapping[str, Any], paths: Sequence[Sequence[str]]) -> int | None:
        for path in paths:
            value = _at(found, path)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    def reader(objects: Sequence[Any]) -> CacheUsage | None:
        seen: dict[str, int] = {}
        reason: str | None = None
        for item in objects:
            for path in miss_reason:
                found_reason = _at(item, path)
                if isinstance(found_reason, str):
                    reason = found_reason
            for container in containers:
                found = _at(item, container)
                if not isinstance(found, Mapping):
                    continue
                for name, paths in (("prompt", (prompt,)), ("read", read), ("written", written)):
                    value = figure(found, paths)
                    if value is not None:
                        seen[name] = value
        if not seen and reason is None:
            return None
        return CacheUsage(seen.get("prompt"), seen.get("read"), seen.get("written"), reason)

    return reader


def no_usage(objects: Sequence[Any]) -> CacheUsage | None:
    """The reader of an API whose responses carry no cache figures."""
    return None


@dataclass(frozen=True, slots=True)
class CacheRules:
    """One API's prompt-cache rules (see the module docstring); ``docs`` is the
    provider's page they come from, ``provider`` its display name."""

    provider: str = "the provider"
    docs: str = ""
    order: tuple[str, ...] = SEGMENTS
    keyed: tuple[KeyedConfig, ...] = (KeyedConfig("model"),)
    minimums: tuple[tuple[str, int], ...] = ()
    """``(text in the model name, minimum tokens)``, the first match wins."""
    default_minimum: int = 1024
    step: int = 1
    """A hit covers the minimum plus whole steps of this many tokens."""
    breakpoints: bool = False
    """Caching needs explicit ``marker`` breakpoints (and only what precedes one is cached)."""
    max_breakpoints: int = 4
    lookback: int = 20
    """A breakpoint finds an earlier write at most this many blocks before it."""
    marker: str = "cache_control"
    """The breakpoint key; moving it is no change of the prefix (it is stripped)."""
    marker_block: bool = False
    """The marker is a block of its own (Bedrock's ``{"cachePoint": {...}}``), not a key
    on a block: it marks the block before it, counts as no block, and is cut out whole."""
    server_side: tuple[str, ...] = ()
    """Config keys that, when set, mean the history is kept server side."""
    usage_of: UsageReader = no_usage
    arguments: str = ""
    """The key of a tool call's arguments in the API's JSON (``arguments``: a string the
    model emitted; ``input``/``args``: an object); empty: none carried."""
    stream_arguments: str = ""
    """The key of a stream event's arguments fragment that carries no tool name (Anthropic's
    ``partial_json``: the arguments text the model emitted, in pieces)."""
    stream_call_id: str = ""
    """The id key of a stream's call start that carries no arguments: they stream after
    it as text pieces under ``arguments`` (Bedrock's ``toolUse`` in ``contentBlockStart``)."""
    miss_reasons: tuple[tuple[str, str], ...] = ()
    """The provider's recorded miss reasons and the segment each names (checked against
    the finding)."""
    minimums_text: str = ""
    """The provider's minimum cacheable prompt in words (the ``prefix-too-short`` rule)."""
    notes: tuple[tuple[str, str], ...] = ()
    """``(finding code, this provider's rule for it)``: the rule shown beside a finding."""

    def note(self, code: str) -> str | None:
        """This provider's rule behind ``code`` (``None``: the common rule holds)."""
        return dict(self.notes).get(code)

    def minimum(self, model: str) -> int:
        """The minimum cacheable prompt of ``model``, in tokens."""
        lowered = model.lower()
        return next((n for text, n in self.minimums if text in lowered), self.default_minimum)

    def keyed_config(self, config: Mapping[str, Any], model: str) -> dict[str, Any]:
        """The values of the keys that key the cache (``model`` from the path or body)."""
        values = {rule.key: config.get(rule.key) for rule in self.keyed if rule.key in config}
        values["model"] = model
        return values

    def server_history(self, config: Mapping[str, Any]) -> bool:
        """Whether the request's history lives on the server (its messages are only new)."""
        return any(config.get(key) not in (None, "", {}) for key in self.server_side)

    def implicit_hit(self, shared_tokens: int, model: str) -> int:
        """The tokens an automatic (breakpoint-free) cache reads of a shared prefix."""
        least = self.minimum(model)
        if shared_tokens < least:
            return 0
        return least + (shared_tokens - least) // self.step * self.step


IMPLICIT: Final = CacheRules()
"""The default: an automatic exact-prefix cache from 1,024 tokens, keyed by the model."""
