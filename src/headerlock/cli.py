"""The ``headerlock`` command line: demo, record, replay, diff, review, cache, unused.

Exit codes: 0 all good, 1 a mismatch, a failed guard or a cache finding (``headerlock cache``),
2 bad input (a usage error, an unusable file or directory, a run that would check nothing). The
working directory is the project root: fixtures' ``plugins:`` import from it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from headerlock._cli_parser import build_parser as build_parser, one_line
from headerlock.errors import (
    CheckFailed,
    ConfigError,
    HeaderlockError,
    InputFileError,
    MissingRecordingError,
    OutputFileError,
    PinError,
)
from headerlock.formats.display import escaped_output, raw_stream
from headerlock.formats.secrets import redact_env
from headerlock.runtime.plugins import add_import_root
from headerlock.testing.scenario.progress import Progress

if TYPE_CHECKING:
    # Each command imports what it runs: ``headerlock flakes`` starts its first workers
    # before the parent has imported the machinery (they import it meanwhile).
    from headerlock.formats.fixture import Scenario
    from headerlock.testing.order.flake_worker import Worker
    from headerlock.testing.scenario.project import Project

EXIT_OK, EXIT_MISMATCH, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


def bundled_dir(name: str) -> Path:
    """The bundled ``fixtures`` or ``recordings`` (in the wheel, or in a source checkout)."""
    packaged = Path(__file__).parent / "demo" / name
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / name
    if checkout.is_dir():
        return checkout
    raise HeaderlockError(f"the bundled {name}/ directory is missing from this installation")


class Console:
    """Progress and results, one line each; ``[i/n]`` counters on long runs and, on a
    terminal, a status line with the rate and time left below them."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.status: Progress | None = None
        self.said: set[str] = set()
        self.off_pin: list[str] = []
        """Scenarios whose header failed their class's pin guard (for the guards line)."""

    def error(self, error: BaseException | str) -> bool:
        """Say ``error`` as one ``headerlock:`` line on stderr, once; whether it was new."""
        text = one_line(str(error))
        if text in self.said:
            return False
        self.said.add(text)
        if self.status is not None:
            self.status.clear()
        print(f"headerlock: {text}", file=sys.stderr, flush=True)
        if self.status is not None:
            self.status.draw()
        return True

    def line(self, text: str = "") -> None:
        if self.status is not None:
            self.status.clear()
        print(text, file=self.out, flush=True)
        if self.status is not None:
            self.status.draw()

    def step(self, index: int, total: int, text: str) -> None:
        if self.status is not None:
            self.status.done = index
        self.line(f"[{index}/{total}] {text}")

    @contextlib.contextmanager
    def progress(self, total: int, noun: str) -> Iterator[None]:
        """A status line while ``total`` items run (on a terminal; nothing elsewhere)."""
        self.status = Progress(raw_stream(self.out), total, noun)
        self.status.draw()
        try:
            yield
        finally:
            self.status.finish()
            self.status = None


def header_lines(events: Sequence[dict[str, object]]) -> list[str]:
    """One line per recorded header: its kind, reason and tool order."""
    from headerlock.runtime.header import fold_request_header
    from headerlock.runtime.session import (
        REQUEST_HEADER,
        REQUEST_HEADER_DELTA,
        TURN_END,
        SessionLog,
    )

    log = SessionLog.from_data(events)
    lines = []
    for event in log.events:
        if event.type in (REQUEST_HEADER, REQUEST_HEADER_DELTA):
            header = fold_request_header(log.events[: event.seq])
            reason = event.data.get("reason", "delta")
            names = ", ".join(header.tool_names()) if header else ""
            lines.append(f"{event.type} ({reason}) seq {event.seq}: {names or '(no tools)'}")
        elif event.type == TURN_END and event.data["reason"]["kind"] == "error":
            lines.append(f"turn {event.data['turn']} failed: {event.data['reason']['message']}")
    return lines


def _selected(project: Project, names: Sequence[str]) -> list[Scenario]:
    chosen = list(names) or project.scenario_names()
    return [project.scenario(name) for name in chosen]


async def _record(
    project: Project, names: Sequence[str], console: Console, live: bool, mode: str = "all"
) -> int:
    scenarios = _selected(project, names)
    with console.progress(len(scenarios), "recorded"):
        code = await _record_each(project, scenarios, console, live, new=mode == "new")
    failures, bad = await _guards(project, console, recording=True)
    bad += code == EXIT_BAD_INPUT
    return EXIT_BAD_INPUT if bad else EXIT_MISMATCH if failures or code else EXIT_OK


