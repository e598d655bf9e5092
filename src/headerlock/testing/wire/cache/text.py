"""The cache report as text: a line per request (with the request it continues), a
``total`` line, the agreement of predicted and recorded cache reads, then each finding
with the before/after bytes where it breaks.

::

    cache report: recordings/agent.yaml (pinned; 3 requests; 1 conversation)
      request  shared  prefix tok  re-sent tok  predicted  actual  written  first finding
            1      0%     1,310      1,310        0      0      -  -  (new, cold)
            2     97%     1,352        200    1,152  1,152      -  -  (continues request 1)
            3      0%     1,360      1,360        0      0      -  system-changed system
                                                                    (continues request 2)
      total: 3 requests, 64% of the prefix shared, 2,870 of 4,022 est. tokens re-sent,
        1,152 tokens cached (recorded), 1 finding
      agreement: predicted 1,152 vs recorded 1,152 cached tokens on 3 requests (ratio 1.00)

Requests are numbered as the recording numbers them (``headerlock review`` and a replay
failure use the same numbers). Numbers are estimated tokens (``ceil(bytes / 4)``) except
``actual`` and ``written``, the cache read and write the recorded response reports
(``-``: it says none). ``shared`` is what the request shares with the one it continues.
(Columns narrowed and the last line wrapped here.)
"""

from __future__ import annotations

from collections.abc import Sequence

from headerlock.testing.wire.cache.findings import CacheFinding
from headerlock.testing.wire.cache.model import ReportData, RequestCache

HEAD = "  request  shared  prefix tok  re-sent tok  predicted  actual  written  first finding"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _figure(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def request_line(request: RequestCache) -> str:
    """One request: shared %, prefix, re-sent, predicted and actual cached tokens, the
    tokens the response says were written to the cache, its first finding and lineage."""
    first = request.first
    cause = "-" if first is None else f"{first.code} {first.where}"
    usage = request.actual
    if first is None and usage is not None and usage.miss_reason is not None:
        cause = f"- [recorded cache_miss_reason {usage.miss_reason}: no break found here]"
    read = _figure(None if usage is None else usage.read)
    written = _figure(None if usage is None else usage.written)
    return (
        f"  {request.number:>7}  {request.shared_percent:>5}%  {request.prefix_tokens:>10,}"
        f"  {request.resent_tokens:>11,}  {request.predicted:>9,}  {read:>6}  {written:>7}"
        f"  {cause}  ({request.how})"
    )


def total_line(report: ReportData) -> str:
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


def agreement_line(report: ReportData) -> str | None:
    """Predicted vs recorded cached tokens and their ratio (``None``: no usage recorded)."""
    agreement = report.agreement
    if agreement is None:
        return None
    ratio = "-" if agreement.ratio is None else f"{agreement.ratio:.2f}"
    return (
        f"  agreement: predicted {agreement.predicted:,} vs recorded {agreement.recorded:,}"
        f" cached tokens on {_count(agreement.requests, 'request')} with usage (ratio {ratio})"
    )


def finding_lines(finding: CacheFinding, indent: str = "    ") -> list[str]:
    """A finding's line, then its before/after snippets."""
    lines = [f"{indent}{finding.line()}"]
    if finding.before is not None:
        lines.append(f"{indent}  before {finding.before}")
    if finding.after is not None:
        lines.append(f"{indent}  after  {finding.after}")
    return lines


def report_lines(report: ReportData) -> list[str]:
    """The whole report, one string per line."""
    pinned = {None: "sent in this run", True: "pinned", False: "unpinned"}[report.pinned]
    lines = [
        f"cache report: {report.name} ({pinned}; {_count(len(report.requests), 'request')};"
        f" {_count(report.lineages, 'conversation')})"
    ]
    if report.unseen:
        lines.append(
            f"  not seen: {', '.join(report.unseen)} ({report.unseen_why}; pin it to see"
            " them); the rest is analysed"
        )
    if report.approximated:
        lines.append(f"  approximated: {report.approximated}")
    lines.append(HEAD)
    lines += [request_line(request) for request in report.requests]
    lines.append(total_line(report))
    agreement = agreement_line(report)
    if agreement is not None:
        lines.append(agreement)
    if report.findings:
        lines.append("  findings:")
        for finding in report.findings:
            lines += finding_lines(finding)
    return lines


def break_message(report: ReportData, findings: Sequence[CacheFinding]) -> str:
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
