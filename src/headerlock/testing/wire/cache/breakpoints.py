"""The length and breakpoint rules: what a provider would read from its cache, and the
findings no byte comparison shows (too many breakpoints, a breakpoint beyond the
lookback, a prefix that never reaches the model's minimum, a request that marks no
breakpoint where the API caches only at breakpoints).

Blocks are counted as an explicit cache counts them: each tool, each system block,
each content block of a message (a string content is one). A breakpoint's *end* is
the end of the item that holds it (its tool, the system or its message): the prefix
cached by it. Without explicit breakpoints (``CacheRules.breakpoints`` false) the
whole prompt is the cacheable prefix, and a hit is the shared prefix from the
minimum on in whole ``step``\\ s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from headerlock.testing.wire.apis import model_api
from headerlock.testing.wire.cache import findings as codes
from headerlock.testing.wire.cache.findings import CacheFinding
from headerlock.testing.wire.cache.prefix import Item, Prefix, estimate_tokens


@dataclass(frozen=True, slots=True)
class Breakpoint:
    """A breakpoint: its 0-based block position, the byte its cached prefix ends at, and
    the item holding it (``None`` for a top-level, automatic one on the last block)."""

    position: int
    end: int
    item: Item | None


def breakpoints(prefix: Prefix) -> list[Breakpoint]:
    """The breakpoints of a request, in order (top-level ones on its last block)."""
    found: list[Breakpoint] = []
    blocks = end = 0
    for item in prefix.items:
        end += len(item.raw)
        found += [Breakpoint(blocks + mark, end, item) for mark in item.marks]
        blocks += item.blocks
    found += [Breakpoint(max(0, blocks - 1), end, None)] * prefix.top_marks
    return found


def too_many(prefix: Prefix) -> CacheFinding | None:
    """More breakpoints than the provider allows (named at the first one too many)."""
    rules = model_api(prefix.api).cache
    if not rules.breakpoints:
        return None
    marks = breakpoints(prefix)
    if len(marks) <= rules.max_breakpoints:
        return None
    extra = marks[rules.max_breakpoints]
    segment = extra.item.segment if extra.item is not None else "config"
    index = extra.item.index if extra.item is not None and segment != "system" else None
    tool = extra.item.name if extra.item is not None else None
    detail = f"{len(marks)} {rules.marker} breakpoints; at most {rules.max_breakpoints} count"
    return CacheFinding(
        prefix.number, prefix.api, codes.TOO_MANY_BREAKPOINTS, segment, detail, index, tool
    )


def lookback(prev: Prefix, cur: Prefix, shared: int) -> CacheFinding | None:
    """The continued request's last breakpoint, intact in ``cur``, that no breakpoint of
    ``cur`` finds: none lies within ``lookback`` blocks after it."""
    rules = model_api(cur.api).cache
    if not rules.breakpoints:
        return None
    before, now = breakpoints(prev), breakpoints(cur)
    if not before or not now:
        return None
    last = before[-1]
    if last.end > shared:
        return None  # the prefix broke before it: that break is the finding
    if any(last.position <= b.position <= last.position + rules.lookback for b in now):
        return None
    later = [b for b in now if b.position > last.position]
    if not later:
        return None
    nearest = later[0]
    distance = nearest.position - last.position
    item = nearest.item
    segment = item.segment if item is not None else "config"
    detail = (
        f"the continued request's last breakpoint is block {last.position}, this request's"
        f" nearest after it block {nearest.position}: {distance} blocks on, beyond the"
        f" {rules.lookback}-block lookback, so the cache written there is not found"
    )
    index = item.index if item is not None and segment != "system" else None
    return CacheFinding(cur.number, cur.api, codes.BREAKPOINT_LOOKBACK, segment, detail, index)


def cacheable(prefix: Prefix) -> int:
    """The estimated tokens of the prefix the provider could cache for this request:
    up to its last breakpoint (explicit caches) or the whole prompt."""
    if not model_api(prefix.api).cache.breakpoints:
        return estimate_tokens(prefix.size)
    marks = breakpoints(prefix)
    return estimate_tokens(marks[-1].end) if marks else 0


def no_breakpoint(prefix: Prefix) -> CacheFinding | None:
    """A request above its model's minimum that marks no breakpoint (no block one, no
    top-level one), on an API that caches only at breakpoints: it writes nothing."""
    rules = model_api(prefix.api).cache
    if not rules.breakpoints or prefix.unseen or breakpoints(prefix):
        return None
    tokens = estimate_tokens(prefix.size)
    least = rules.minimum(prefix.model)
    if tokens < least:
        return None
    fix = (  # a marker block has no top-level form (Bedrock's cachePoint)
        f"add a {rules.marker} block after the last block to cache"
        if rules.marker_block
        else f"mark the last block, or set a top-level {rules.marker}"
    )
    detail = (
        f"~{tokens:,} tokens and no {rules.marker} breakpoint: {rules.provider} writes"
        f" nothing to its cache ({prefix.model} caches from {least:,} tokens up to a"
        f" breakpoint; {fix})"
    )
    return CacheFinding(prefix.number, prefix.api, codes.NO_BREAKPOINT, "config", detail)


def too_short(session: Sequence[Prefix]) -> CacheFinding | None:
    """A lineage of two or more requests whose cacheable prefix never reaches the model's
    minimum: nothing is ever cached (named at its first request that asks to cache),
    worded with the rules of its own API and model. Not judged when a segment is unseen
    (its length is unknown)."""
    if len(session) < 2 or any(p.unseen for p in session):
        return None
    rules = model_api(session[0].api).cache
    asking = [p for p in session if not rules.breakpoints or breakpoints(p)]
    if not asking:
        return None
    if any(cacheable(p) >= rules.minimum(p.model) for p in asking):
        return None
    first = asking[0]
    longest = max(cacheable(p) for p in asking)
    where = "up to its last breakpoint" if rules.breakpoints else "in all"
    detail = (
        f"at most ~{longest:,} tokens {where} in the {len(session)} requests of this"
        f" conversation; {rules.provider} caches {first.model} from"
        f" {rules.minimum(first.model):,}"
    )
    marks = breakpoints(first)
    held = marks[-1].item if marks else None
    segment = (
        held.segment if held is not None else first.items[-1].segment if first.items else "messages"
    )
    index = held.index if held is not None and segment != "system" else None
    return CacheFinding(
        first.number, first.api, codes.PREFIX_TOO_SHORT, segment, detail, index,
        held.name if held is not None else None,
    )  # fmt: skip
