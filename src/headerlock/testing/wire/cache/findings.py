"""The cache report's finding codes as one registry: each ``CacheRule`` says its code,
what it means, the provider rule behind it, the APIs it applies to and which check
finds it; and the finding itself.

A code is stable (tests, ``allow=`` lists and CI logs name it). ``RULES`` lists them in
the order the README's table does. A provider's own wording of a rule is data of its
API (``CacheRules.notes``, ``CacheRules.minimums_text``), so a finding is explained with
the rules of its own API only (``CacheRule.explain``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from headerlock.testing.wire.apis.cache_rules import CacheRules


@dataclass(frozen=True, slots=True)
class CacheRule:
    """One finding code: ``meaning`` in a line, the common provider ``rule`` behind it,
    ``check`` the part of the report that finds it, and ``breakpoints_only`` whether it
    applies only to APIs that cache at explicit breakpoints (else to every API)."""

    code: str
    meaning: str
    rule: str
    check: str
    breakpoints_only: bool = False

    def applies(self, rules: CacheRules) -> bool:
        """Whether an API with ``rules`` can have this finding."""
        return rules.breakpoints or not self.breakpoints_only

    def explain(self, rules: CacheRules) -> str:
        """The provider rule, in the words of the API's own provider where it has them."""
        if self.code == PREFIX_TOO_SHORT and rules.minimums_text:
            return rules.minimums_text
        return rules.note(self.code) or self.rule


_PREFIX = "the prefix diff of a request against the request it continues (breaks.step)"
_TOOLS = (
    "every provider caches an exact prefix; tools render first, in order, and a change"
    " in them invalidates everything after"
)

RULES: Final = (
    CacheRule("tools-reordered", "the same tools as the request it continues, in another"
              " order", _TOOLS, _PREFIX),
    CacheRule("tool-added", "a tool the request it continues did not have", _TOOLS, _PREFIX),
    CacheRule("tool-removed", "a tool of the request it continues is gone", _TOOLS, _PREFIX),
    CacheRule("tool-changed", "a tool's name, description or schema changed", _TOOLS, _PREFIX),
    CacheRule("schema-key-order", "a tool's JSON has the same data in other bytes (key"
              " order, spacing)", "the cache keys on bytes, not on parsed JSON: a schema"
              " serialized with its keys in another order is another prefix", _PREFIX),
    CacheRule("system-changed", "the system prompt changed", "an exact prefix: the system"
              " renders after the tools, so a change invalidates it and the messages",
              _PREFIX),
    CacheRule("volatile-content", "a date, time, UUID, long hex id or counter in the prefix"
              " differs from the continued request's (the matched text is shown)",
              "an exact prefix: a value that changes every request breaks it there", _PREFIX),
    CacheRule("config-changed", "the model or a config key that keys the cache changed"
              " inside one conversation (a new conversation on another model is no finding)",
              "caches are per model and per cache-keying config", _PREFIX),
    CacheRule("tool-choice-changed", "tool_choice changed", "tool_choice changes invalidate"
              " the messages", _PREFIX),
    CacheRule("history-rewritten", "an earlier message changed or was dropped, or a tool"
              " call's arguments were sent back in other bytes than the model emitted",
              "an exact prefix: only appending keeps the earlier messages cached, and the"
              " provider renders a sent-back tool call from the bytes sent",
              _PREFIX + "; the sent assistant turn against the recorded response (arguments)"),
    CacheRule("prefix-too-short", "no request of the conversation reaches the model's"
              " minimum cacheable prompt: nothing is ever cached", "each provider has a"
              " minimum cacheable prompt per model", "the lineage's longest cacheable"
              " prefix against the model's minimum (breakpoints.too_short)"),
    CacheRule("no-breakpoint", "a request above the minimum marks no cache breakpoint, on an"
              " API that caches only at breakpoints: nothing is written", "explicit caches"
              " cache only up to a breakpoint", "breakpoints.no_breakpoint",
              breakpoints_only=True),
    CacheRule("too-many-breakpoints", "more breakpoints in one request than the provider"
              " allows", "at most a few breakpoints count per request",
              "breakpoints.too_many", breakpoints_only=True),
    CacheRule("breakpoint-lookback", "no breakpoint close enough after the continued"
              " request's last one: the cache it wrote is never found", "a breakpoint"
              " finds an earlier write only a few blocks before it", "breakpoints.lookback",
              breakpoints_only=True),
)  # fmt: skip

BY_CODE: Final = {rule.code: rule for rule in RULES}
CODES: Final = tuple(rule.code for rule in RULES)
MEANINGS: Final = {rule.code: rule.meaning for rule in RULES}

TOOLS_REORDERED: Final = "tools-reordered"
TOOL_ADDED: Final = "tool-added"
TOOL_REMOVED: Final = "tool-removed"
TOOL_CHANGED: Final = "tool-changed"
SCHEMA_KEY_ORDER: Final = "schema-key-order"
SYSTEM_CHANGED: Final = "system-changed"
VOLATILE_CONTENT: Final = "volatile-content"
CONFIG_CHANGED: Final = "config-changed"
TOOL_CHOICE_CHANGED: Final = "tool-choice-changed"
HISTORY_REWRITTEN: Final = "history-rewritten"
PREFIX_TOO_SHORT: Final = "prefix-too-short"
NO_BREAKPOINT: Final = "no-breakpoint"
TOO_MANY_BREAKPOINTS: Final = "too-many-breakpoints"
BREAKPOINT_LOOKBACK: Final = "breakpoint-lookback"


@dataclass(frozen=True, slots=True)
class CacheFinding:
    """One cache problem of a recorded session.

    ``number`` is the 1-based request (the recording's order); ``segment`` is ``tools``,
    ``system``, ``messages`` or ``config``; ``index`` the 0-based tool or message index
    (``tool`` its name, or the tool call's); ``offset`` the byte of the rendered prefix
    where it breaks (``None`` when not a byte break); ``before``/``after`` the snippets
    of the continued request and this one there; ``detail`` the cause in words;
    ``provider`` the recorded ``cache_miss_reason`` checked against it (``None``: none
    recorded).
    """

    number: int
    api: str
    code: str
    segment: str
    detail: str
    index: int | None = None
    tool: str | None = None
    offset: int | None = None
    before: str | None = None
    after: str | None = None
    provider: str | None = None

    @property
    def where(self) -> str:
        """``tools[1] (grep)``, ``messages[3]``, ``system``, ``config``."""
        place = self.segment if self.index is None else f"{self.segment}[{self.index}]"
        return f"{place} ({self.tool})" if self.tool else place

    def line(self) -> str:
        """One readable line: request, place, byte, code and cause."""
        at = "" if self.offset is None else f" byte {self.offset}"
        said = "" if self.provider is None else f" [{self.provider}]"
        return f"request {self.number} {self.where}{at}: {self.code}: {self.detail}{said}"
