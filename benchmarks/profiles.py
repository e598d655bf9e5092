"""Text profiles of the workloads behind unmet targets, in ``benchmarks/profiles/``."""

from __future__ import annotations

import cProfile
import io
import pstats
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.procs import run

PROFILES = Path(__file__).parent / "profiles"
TOP = 20


OURS = r"(headerlock|benchmarks)/"
"""A restriction to headerlock's (and the harness's) own functions."""


def _table(stats: pstats.Stats, out: io.StringIO, sort: str, restrict: str | None) -> str:
    out.seek(0)
    out.truncate()
    stats.sort_stats(sort)
    stats.print_stats(*((restrict,) if restrict else ()), TOP)
    lines = [line.rstrip() for line in out.getvalue().splitlines() if line.strip()]
    kept = [line for line in lines if not line.lstrip().startswith(("List reduced", "Ordered by"))]
    text = "\n".join(line for line in kept if ".prof" not in line) + "\n"
    for prefix in sorted({str(Path(p)) + "/" for p in sys.path if p}, key=len, reverse=True):
        text = text.replace(prefix, "")
    return text


def pstats_text(source: cProfile.Profile | Path, *, restrict: str | None = None) -> str:
    """The top ``TOP`` functions by cumulative time (only those matching ``restrict``),
    then the top ``TOP`` of all by own time."""
    out = io.StringIO()
    stats = pstats.Stats(str(source) if isinstance(source, Path) else source, stream=out)
    where = f" matching {restrict!r}" if restrict else ""
    return (
        f"top {TOP} by cumulative time{where}:\n{_table(stats, out, 'cumulative', restrict)}\n"
        f"top {TOP} by own time:\n{_table(stats, out, 'tottime', None)}"
    )


def profile_call(fn: Callable[[], Any]) -> str:
    """cProfile of one call of ``fn`` (cumulative: headerlock's functions; own time: all)."""
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        fn()
    finally:
        profiler.disable()
    return pstats_text(profiler, restrict=OURS)


def profile_process(
    root: Path,
    module_args: Sequence[str],
    env: Mapping[str, str],
    *,
    restrict: str | None = None,
    ok: Sequence[int] = (0,),
) -> str:
    """cProfile of ``python -m <module_args>`` in a fresh interpreter."""
    out = root / f"profile-{abs(hash(tuple(module_args)))}.prof"
    command = [sys.executable, "-m", "cProfile", "-o", str(out), "-m", *module_args]
    run(command, root, env=env, ok=ok)
    return pstats_text(out, restrict=restrict)


_IMPORT = re.compile(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\|( *)(\S+)")


def imports(
    command: Sequence[str], root: Path, env: Mapping[str, str]
) -> dict[str, tuple[int, str]]:
    """Module -> (cumulative import microseconds, importing module) of one ``-X importtime`` run."""
    full = [command[0], "-X", "importtime", *command[1:]]
    _, output = run(full, root, env=env, ok=(0, 5))
    rows = [(len(m.group(3)), m.group(4), int(m.group(2))) for m in _IMPORT.finditer(output)]
    found: dict[str, tuple[int, str]] = {}
    stack: list[tuple[int, str]] = []  # parents are printed after their children
    for depth, module, cumulative in reversed(rows):
        while stack and stack[-1][0] >= depth:
            stack.pop()
        found[module] = (cumulative, stack[-1][1] if stack else "")
        stack.append((depth, module))
    return found


def import_diff(with_: Mapping[str, tuple[int, str]], without: Mapping[str, object]) -> str:
    """The modules only the first run imported, by cumulative import time."""
    extra = {m: v for m, v in with_.items() if m not in without}
    total = sum(us for us, parent in extra.values() if parent not in extra)
    ranked = sorted(((us, m, parent) for m, (us, parent) in extra.items()), reverse=True)
    lines = [f"{len(extra)} modules imported only in the first run: {total / 1000:.1f} ms in all"]
    lines += [
        f"{us / 1000:9.1f} ms  {m}  ({f'by {p}' if p else 'at run time'})"
        for us, m, p in ranked[:TOP]
    ]
    return "\n".join(lines) + "\n"


def write(name: str, title: str, sections: Mapping[str, str]) -> Path:
    """Write ``profiles/<name>.txt``: a title, then each section under its heading."""
    PROFILES.mkdir(exist_ok=True)
    parts = [title, "=" * len(title), ""]
    for heading, body in sections.items():
        parts += [f"## {heading}", "", body.rstrip(), ""]
    path = PROFILES / f"{name}.txt"
    path.write_text("\n".join(parts))
    return path
