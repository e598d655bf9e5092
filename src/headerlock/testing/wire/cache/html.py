"""The cache report as one self-contained HTML page (``headerlock cache --html FILE``).

No script, no network, no external style: per recording and conversation (lineage), a
bar per request whose length is its cacheable prefix (to the conversation's longest),
split into what was read from the cache (recorded where the response says it, else
predicted), what was merely shared with the request it continues (grey: under the
minimum, or not written), and what was sent anew, with the request's findings beside it
(each explained with its own rule, in its own API's provider's words) and a legend that
says how to read it (the ``^`` of a finding's snippets included). Deterministic: the
same reports give the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Final

from headerlock.testing.wire.apis import NAMES, model_api
from headerlock.testing.wire.cache.findings import BY_CODE, CacheFinding
from headerlock.testing.wire.cache.model import ReportData, RequestCache
from headerlock.testing.wire.cache.prefix import estimate_tokens
from headerlock.testing.wire.cache.text import agreement_line, total_line

STYLE: Final = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#1d232a;
background:#fff;max-width:1200px}
h1{font-size:22px;margin:0 0 6px}h2{font-size:17px;margin:28px 0 4px;word-break:break-all}
h3{font-size:14px;margin:14px 0 6px;color:#3c4650}
p.lead{margin:0 0 12px;color:#3c4650;max-width:860px}
.legend{display:flex;flex-wrap:wrap;gap:4px 18px;margin:8px 0 4px;font-size:13px}
.legend span{display:inline-flex;align-items:center;gap:6px}
.swatch{display:inline-block;width:14px;height:14px;border-radius:3px}
.caret{font-family:ui-monospace,Menlo,monospace}
.reused{background:#2e9e5b}.shared{background:#b9c0c7}.resent{background:#e8893a}
table{border-collapse:collapse;width:100%}
th{text-align:left;font-weight:600;font-size:12px;color:#5b6670;padding:4px 8px;
border-bottom:1px solid #d5dbe0}
td{padding:5px 8px;border-bottom:1px solid #eef1f3;vertical-align:top}
td.n{width:56px;text-align:right;font-variant-numeric:tabular-nums}
td.bar{width:42%}td.figures{width:190px;font-variant-numeric:tabular-nums;color:#3c4650}
.track{display:flex;height:16px;background:#f1f3f5;border-radius:3px;overflow:hidden}
.track span{display:block;height:100%}
tr.broken td.n{color:#b3261e;font-weight:700}
.rule{color:#555;font-size:12px}
.finding{margin:0 0 6px}.code{font-family:ui-monospace,Menlo,monospace;font-weight:700;
color:#b3261e}.ok{color:#2e7d4f}
.snip{font-family:ui-monospace,Menlo,monospace;font-size:12px;color:#3c4650;
white-space:pre-wrap;word-break:break-all;margin-left:10px}
.summary{margin:4px 0 8px;color:#3c4650}.unseen{color:#8a5a00}
.lineage{color:#5b6670;font-size:12px}
"""

LEAD: Final = (
    "Providers cache an exact prefix of the prompt (tools, then system, then messages),"
    " per model and cache-keying config. Each request is numbered as its recording numbers"
    " it, and grouped with its conversation: the request it continues (its messages"
    " extend that one's) is named under its number. Each bar is one request's cacheable"
    " prefix, as long as its estimated tokens (to the longest request of the"
    " conversation). Green is what was read from the cache: the recorded read where the"
    " response says it, else the predicted one (what any earlier request of the same API,"
    " model and config wrote that this request finds). Grey is what it merely shares with"
    " the request it continues without reading it: under the model's minimum, or never"
    " written (no breakpoint). Orange is sent anew. A bar that turns orange inside a"
    " conversation marks a break; the findings beside it say where (request, segment,"
    " byte) and why (a stable code and its provider rule), with the bytes of both"
    " requests around it."
)
LEGEND: Final = (
    '<div class="legend"><span><i class="swatch reused"></i>read from the cache (recorded,'
    " else predicted)</span>"
    '<span><i class="swatch shared"></i>shared with the request it continues, not read'
    " (under the minimum, or not written)</span>"
    '<span><i class="swatch resent"></i>sent anew</span>'
    '<span><b class="caret">^</b> marks the first byte that differs from the request it'
    " continues, in a finding's before and after bytes</span></div>"
)


