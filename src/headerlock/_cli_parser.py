"""The ``headerlock`` command line's arguments: the parser and its one-line errors."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import NoReturn

from headerlock.formats.secrets import REDACT_ENV_VAR

USAGE_EXIT = 2
"""A usage error is bad input (``headerlock.cli.EXIT_BAD_INPUT``)."""


def one_line(text: str) -> str:
    """``text`` on one line (an error line never spans two)."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def _positive(text: str, most: int | None = None) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    if most is not None and value > most:
        raise argparse.ArgumentTypeError(f"must be at most {most}, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(
            f"must be a positive finite number of seconds, got {text!r}"
        )
    return value


def _record_mode(text: str) -> str:
    """``headerlock record --record``: a record mode (pytest's ``--headerlock-record``
    names) that records something: ``new`` or ``all``."""
    from headerlock.errors import ConfigError
    from headerlock.testing.wire.record_mode import record_mode

    try:
        mode = record_mode(text)
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if mode == "none":
        raise argparse.ArgumentTypeError(
            f"{text!r} records nothing; replay with: headerlock replay"
        )
    return mode


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one ``headerlock:`` line on stderr."""

    def error(self, message: str) -> NoReturn:
        self.exit(
            USAGE_EXIT,
            f"headerlock: {one_line(message).removeprefix('argument ')} (see {self.prog} --help)\n",
        )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``headerlock`` command."""
    from headerlock.testing.order.flake_worker import MAX_RUNS, RUN_TIMEOUT

    parser = _Parser(
        prog="headerlock",
        description="Record and replay the request headers an LLM agent sends.",
        epilog="exit codes: 0 ok, 1 a mismatch or failed guard, 2 bad input",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("demo", help="record and replay the bundled scenarios in a temp dir")
    for name, help_text in (
        ("record", "run scenarios and write their recordings"),
        ("replay", "replay scenarios against their recordings (exit 1 on mismatch)"),
    ):
        command = commands.add_parser(name, help=help_text)
        command.add_argument(
            "names", nargs="*", metavar="NAME", help="scenario names (default: all)"
        )
        command.add_argument("--fixtures", type=Path, default=Path("fixtures"))
        command.add_argument("--recordings", type=Path, default=Path("recordings"))
        command.add_argument(
            "--redact-env",
            action="append",
            default=[],
            metavar="NAME[,NAME...]",
            help="the values of these environment variables are secrets, written as <<secret>>"
            f" (also: {REDACT_ENV_VAR}); give replay the same list as record",
        )
        if name == "replay":
            command.add_argument(
                "--no-pending",
                action="store_true",
                help="a mismatch writes no pending file (<name>.yaml.new) beside its recording"
                " (pytest: --headerlock-no-pending)",
            )
        if name == "record":
            command.add_argument(
                "--record",
                dest="record_mode",
                type=_record_mode,
                default="all",
                metavar="{new,all}",
                help="all (default; alias record): record every named scenario; new: only those"
                " with no recording yet (the names of pytest's --headerlock-record)",
            )
            command.add_argument(
                "--live",
                action="store_true",
                help="use the live endpoint (HEADERLOCK_BASE_URL; key HEADERLOCK_API_KEY,"
                " else OPENAI_API_KEY)",
            )
    flakes = commands.add_parser(
        "flakes",
        help="run scenarios, or pytest headerlock_wire tests, in fresh processes under varied"
        " hash seeds (and plugin orders); exit 1 when a run's headers differ",
    )
    flakes.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="scenario names, or pytest tests (tests/test_x.py, tests/test_x.py::test_y);"
        " default: every scenario, or every test when there is no fixtures directory",
    )
    flakes.add_argument(
        "-k",
        dest="keyword",
        metavar="EXPR",
        default=None,
        help="run the pytest tests matching EXPR (as pytest -k)",
    )
    flakes.add_argument(
        "--runs",
        type=lambda text: _positive(text, MAX_RUNS),
        default=6,
        help=f"runs per scenario (default 6, at most {MAX_RUNS})",
    )
    flakes.add_argument(
        "--jobs",
        type=_positive,
        default=2,
        help="parallel processes (default 2, at most the cores)",
    )
    flakes.add_argument(
        "--timeout",
        type=_seconds,
        default=RUN_TIMEOUT,
        metavar="SECONDS",
        help=f"seconds each run may take; then its processes end (default {RUN_TIMEOUT:g})",
    )
    once = commands.add_parser("run-once")  # internal: one flakes run, recording on stdout
    commands.add_parser("flake-worker")  # internal: flakes runs of one hash seed (JSON lines)
    once.add_argument("name")
    once.add_argument("--order", default="")
    for command in (flakes, once):
        command.add_argument("--fixtures", type=Path, default=Path("fixtures"))
        command.add_argument("--recordings", type=Path, default=Path("recordings"))
    diff = commands.add_parser(
        "diff",
        help="explain how two recordings differ (two wire recordings: where the cacheable"
        " prefix first differs)",
    )
    diff.add_argument("a", type=Path)
    diff.add_argument("b", type=Path)
    cache = commands.add_parser(
        "cache",
        help="where each wire recording's prompt cache breaks, why, and what it costs"
        " (exit 1 on a finding)",
    )
    cache.add_argument(
        "paths", nargs="*", type=Path, metavar="PATH", help="wire recordings, or folders of them"
    )
    cache.add_argument(
        "--manifest",
        action="append",
        type=Path,
        default=[],
        metavar="MANIFEST",
        help="also the wire recordings the tests of this run used (pytest"
        " --headerlock-manifest; repeat it for every CI job: one report over them all)",
    )
    cache.add_argument(
        "--rootdir",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="the checkout the manifests' paths are relative to (default: .)",
    )
    cache.add_argument(
        "--html", type=Path, metavar="FILE", help="also write a self-contained HTML page"
    )
    _review_parser(commands)
    _unused_parser(commands)
    _migrate_parser(commands)
    return parser


