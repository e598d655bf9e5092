"""The cache report's values: one ``RequestCache`` per request, the ``ReportData`` of a
source. Rendering (``text``, ``html``) and building (``report``) are functions of these."""

from __future__ import annotations

from dataclasses import dataclass

from headerlock.testing.wire.apis.cache_rules import CacheUsage
from headerlock.testing.wire.cache.findings import CacheFinding
from headerlock.testing.wire.cache.prefix import estimate_tokens


@dataclass(frozen=True, slots=True)
class RequestCache:
    """One request of the report, numbered as its recording numbers it (1-based).

    ``lineage`` is the 1-based number of its conversation (in order of first request),
    ``continues`` the request it continues (``None``: it starts its lineage),
    ``warm_from`` for a lineage's first request the earlier request it could read from
    anyway (a sibling agent that wrote the same tools and system first; ``None``: cold);
    ``prefix_bytes`` the size of its rendered prefix (the segments seen), ``shared_bytes``
    the part it shares with ``continues``, byte for byte; ``predicted`` the tokens the
    provider's rules would read from its cache (any earlier request's write, estimated),
    ``actual`` what the recorded response says it read and wrote (``None``: nothing
    recorded); ``findings`` its problems, the first break first.
    """

    number: int
    api: str
    model: str
    lineage: int
    prefix_bytes: int
    shared_bytes: int
    predicted: int
    actual: CacheUsage | None
    findings: tuple[CacheFinding, ...]
    continues: int | None = None
    warm_from: int | None = None

    @property
    def prefix_tokens(self) -> int:
        """Estimated tokens of the prefix (``ceil(bytes / 4)``)."""
        return estimate_tokens(self.prefix_bytes)

    @property
    def read_tokens(self) -> int:
        """The tokens read from the cache: recorded where the response says, else predicted."""
        recorded = None if self.actual is None else self.actual.read
        return self.predicted if recorded is None else recorded

    @property
    def resent_tokens(self) -> int:
        """Estimated tokens the provider processes again (the prefix minus its predicted hit)."""
        return max(0, self.prefix_tokens - self.predicted)

    @property
    def shared_percent(self) -> int:
        """The shared part of the prefix, in whole percent (rounded down)."""
        return self.shared_bytes * 100 // self.prefix_bytes if self.prefix_bytes else 0

    @property
    def first(self) -> CacheFinding | None:
        """The first finding (the break, when the prefix broke)."""
        return self.findings[0] if self.findings else None

    @property
    def how(self) -> str:
        """``continues request 2``, ``new, cold`` or ``new, warm from request 1``."""
        if self.continues is not None:
            return f"continues request {self.continues}"
        if self.warm_from is not None:
            return f"new, warm from request {self.warm_from} (same tools and system)"
        return "new, cold"


@dataclass(frozen=True, slots=True)
class Agreement:
    """Predicted against recorded cache reads, over the requests whose response says one."""

    requests: int
    predicted: int
    recorded: int

    @property
    def ratio(self) -> float | None:
        """``predicted / recorded`` (``None`` when nothing was recorded as read)."""
        return self.predicted / self.recorded if self.recorded else None


@dataclass(frozen=True, slots=True)
class ReportData:
    """The report of one source: its requests in recording order, and what it could not
    see. ``name`` names the source (its path, or ``run``); ``pinned`` is ``None`` for a
    run (its bytes are all seen); ``unseen`` lists the segments the source does not keep,
    with why in ``unseen_why``; ``approximated`` says what is rendered, not the bytes sent."""

    name: str
    pinned: bool | None
    requests: tuple[RequestCache, ...]
    unseen: tuple[str, ...] = ()
    unseen_why: str = ""
    approximated: str = ""

    @property
    def findings(self) -> tuple[CacheFinding, ...]:
        """Every finding, request by request."""
        return tuple(f for r in self.requests for f in r.findings)

    @property
    def stable(self) -> bool:
        """Whether nothing was found."""
        return not self.findings

    @property
    def lineages(self) -> int:
        """How many conversations (lineages) the source holds."""
        return max((r.lineage for r in self.requests), default=0)

    @property
    def agreement(self) -> Agreement | None:
        """Predicted vs recorded cache reads (``None``: no response says one)."""
        said = [r for r in self.requests if r.actual is not None and r.actual.read is not None]
        if not said:
            return None
        recorded = sum(r.actual.read or 0 for r in said if r.actual is not None)
        return Agreement(len(said), sum(r.predicted for r in said), recorded)