async def _record_each(
    project: Project, scenarios: Sequence[Scenario], console: Console, live: bool, *, new: bool
) -> int:
    failed = bad = 0
    for index, scenario in enumerate(scenarios, 1):
        started, path = time.perf_counter(), project.recording_path(scenario.name).as_posix()
        if new and Path(path).exists():
            console.step(index, len(scenarios), f"kept {scenario.name} -> {path} (--record new)")
            continue
        try:
            recording = await project.record(scenario, live=live)
        except CheckFailed as error:
            failed += 1
            if isinstance(error, PinError):
                console.off_pin.append(scenario.name)
            kept = "the old recording is kept" if Path(path).exists() else "nothing written"
            console.step(index, len(scenarios), f"FAIL {scenario.name} ({kept})")
            console.line("\n".join(f"    {line}" for line in str(error).splitlines()))
            continue
        except OutputFileError as error:  # a path it may not write: one line, the rest run
            console.step(index, len(scenarios), f"FAIL {scenario.name} (nothing written)")
            bad += console.error(error) or 1
            continue
        events, elapsed = len(recording.events), time.perf_counter() - started
        done = f"recorded {scenario.name} -> {path} ({events} events, {elapsed:.2f}s)"
        console.step(index, len(scenarios), done)
    return EXIT_BAD_INPUT if bad else EXIT_MISMATCH if failed else EXIT_OK


async def _replay(
    project: Project, names: Sequence[str], console: Console, *, show_headers: bool = False
) -> int:
    scenarios = _selected(project, names)
    with console.progress(len(scenarios), "replayed"):
        failures, bad = await _replay_each(project, scenarios, console, show_headers)
    for name in project.scenario_names():  # every bad recording: one stderr line each
        try:
            project.recording(name)
        except InputFileError as error:
            bad += console.error(error)
    guard_failures, guard_bad = await _guards(project, console)
    return (
        EXIT_BAD_INPUT
        if bad or guard_bad
        else EXIT_MISMATCH
        if failures or guard_failures
        else EXIT_OK
    )


async def _guards(
    project: Project, console: Console, *, recording: bool = False
) -> tuple[int, int]:
    """The project-wide guards, one ``guards:`` line (never ok while a class fails);
    how many failed and how many were bad input. ``recording``: a pin with no
    recording yet is another ``record`` run's to make (or it failed, said above)."""
    failures = bad = 0
    try:
        await project.check_files(updating=recording)
        if console.off_pin:
            failures += 1
            names = ", ".join(console.off_pin)
            console.line(f"guards: FAIL (off their class's pin, above: {names})")
        else:
            console.line("guards: pins, header locks, recordings normalized, pins fresh: ok")
    except PinError as error:
        problems = [p for p in error.problems if one_line(p) not in console.said]
        failures += bool(problems)
        console.line("guards: FAIL" + ("" if problems else " (the bad input above)"))
        console.line("\n".join(f"    {p}" for p in problems))
    except CheckFailed as error:  # a pin's run that did not complete
        failures += 1
        shown = one_line(str(error)) in console.said
        console.line("guards: FAIL" + (" (the failure above)" if shown else ""))
        if not shown:
            console.line("\n".join(f"    {line}" for line in str(error).splitlines()))
    except HeaderlockError as error:
        bad += 1
        console.line("guards: FAIL (bad input)")
        console.error(error)
    return failures, bad


async def _replay_each(
    project: Project, scenarios: Sequence[Scenario], console: Console, show_headers: bool
) -> tuple[int, int]:
    """Replay each scenario; how many failed and how many were bad input."""
    failures = bad = 0
    for index, scenario in enumerate(scenarios, 1):
        started = time.perf_counter()
        label = f"{scenario.name} ({scenario.app}{', pinned' if scenario.pin else ''})"
        try:
            _, output = await project.replay(scenario)
            await project.check_pin_guard(scenario, output)
        except (CheckFailed, MissingRecordingError) as error:
            failures += 1
            if isinstance(error, PinError):
                console.off_pin.append(scenario.name)
            console.said.add(one_line(str(error)))
            console.step(index, len(scenarios), f"FAIL {label}")
            console.line("\n".join(f"    {line}" for line in str(error).splitlines()))
            continue
        except HeaderlockError as error:  # bad input: one line on stderr
            bad += 1
            console.step(index, len(scenarios), f"FAIL {label} (bad input)")
            console.error(error)
            continue
        console.step(index, len(scenarios), f"ok   {label} ({time.perf_counter() - started:.2f}s)")
        if show_headers:
            for line in header_lines(output.events):
                console.line(f"      {line}")
    return failures, bad


