"""The cache report's finding codes: what each means, which provider rule it applies,
and the finding itself.

A code is stable (tests, ``allow=`` lists and CI logs name it). ``CODES`` lists them
in the order the README's table does; ``MEANINGS`` says each in a line and ``RULES``
the provider rule behind it (each API's ``CacheRules.docs`` is the provider's page; the
HTML report shows both beside a finding).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

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
TOO_MANY_BREAKPOINTS: Final = "too-many-breakpoints"
BREAKPOINT_LOOKBACK: Final = "breakpoint-lookback"

CODES: Final = (
    TOOLS_REORDERED,
    TOOL_ADDED,
    TOOL_REMOVED,
    TOOL_CHANGED,
    SCHEMA_KEY_ORDER,
    SYSTEM_CHANGED,
    VOLATILE_CONTENT,
    CONFIG_CHANGED,
    TOOL_CHOICE_CHANGED,
    HISTORY_REWRITTEN,
    PREFIX_TOO_SHORT,
    TOO_MANY_BREAKPOINTS,
    BREAKPOINT_LOOKBACK,
)

MEANINGS: Final = {
    TOOLS_REORDERED: "the same tools as the previous request, in another order",
    TOOL_ADDED: "a tool the previous request did not have",
    TOOL_REMOVED: "a tool of the previous request is gone",
    TOOL_CHANGED: "a tool's name, description or schema changed",
    SCHEMA_KEY_ORDER: "a tool's JSON has the same data in other bytes (key order, spacing)",
    SYSTEM_CHANGED: "the system prompt changed",
    VOLATILE_CONTENT: "a date, time, UUID, long hex id or counter in the prefix differs"
    " from the previous request's (the matched text is shown)",
    CONFIG_CHANGED: "a config key that keys the cache, other than the model, changed on the"
    " same model (the structured output format, thinking, prompt_cache_key, cachedContent);"
    " another model is another session, which starts cold",
    TOOL_CHOICE_CHANGED: "tool_choice changed",
    HISTORY_REWRITTEN: "an earlier message changed or was dropped instead of only new ones"
    " being appended",
    PREFIX_TOO_SHORT: "the cacheable prefix never reaches the model's minimum in the whole"
    " session: no request is cached",
    TOO_MANY_BREAKPOINTS: "more than 4 cache_control breakpoints in one request",
    BREAKPOINT_LOOKBACK: "no breakpoint within 20 blocks after the previous request's last"
    " one: the cache it wrote is never found",
}

RULES: Final = {
    TOOLS_REORDERED: "every provider caches an exact prefix; tools render first (Anthropic:"
    " tools, system, messages; OpenAI: tools are part of the prefix, order included)",
    TOOL_ADDED: "as tools-reordered: a change in the tools invalidates all that follows",
    TOOL_REMOVED: "as tools-reordered",
    TOOL_CHANGED: "as tools-reordered",
    SCHEMA_KEY_ORDER: "the cache keys on bytes, not on parsed JSON: a schema serialized with"
    " its keys in another order is another prefix",
    SYSTEM_CHANGED: "Anthropic: system changes invalidate system and messages; OpenAI and"
    " Gemini: an exact prefix",
    VOLATILE_CONTENT: "an exact prefix: a value that changes every request breaks it there",
    CONFIG_CHANGED: "caches are per model (every provider), so each model has its own"
    " session; OpenAI: the response_format schema is in the prefix and prompt_cache_key"
    " routes it; Anthropic: thinking changes invalidate the messages; Gemini:"
    " cachedContent",
    TOOL_CHOICE_CHANGED: "Anthropic: tool_choice changes invalidate the messages (tools and"
    " system stay cached)",
    HISTORY_REWRITTEN: "an exact prefix: only appending keeps the earlier messages cached",
    PREFIX_TOO_SHORT: "Anthropic: 1,024 tokens (Sonnet, Opus 4.x), 2,048 (Haiku 3.x), 4,096"
    " (Opus 4.5, Haiku 4.5) up to a breakpoint, else silently not cached; OpenAI: 1,024"
    " tokens, then 128-token steps; Gemini: 1,024 (Flash), 4,096 (Pro)",
    TOO_MANY_BREAKPOINTS: "Anthropic: at most 4 cache_control breakpoints per request",
    BREAKPOINT_LOOKBACK: "Anthropic: a breakpoint checks for hits at most 20 blocks before it",
}


@dataclass(frozen=True, slots=True)
class CacheFinding:
    """One cache problem of a recorded session.

    ``number`` is the 1-based request; ``segment`` is ``tools``, ``system``,
    ``messages`` or ``config``; ``index`` the 0-based tool or message index (``tool``
    its name); ``offset`` the byte of the rendered prefix where it breaks (``None``
    when not a byte break); ``before``/``after`` the snippets of the previous and this
    request there; ``detail`` the cause in words (the matched text of volatile content).
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

    @property
    def where(self) -> str:
        """``tools[1] (grep)``, ``messages[3]``, ``system``, ``config``."""
        place = self.segment if self.index is None else f"{self.segment}[{self.index}]"
        return f"{place} ({self.tool})" if self.tool else place

    def line(self) -> str:
        """One readable line: request, place, byte, code and cause."""
        at = "" if self.offset is None else f" byte {self.offset}"
        return f"request {self.number} {self.where}{at}: {self.code}: {self.detail}"
