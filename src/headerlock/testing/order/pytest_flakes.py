"""``headerlock flakes`` on pytest tests: run the selected ``headerlock_wire`` tests in
fresh pytest processes under hash seeds ``0..runs-1`` and report the tests whose
request headers differ between runs.

Each run is ``python -m pytest SELECTION [-k EXPR] --headerlock-flakes-dump DIR``
with ``PYTHONHASHSEED`` set (the plugin's ``flake_probe``): the tests run sealed,
answered from their recordings (or their marker's script), record nothing and
write the header of every request they sent (api, path, config, system, tools) to
DIR, one JSON file per test. A test flakes when two runs wrote different headers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from headerlock.errors import HeaderlockError, InputFileError
from headerlock.formats.explain import changed_paths
from headerlock.formats.tool_sets import compare_tool_names
from headerlock.runtime.plugins import subprocess_env

_POLL: Final = 0.2
"""How often a wait for a run looks for a stop (Ctrl-C)."""
OPTION: Final = "--headerlock-flakes-dump"
"""The plugin option a run passes (``headerlock.testing.plugin.flake_probe``)."""


def selects_tests(names: Sequence[str], keyword: str | None, fixtures: Path) -> bool:
    """Whether ``headerlock flakes`` runs pytest tests: ``-k``, a node id or test path,
    or no name at all where there is no (default) fixtures directory."""
    if keyword is not None or names_tests(names):
        return True
    return not names and fixtures == Path("fixtures") and not fixtures.exists()


def flakes_command(
    names: Sequence[str],
    keyword: str | None,
    runs: int,
    jobs: int,
    timeout: float,
    *,
    say: Callable[[str], None],
) -> int:
    """``headerlock flakes`` on pytest tests: the table, and exit 1 when a test flakes."""
    from headerlock.testing.scenario.progress import Progress

    shown = " ".join([*names, *(["-k", keyword] if keyword else [])]) or "(all)"
    say(f"headerlock flakes: the headerlock_wire tests of {shown} x {runs} runs"
        " in fresh pytest processes")  # fmt: skip
    bar = Progress(sys.stderr, runs, "runs", every_tenth=True)
    reports = hunt_tests(
        Selection(tuple(names), keyword),
        runs=runs, jobs=jobs, timeout=timeout, progress=bar.update,
    )  # fmt: skip
    bar.finish()
    for line in tests_table(reports):
        say(line)
    return 1 if any(len(r.groups()) > 1 for r in reports) else 0


def names_tests(names: Sequence[str]) -> bool:
    """Whether command-line names select pytest tests (a node id, a ``.py`` file, a
    path or an existing directory) rather than scenarios."""
    return any(
        "::" in name or name.endswith(".py") or "/" in name or os.sep in name or Path(name).is_dir()
        for name in names
    )


@dataclass(frozen=True, slots=True)
class Selection:
    """What pytest runs: node ids or paths (none: pytest's own default) and ``-k``."""

    paths: tuple[str, ...] = ()
    keyword: str | None = None

    def command(self, dump: Path, cache: Path) -> list[str]:
        """The command line of one run."""
        keyword = ["-k", self.keyword] if self.keyword is not None else []
        return [
            sys.executable,
            "-m",
            "pytest",
            *self.paths,
            *keyword,
            "-q",
            "-o",
            f"cache_dir={cache}",
            f"{OPTION}={dump}",
        ]  # fmt: skip (one argument: a separate DIR would count as a test path)


@dataclass(frozen=True, slots=True)
class WireTestRun:
    """What one test sent in one run (its hash seed): its request headers."""

    seed: int
    requests: tuple[Any, ...]
    error: str | None

    @property
    def key(self) -> str:
        return json.dumps(self.requests, sort_keys=True, ensure_ascii=False)


@dataclass(slots=True)
class WireTestReport:
    """The runs of one test, grouped by the headers sent."""

    test: str
    runs: list[WireTestRun] = field(default_factory=list)

    def groups(self) -> list[list[WireTestRun]]:
        """Runs grouped by identical headers, in order of first appearance."""
        by_key: dict[str, list[WireTestRun]] = {}
        for run in self.runs:
            by_key.setdefault(run.key, []).append(run)
        return list(by_key.values())

    def first_difference(self) -> str:
        """Where the first two groups first differ (``-`` when all agree)."""
        groups = self.groups()
        if len(groups) < 2:
            return "-"
        return first_difference(groups[0][0].requests, groups[1][0].requests)


def _named_tools(request: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
    """The names and the tools of a request, one per tool as its API lists them (the
    run's plugin wrote them: ``flake_probe.header_of``)."""
    pairs = request.get("named_tools")
    listed = pairs if isinstance(pairs, list) else []
    named = [p for p in listed if isinstance(p, list) and len(p) == 2]
    return [str(name) for name, _ in named], [tool for _, tool in named]


def _tools_difference(x: Mapping[str, Any], y: Mapping[str, Any]) -> str:
    """``tools order: x, y -> y, x``, or the first changed path keyed by tool name."""
    names, first = _named_tools(x)
    other, second = _named_tools(y)
    change = compare_tool_names(names, other)
    if change.same_set and change.reordered:
        return f"tools order: {change.order()}"
    if len(set(names)) == len(names) and len(set(other)) == len(other):
        lines = changed_paths(
            {"tools": dict(zip(names, first, strict=True))},
            {"tools": dict(zip(other, second, strict=True))},
        )
        if lines:
            return lines[0]
    return "tools: " + (change.membership() or ["differ"])[0]


def first_difference(a: Sequence[Any], b: Sequence[Any]) -> str:
    """The first header path where two runs' requests differ, naming its segment
    (``tools`` and the tool, ``system``, ``config`` and the key)."""
    for number, (x, y) in enumerate(zip(a, b, strict=False), 1):
        if x == y:
            continue
        where = f"request {number}"
        for key in ("api", "path"):
            if x.get(key) != y.get(key):
                return f"{where} {key}: {x.get(key)} -> {y.get(key)}"
        if x.get("tools") != y.get("tools"):
            return f"{where} {_tools_difference(x, y)}"
        for key in ("system", "config"):
            if x.get(key) != y.get(key):
                lines = changed_paths({key: x.get(key)}, {key: y.get(key)})
                return f"{where} {lines[0] if lines else key}"
        return f"{where}: the same header in other key order"
    return f"{len(a)} requests -> {len(b)} requests"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][-2000:] if lines else "(no output)"


_EXITS: Final = {
    2: "was interrupted",
    3: "hit an internal error",
    4: "was a usage error",
    5: "selected no headerlock_wire test",
}


def _wait(process: subprocess.Popen[str], deadline: float, stop: threading.Event) -> str | None:
    """The run's output once it ended; ``None`` at ``deadline`` or once ``stop`` is set."""
    while True:
        try:
            output, _ = process.communicate(timeout=_POLL)
            return output
        except subprocess.TimeoutExpired:
            if stop.is_set() or time.monotonic() >= deadline:
                return None


def _run(
    selection: Selection, seed: int, timeout: float, stop: threading.Event
) -> dict[str, WireTestRun]:
    """One pytest run under hash seed ``seed``: what each test sent."""
    with tempfile.TemporaryDirectory(prefix="headerlock-flakes-") as temp:
        dump = Path(temp) / "dump"
        dump.mkdir()
        process = subprocess.Popen(
            selection.command(dump, Path(temp) / "cache"),
            env=subprocess_env(PYTHONHASHSEED=str(seed)),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
            process_group=0,
        )
        deadline = time.monotonic() + timeout
        try:
            output = _wait(process, deadline, stop)
        except BaseException:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)  # the run and every child it started
            process.wait()
            raise
        if output is None:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            if stop.is_set():
                raise KeyboardInterrupt
            raise HeaderlockError(
                f"pytest run (seed {seed}) did not finish within {timeout:g}s (--timeout);"
                " its processes were ended"
            )
        code = process.returncode
        if code not in (0, 1):
            why = _EXITS.get(code, f"failed with exit {code}")
            raise HeaderlockError(f"pytest run (seed {seed}) {why}: {_last_line(output)}")
        found: dict[str, WireTestRun] = {}
        for path in sorted(dump.glob("*.json")):
            data = json.loads(path.read_text("utf-8"))
            found[data["test"]] = WireTestRun(seed, tuple(data["requests"]), data["error"])
        if not found:
            raise HeaderlockError(
                f"pytest run (seed {seed}) ran no headerlock_wire test: {_last_line(output)}"
            )
        return found


