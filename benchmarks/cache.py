"""Issue 20: the cache report's time per request at 10, 100 and 1,000 requests (paired
rounds), and promptcachelint on the same corpus sessions, side by side.

(a) A session of ``n`` requests of one agent (the same tools and long system, one new
question each: every request the same size, each a new lineage that reads what the
first wrote), and (a') ``n`` requests as conversations of five turns each (every
request continues the one before it: lineage look-ups), reported from its ``WireRun``;
the figure is the time per request at 1,000 over the time at 10 (the prefix index keeps
it flat: no request is compared with every earlier one). (b) The planted-break
corpus of ``tests/wire/cache`` recorded through the real SDKs against the loopback
model server; each session is handed to ``promptcachelint.analyze`` (explicit session,
fixed timestamps: no TTL finding) and to ``headerlock.wire.cache_report``, and the
table says what each found (promptcachelint has no Gemini support).
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.model import Check, Plan, measured, seconds
from benchmarks.stats import ratios, run_rounds
from headerlock.testing.wire.apis import model_api
from headerlock.testing.wire.cache.report import cache_report
from headerlock.testing.wire.run import WireRequest, WireRun

SIZES = (10, 100, 1_000)
SYSTEM = " ".join(f"Rule {n}: answer in plain words and cite the file." for n in range(90))
ARTIFACTS = ("CL005",)
"""promptcachelint's "prefix intact but nothing read": the scripted server reports no cache
reads, so every intact request would show it; left out of the table."""
PROVIDERS = {
    "openai.chat": "openai",
    "openai.responses": "openai",
    "anthropic.messages": "anthropic",
}


def _tool(n: int) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    return {"type": "function", "function": {"name": f"tool_{n:02d}", "parameters": schema}}


def session(n: int) -> WireRun:
    """A run of ``n`` chat requests of the same size (tools, system, one question)."""
    api = model_api("openai.chat")
    tools = [_tool(k) for k in range(12)]
    run = WireRun(None, "record", pinned=True)
    for number in range(1, n + 1):
        body = json.dumps({
            "model": "gpt-4o",
            "messages": [{"role": "system", "content": SYSTEM},
                         {"role": "user", "content": f"Question {number:05d}: what is in notes.txt?"}],
            "tools": tools,
        }, separators=(",", ":")).encode()  # fmt: skip
        split = api.split(body)
        run.requests.append(WireRequest.of(number, "/v1/chat/completions", split, body))
    return run


TURNS = 5


def conversations(n: int) -> WireRun:
    """A run of ``n`` chat requests in conversations of ``TURNS`` turns (constant size)."""
    api = model_api("openai.chat")
    tools = [_tool(k) for k in range(12)]
    run = WireRun(None, "record", pinned=True)
    for number in range(1, n + 1):
        talk, turn = divmod(number - 1, TURNS)
        messages: list[Any] = [{"role": "system", "content": SYSTEM}]
        for k in range(turn + 1):
            if k:
                messages.append({"role": "assistant", "content": f"Answer {talk:05d}.{k}."})
            messages.append({"role": "user", "content": f"Question {talk:05d}.{k}: and then?"})
        body = json.dumps(
            {"model": "gpt-4o", "messages": messages, "tools": tools}, separators=(",", ":")
        ).encode()
        run.requests.append(WireRequest.of(number, "/v1/chat/completions", api.split(body), body))
    return run


def _per_request(run: WireRun) -> float:
    started = time.perf_counter()
    report = cache_report(run)
    elapsed = time.perf_counter() - started
    assert not report.findings
    return elapsed / len(run.requests)


def flat(plan: Plan, shape: Any = session, key: str = "20a", what: str = "") -> Check:
    """(a) Time per request at each size, in alternating rounds."""
    runs = {str(n): shape(n) for n in SIZES}
    arms = {name: (lambda run=run: _per_request(run)) for name, run in runs.items()}
    times = run_rounds(arms, max(plan.rounds, 3), warmup=plan.warmup)
    shown = ", ".join(f"{n:,}: {seconds(times[str(n)])}/request" for n in SIZES)
    return measured(
        20, key, f"cache report: time per request at 1,000 / at 10 requests{what}",
        ratios(times, "1000", "10"), limit=1.5,
        a=f"1,000: {seconds(times['1000'])}/request", b=f"10: {seconds(times['10'])}/request",
        note=f"all sizes: {shown}", rounds=times,
    )  # fmt: skip


def _lint(run: WireRun, api: str) -> str:
    """What promptcachelint finds in the run: ``#request CODE`` (0-based, its own)."""
    import promptcachelint

    provider = PROVIDERS.get(api)
    if provider is None:
        return "n/a (no Gemini support)"
    recorder = promptcachelint.Recorder(keep=None)
    entries = run.recording.requests if run.recording is not None else ()
    for n, request in enumerate(run.requests):
        response = entries[n].response if n < len(entries) else None
        body = response.body if response is not None and response.kind == "json" else None
        recorder.record(
            provider, json.loads(request.body), response=body, session_id="corpus", at=1000.0 + n
        )
    report = promptcachelint.analyze(recorder.records)
    found = [
        f"#{r.index + 1} {f.code}"
        for s in report.sessions for r in s.requests for f in r.findings
        if f.code not in ARTIFACTS
    ]  # fmt: skip
    return ", ".join(found) or "-"