async def _demo(console: Console) -> int:
    import shutil
    import tempfile

    from headerlock.testing.scenario.drivers import get_driver
    from headerlock.testing.scenario.project import Project

    with tempfile.TemporaryDirectory(prefix="headerlock-demo-") as temp:
        root = Path(temp)
        shutil.copytree(bundled_dir("fixtures"), root / "fixtures")
        project = Project(root / "fixtures", root / "recordings")
        skipped = False
        for scenario in project.scenarios():
            reason = get_driver(scenario.app).unavailable(scenario.config)
            if reason is not None:
                scenario.path.unlink()
                console.line(f"skipping {scenario.name}: app {scenario.app!r} {reason}")
                skipped = True
        if skipped:
            project = Project(project.fixtures, project.recordings)
        count = len(project.scenario_names())
        console.line(f"headerlock demo: {count} bundled scenarios in {root}")
        console.line("1. record each scenario with its scripted model")
        await _record(project, (), console, live=False)
        console.line(
            "2. replay the recordings (no network) and show each request header's tool order"
        )
        return await _replay(project, (), console, show_headers=True)


def _run_once(project: Project, name: str, order: str, console: Console) -> int:
    from headerlock.formats.strict_yaml import dumps
    from headerlock.runtime.aio import run_sync
    from headerlock.testing.order.plugin_orders import run_under
    from headerlock.testing.order.schedules import LoadSchedule
    from headerlock.testing.scenario.replay import model_for_recording

    scenario = project.scenario(name)
    size = len(scenario.plugins)
    try:
        indices = tuple(int(i) for i in order.split(",")) if order else tuple(range(size))
    except ValueError:
        raise ConfigError(
            f"--order must be comma-separated plugin indices, got {order!r}", key="--order"
        ) from None
    if sorted(indices) != list(range(size)):
        raise ConfigError(
            f"--order must be a permutation of 0..{size - 1}, got {order!r}", key="--order"
        )
    model = model_for_recording(scenario, project.recording(name))
    run = run_sync(run_under(scenario, model, LoadSchedule(indices)))
    console.out.write(dumps(run.data))
    return EXIT_OK


def _flakes(
    project: Project, args: argparse.Namespace, console: Console, workers: dict[int, Worker]
) -> int:
    from headerlock.testing.order.flakes import hunt, table

    chosen = list(args.names) or project.scenario_names()
    for name in chosen:
        project.scenario(name)  # bad input fails before any run
    runs = args.runs
    console.line(f"headerlock flakes: {len(chosen)} scenarios x {runs} runs in fresh processes")
    bar = Progress(raw_stream(sys.stderr), runs * len(chosen), "runs", every_tenth=True)
    reports = hunt(
        project,
        chosen,
        runs=runs,
        jobs=args.jobs,
        progress=bar.update,
        workers=workers,
        timeout=args.timeout,
    )
    bar.finish()
    for line in table(reports):
        console.line(line)
    return EXIT_MISMATCH if any(len(r.groups()) > 1 for r in reports) else EXIT_OK


def _diff(a: Path, b: Path, console: Console) -> int:
    from headerlock.formats.explain import explain
    from headerlock.formats.recording import load_recording
    from headerlock.testing.wire.explain import diff_wire_files

    wire = diff_wire_files(a, b)  # two wire recordings: where the cacheable prefix breaks
    if wire is not None:
        console.line(wire[1])
        return EXIT_OK if wire[0] else EXIT_MISMATCH
    left, right = load_recording(a), load_recording(b)
    if left.to_text() == right.to_text():
        console.line("recordings are identical")
        return EXIT_OK
    console.line(
        explain(
            left.to_data(),
            right.to_data(),
            expected_text=left.to_text(),
            actual_text=right.to_text(),
            names=(a.as_posix(), b.as_posix()),
        )
    )
    return EXIT_MISMATCH


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None) -> int:
    """Run the command line; returns the process exit code (its output escaped)."""
    with escaped_output(out) as stream:
        return _main(argv, stream)