def hunt_tests(
    selection: Selection,
    *,
    runs: int,
    jobs: int = 2,
    timeout: float,
    progress: Callable[[int, int], None] | None = None,
) -> list[WireTestReport]:
    """Run the selection ``runs`` times (hash seeds ``0..runs-1``), at most ``jobs`` at a
    time; one report per test, in node id order. A test that could not run, or sent no
    model request, is bad input (``HeaderlockError``): a flake check must compare
    something."""
    outcomes: dict[int, dict[str, WireTestRun]] = {}
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=max(1, min(jobs, runs))) as pool:
        futures = [pool.submit(_run, selection, seed, timeout, stop) for seed in range(runs)]
        try:
            for count, future in enumerate(as_completed(futures), 1):
                seed = futures.index(future)
                outcomes[seed] = future.result()
                if progress is not None:
                    progress(count, runs)
        except BaseException:
            stop.set()  # every running pytest ends within a poll
            for future in futures:
                future.cancel()
            raise
    reports: dict[str, WireTestReport] = {}
    for seed in range(runs):
        for test, run in sorted(outcomes[seed].items()):
            if not run.requests:
                why = f": {run.error}" if run.error else ""
                raise InputFileError(
                    f"{test}: sent no model request under hash seed {seed}{why}", path=test
                )
            reports.setdefault(test, WireTestReport(test)).runs.append(run)
    return sorted(reports.values(), key=lambda r: r.test)


def tests_table(reports: Sequence[WireTestReport]) -> list[str]:
    """The report: one row per test, then the hash seeds behind each distinct header."""
    rows = [("test", "runs", "distinct", "first differing path")]
    rows += [
        (r.test, str(len(r.runs)), str(len(r.groups())), r.first_difference()) for r in reports
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  ".join(cell.ljust(widths[i]) if i < 3 else cell for i, cell in enumerate(row))
             for row in rows]  # fmt: skip
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * 20)
    for report in reports:
        groups = report.groups()
        if len(groups) < 2:
            continue
        lines.append("")
        lines.append(f"{report.test}: {len(groups)} distinct request headers")
        for number, group in enumerate(groups, 1):
            seeds = ", ".join(str(run.seed) for run in group)
            lines.append(f"  #{number}: PYTHONHASHSEED={seeds}")
    return [line.rstrip() for line in lines]