def _ours(run: WireRun) -> str:
    report = cache_report(run)
    return ", ".join(f"#{f.number} {f.segment} {f.code}" for f in report.findings) or "-"


def comparison(quick: bool) -> tuple[Check, list[str]]:
    """(b) The corpus through both tools: a context check and the side-by-side table
    (quick: the Anthropic sessions only, where every code applies)."""
    from tests.model_server import serve
    from tests.wire.cache.corpus import APIS, EXPECTED, applies, base, planted, record

    from headerlock.testing.wire.cache.findings import CODES

    rows = [
        ("planted", "api", "headerlock (#request segment code)", "promptcachelint (#request code)")
    ]
    right = total = linted = 0
    with serve() as server, tempfile.TemporaryDirectory() as folder:
        apis = ("anthropic.messages",) if quick else APIS
        cases = [("stable", api) for api in apis]
        cases += [(code, api) for code in CODES for api in apis if applies(code, api)]
        for code, api in cases:
            reqs = base(api) if code == "stable" else planted(code, api)
            run = record(server, api, reqs, Path(folder) / f"{code}-{api}.yaml")
            ours, theirs = _ours(run), _lint(run, api)
            rows.append((code, api, ours, theirs))
            if code != "stable":
                total += 1
                number = EXPECTED[code][0]
                right += ours.startswith(f"#{number} ") and ours.endswith(code)
                linted += theirs not in ("-",) and not theirs.startswith("n/a")
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    table = ["| " + " | ".join(r[i].ljust(widths[i]) for i in range(4)) + " |" for r in rows]
    table.insert(1, "| " + " | ".join("-" * w for w in widths) + " |")
    check = measured(
        20, "20b", "planted-break corpus: breaks found at the right request and code",
        [right / total], limit=None, unit="",
        a=f"headerlock: {right}/{total} at the planted request and code",
        b=f"promptcachelint: flagged {linted}/{total} sessions (no Gemini)",
        note="side by side: the printed table (promptcachelint's CL005 left out: the scripted"
        " server reports no cache reads)",
    )  # fmt: skip
    return check, table


def cache(plan: Plan, root: Path) -> list[Check]:
    """Both figures; the comparison table is printed."""
    checks = [
        flat(plan, session, "20a", " in a session (new lineages)"),
        flat(plan, conversations, "20a'", f" in conversations of {TURNS} turns"),
    ]
    check, table = comparison(plan.quick)
    print("\n".join(table), flush=True)
    return [*checks, check]