def _migrate_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    migrate = commands.add_parser(
        "migrate",
        help="rewrite headerlock's files of an older format version as this headerlock"
        " writes them (exit 1 with --check when some would change, 2 when one cannot be read)",
    )
    migrate.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="files, or folders searched at any depth (default: recordings/ and fixtures/)",
    )
    migrate.add_argument(
        "--check",
        action="store_true",
        help="change nothing: name the files that would change (exit 1 when any)",
    )


def _unused_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    unused = commands.add_parser(
        "unused",
        help="the recordings no CI job used, from the jobs' manifests (pytest"
        " --headerlock-manifest): exit 1 when some, 2 when the jobs did not run every test"
        " green",
    )
    unused.add_argument("manifests", nargs="+", type=Path, metavar="MANIFEST")
    unused.add_argument(
        "--remove",
        action="store_true",
        help="remove them (only when the jobs together ran every collected test, green)",
    )
    unused.add_argument(
        "--rootdir",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="the checkout the manifests' paths are relative to (default: .)",
    )


def _review_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    review = commands.add_parser(
        "review",
        help="accept or reject pending changes (<name>.yaml.new, written by a replay that"
        " mismatched): one by one in a terminal, or with the flags",
    )
    review.add_argument(
        "--recordings",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the recordings are (default: the headerlock_recordings ini option, else"
        " recordings)",
    )
    review.add_argument(
        "--from",
        dest="source",
        type=Path,
        default=None,
        metavar="DIR",
        help="review the pending files found at any depth under DIR (CI artifacts), each"
        " applied to the recording at its path below recordings/ in this checkout",
    )
    what = review.add_mutually_exclusive_group()
    what.add_argument(
        "--list", action="store_true", help="one line per pending file (exit 1 when any)"
    )
    what.add_argument("--accept", nargs="+", type=Path, metavar="PATH", default=None)
    what.add_argument("--accept-all", action="store_true")
    what.add_argument("--reject", nargs="+", type=Path, metavar="PATH", default=None)
    what.add_argument("--reject-all", action="store_true")


def _version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("headerlock")
    except importlib.metadata.PackageNotFoundError:
        return "(unknown version)"
