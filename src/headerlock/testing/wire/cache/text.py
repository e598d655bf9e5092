"""The cache report as text: a line per request, a ``total`` line, then each finding
with the before/after bytes where it breaks.

::

    cache report: recordings/agent.yaml (pinned; 3 requests; 1 session)
      request  shared  prefix tok  re-sent tok  predicted  actual  written  first finding
            1      0%       1,310        1,310          0       0        -  -
            2     97%       1,352          200      1,152   1,152        -  -
            3      0%       1,360        1,360          0       0        -  system-changed system
      total: 3 requests, 64% of the prefix shared, 2,870 of 4,022 est. tokens re-sent,
        1,152 tokens cached (recorded), 1 finding

Numbers are estimated tokens (``ceil(bytes / 4)``) except ``actual`` and ``written``,
the cache read and the cache write the recorded response reports (``-``: it says
none; the ``total`` line is one line, wrapped here). With more than one session (one
per API and model) a ``session`` line heads each run of a session's requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from headerlock.testing.wire.cache.findings import CacheFinding

if TYPE_CHECKING:
    from headerlock.testing.wire.cache.report import CacheReport, RequestCache

HEAD = "  request  shared  prefix tok  re-sent tok  predicted  actual  written  first finding"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _figure(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def request_line(request: RequestCache) -> str:
    """One request: shared %, prefix, re-sent, predicted and actual cached tokens, the
    tokens the response says were written to the cache, and its first finding."""
    first = request.first
    cause = "-" if first is None else f"{first.code} {first.where}"
    usage = request.actual
    read = _figure(None if usage is None else usage.read)
    written = _figure(None if usage is None else usage.written)
    return (
        f"  {request.number:>7}  {request.shared_percent:>5}%  {request.prefix_tokens:>10,}"
        f"  {request.resent_tokens:>11,}  {request.predicted:>9,}  {read:>6}  {written:>7}"
        f"  {cause}"
    )


def session_line(request: RequestCache) -> str:
    """The head of a run of ``request``'s session (one per API and model): a new session
    starts cold; one coming back is compared with its last request."""
    how = (
        "new: starts cold"
        if request.previous is None
        else f"continued: compared with request {request.previous}"
    )
    return f"  session {request.session}: {request.api}, {request.model} ({how})"


def total_line(report: CacheReport) -> str:
    """``total: N requests, P% of the prefix shared, R of T est. tokens re-sent, F findings``
    (and the recorded cache reads and writes, where the responses say them)."""
    requests = report.requests
    size = sum(r.prefix_bytes for r in requests)
    shared = sum(r.shared_bytes for r in requests)
    percent = shared * 100 // size if size else 0
    resent = sum(r.resent_tokens for r in requests)
    tokens = sum(r.prefix_tokens for r in requests)
    usages = [r.actual for r in requests if r.actual is not None]
    read = [u.read for u in usages if u.read is not None]
    written = [u.written for u in usages if u.written is not None]
    said = ""
    if read or written:
        figures = [f"{sum(read):,} tokens cached"] if read else []
        figures += [f"{sum(written):,} written"] if written else []
        said = f", {', '.join(figures)} (recorded)"
    return (
        f"  total: {_count(len(requests), 'request')}, {percent}% of the prefix shared,"
        f" {resent:,} of {tokens:,} est. tokens re-sent{said},"
        f" {_count(len(report.findings), 'finding')}"
    )


def finding_lines(finding: CacheFinding, indent: str = "    ") -> list[str]:
    """A finding's line, then its before/after snippets."""
    lines = [f"{indent}{finding.line()}"]
    if finding.before is not None:
        lines.append(f"{indent}  before {finding.before}")
    if finding.after is not None:
        lines.append(f"{indent}  after  {finding.after}")
    return lines


def report_lines(report: CacheReport) -> list[str]:
    """The whole report, one string per line."""
    pinned = {None: "sent in this run", True: "pinned", False: "unpinned"}[report.pinned]
    lines = [
        f"cache report: {report.name} ({pinned}; {_count(len(report.requests), 'request')};"
        f" {_count(report.sessions, 'session')})"
    ]
    if report.unseen:
        lines.append(
            f"  not seen: {', '.join(report.unseen)} ({report.unseen_why}; pin it to see"
            " them); the rest is analysed"
        )
    lines.append(HEAD)
    session = 0
    for request in report.requests:
        if report.sessions > 1 and request.session != session:
            session = request.session
            lines.append(session_line(request))
        lines.append(request_line(request))
    lines.append(total_line(report))
    if report.findings:
        lines.append("  findings:")
        for finding in report.findings:
            lines += finding_lines(finding)
    return lines


def break_message(report: CacheReport, findings: Sequence[CacheFinding]) -> str:
    """The message of ``assert_cache_stable``'s error."""
    noun = _count(len(findings), "cache finding")
    lines = [f"{noun} in {report.name}:"]
    for finding in findings:
        lines += finding_lines(finding, "  ")
    codes = ", ".join(dict.fromkeys(f.code for f in findings))
    lines.append(
        f"allow a code with assert_cache_stable(..., allow=[...]) ({codes}); every code's"
        " meaning and provider rule: README, section Cache report"
    )
    return "\n".join(lines)