def _main(argv: Sequence[str] | None, out: TextIO) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    console = Console(out)
    if args.command is None:
        parser.print_usage(sys.stderr)
        print("headerlock: error: choose a command (headerlock --help)", file=sys.stderr)
        return EXIT_BAD_INPUT
    undo: list[Callable[[], None]] = []
    try:
        undo.append(add_import_root(Path.cwd()))
        undo.append(redact_env(getattr(args, "redact_env", ())))
        _check_timeout_env(args.command)
        return _dispatch(args, console)
    except HeaderlockError as error:
        print(f"headerlock: {one_line(str(error))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        print(f"headerlock: {where}{error.strerror or error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"headerlock: interrupted (Ctrl-C){_KEPT.get(args.command, '')}", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        for step in reversed(undo):
            step()


_KEPT = {
    "record": "; the scenario being recorded wrote nothing, its old recording is kept",
    "flakes": "; every run's processes were ended",
}
"""What an interrupted command says it left as it was."""


_RUNS_AGENTS = frozenset({"record", "replay", "run-once", "flakes", "demo"})
"""The commands that run agents: any of them may reach the live endpoint."""


def _check_timeout_env(command: str) -> None:
    """Refuse a ``HEADERLOCK_TIMEOUT`` that is not a positive finite number of seconds
    (a ``ConfigError``, exit 2) on every command that runs agents, not only ``--live``."""
    if command in _RUNS_AGENTS:
        from headerlock.runtime.adapters.openai_compat import ENV_TIMEOUT, env_seconds

        env_seconds(os.environ, ENV_TIMEOUT, default=60.0)


def _check_project(project: Project, args: argparse.Namespace) -> None:
    """Refuse a run that would check nothing: no fixtures, or no recordings to replay."""
    if not args.names and not project.scenario_names():
        raise InputFileError(
            f"{project.fixtures}: no scenarios found (no *.yaml fixture files; --fixtures DIR)",
            path=str(project.fixtures),
        )
    recordings = project.recordings
    if recordings.exists() and not recordings.is_dir():
        raise InputFileError(
            f"{recordings}: the recordings path is not a directory", path=str(recordings)
        )
    if args.command == "replay" and not recordings.exists():
        raise InputFileError(
            f"{recordings}: the recordings directory does not exist (record first with"
            " `headerlock record`, or pass --recordings DIR)",
            path=str(recordings),
        )


def _dispatch(args: argparse.Namespace, console: Console) -> int:
    import asyncio

    if args.command == "demo":
        return asyncio.run(_demo(console))
    if args.command == "diff":
        return _diff(args.a, args.b, console)
    if args.command == "cache":
        from headerlock.testing.plugin.shards import cache_inputs
        from headerlock.testing.wire.cache.command import cache_command

        return cache_command(cache_inputs(args.paths, args.manifest, args.rootdir), args.html,
                             console.line)  # fmt: skip
    if args.command == "unused":
        from headerlock.testing.plugin.shards import unused_command

        return unused_command(
            args.manifests, root=args.rootdir, remove_them=args.remove, say=console.line
        )
    if args.command == "migrate":
        from headerlock.formats.migrate import migrate_command

        return migrate_command(args.paths, check=args.check, say=console.line)
    if args.command == "review":
        from headerlock.testing.review.command import review_command

        return review_command(args, console.out)
    if args.command == "flake-worker":
        from headerlock.testing.order.flake_worker import serve_warm

        return serve_warm(main)
    if args.command == "flakes":
        from headerlock.testing.order.flake_worker import capped_jobs, started
        from headerlock.testing.order.pytest_flakes import flakes_command, selects_tests

        args.jobs = capped_jobs(args.jobs)
        if selects_tests(args.names, args.keyword, args.fixtures):
            return flakes_command(args.names, args.keyword, args.runs, args.jobs, args.timeout,
                                  say=console.line)  # fmt: skip
        # The first workers import while this process loads and checks the scenarios.
        with started(range(min(args.jobs, args.runs))) as workers:
            project = _project(args)
            return _flakes(project, args, console, workers)
    project = _project(args)
    if args.command == "run-once":
        return _run_once(project, args.name, args.order, console)
    if args.command == "record":
        return asyncio.run(_record(project, args.names, console, args.live, args.record_mode))
    return asyncio.run(_replay(project, args.names, console))


def _project(args: argparse.Namespace) -> Project:
    from headerlock.testing.scenario.project import Project

    pending = not getattr(args, "no_pending", False)  # replay --no-pending
    project = Project(args.fixtures, args.recordings, pending=pending)
    if args.command != "run-once":
        _check_project(project, args)
    return project