def _finding(finding: CacheFinding) -> str:
    rule = BY_CODE.get(finding.code)
    meaning = escape(rule.meaning if rule is not None else "", quote=True)
    at = "" if finding.offset is None else f" byte {finding.offset}"
    said = "" if finding.provider is None else f" [{finding.provider}]"
    parts = [
        f'<div class="finding" data-code="{escape(finding.code)}">'
        f'<span class="code" title="{meaning}">{escape(finding.code)}</span>'
        f" {escape(finding.where)}{at}: {escape(finding.detail)}{escape(said)}"
    ]
    for label, text in (("before", finding.before), ("after", finding.after)):
        if text is not None:
            parts.append(f'<div class="snip">{label} {escape(text)}</div>')
    if rule is not None and finding.api in NAMES:
        cache = model_api(finding.api).cache
        source = cache.docs
        cite = f" (source: {escape(source.removeprefix('https://'))})" if source else ""
        parts.append(f'<div class="rule">why: {escape(rule.explain(cache))}{cite}</div>')
    parts.append("</div>")
    return "".join(parts)


def _row(request: RequestCache, longest: int) -> str:
    scale = request.prefix_tokens * 100 / longest if longest else 0.0
    tokens = request.prefix_tokens
    read = min(request.read_tokens, tokens)
    shared = max(0, min(estimate_tokens(request.shared_bytes), tokens) - read)
    part = scale / tokens if tokens else 0.0
    reused, grey = read * part, shared * part
    resent = max(0.0, scale - reused - grey)
    broken = " broken" if request.findings else ""
    findings = (
        "".join(_finding(f) for f in request.findings) or '<span class="ok">no finding</span>'
    )
    said = []
    if request.actual is not None and request.actual.read is not None:
        said.append(f"read {request.actual.read:,}")
    if request.actual is not None and request.actual.written is not None:
        said.append(f"written {request.actual.written:,}")
    actual = f"<br>recorded cache {', '.join(said)}" if said else ""
    recorded = request.actual is not None and request.actual.read is not None
    return (
        f'<tr class="request{broken}" data-request="{request.number}"'
        f' data-shared="{request.shared_percent}" data-read="{read}">'
        f'<td class="n">{request.number}<div class="lineage">{escape(request.how)}</div></td>'
        f'<td class="bar"><div class="track" title="{request.shared_percent}% shared">'
        f'<span class="reused" style="width:{reused:.2f}%"></span>'
        f'<span class="shared" style="width:{grey:.2f}%"></span>'
        f'<span class="resent" style="width:{resent:.2f}%"></span></div></td>'
        f'<td class="figures">~{tokens:,} tokens, {request.shared_percent}% shared with the'
        f" request it continues<br>read from the cache ~{read:,}"
        f" ({f'recorded; predicted {request.predicted:,}' if recorded else 'predicted'}),"
        f" ~{request.resent_tokens:,} re-sent{actual}</td>"
        f"<td>{findings}</td></tr>"
    )


def _lineage(requests: Sequence[RequestCache]) -> list[str]:
    first = requests[0]
    longest = max(r.prefix_tokens for r in requests)
    count = f"{len(requests)} request{'' if len(requests) == 1 else 's'}"
    out = [
        f'<h3 class="session" data-lineage="{first.lineage}">conversation {first.lineage}:'
        f" {escape(first.api)}, {escape(first.model)} ({count}, from request"
        f" {first.number}: {escape(first.how)})</h3>",
        "<table><thead><tr><th>request</th><th>cacheable prefix: read / shared / sent"
        " anew</th><th>estimated tokens</th><th>findings</th></tr></thead><tbody>",
    ]
    out += [_row(r, longest) for r in requests]
    out.append("</tbody></table>")
    return out


def _report(report: ReportData) -> list[str]:
    out = [
        f'<section class="recording" data-name="{escape(report.name)}">',
        f"<h2>{escape(report.name)}</h2>",
        f'<p class="summary">{escape(total_line(report).strip())}</p>',
    ]
    agreement = agreement_line(report)
    if agreement is not None:
        out.append(f'<p class="summary agreement">{escape(agreement.strip())}</p>')
    if report.unseen:
        out.append(
            f'<p class="unseen">Not seen: {escape(", ".join(report.unseen))}'
            f" ({escape(report.unseen_why)}; pin the recording to see them)."
            " The rest is analysed.</p>"
        )
    if report.approximated:
        out.append(f'<p class="unseen">Approximated: {escape(report.approximated)}.</p>')
    lineages: dict[int, list[RequestCache]] = {}
    for request in report.requests:
        lineages.setdefault(request.lineage, []).append(request)
    for number in sorted(lineages):
        out += _lineage(lineages[number])
    out.append("</section>")
    return out


GENERATOR: Final = '<meta name="generator" content="headerlock cache">'
"""The mark in the page's head by which ``headerlock cache --html`` knows a file it wrote."""


def html_page(reports: Sequence[ReportData]) -> str:
    """The page for ``reports``, in order."""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        GENERATOR,
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>headerlock cache report</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>headerlock cache report</h1>",
        f'<p class="lead">{escape(LEAD)}</p>',
        LEGEND,
    ]
    for report in reports:
        out += _report(report)
    out.append("</body></html>")
    return "\n".join(out) + "\n"
