"""The pytest plugin's command-line options (group ``headerlock``) and ini keys."""

from __future__ import annotations

import argparse

import pytest


def _non_negative(text: str) -> int:
    """An option value that is a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def record_mode_option(text: str) -> str:
    """A record mode or its alias, as its record mode (one vocabulary everywhere)."""
    from headerlock.errors import ConfigError
    from headerlock.testing.wire.record_mode import record_mode

    try:
        return record_mode(text)
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_options(parser: pytest.Parser) -> None:
    """The plugin's command-line options (group ``headerlock``) and ini keys."""
    group = parser.getgroup("headerlock", "headerlock: record and replay agent request headers")
    group.addoption(
        "--headerlock-live",
        action="store_true",
        default=False,
        help="take model output from the live OpenAI-compatible endpoint (HEADERLOCK_BASE_URL);"
        " with --snapshot-update, re-record against it",
    )
    group.addoption(
        "--headerlock-permutations",
        type=_non_negative,
        default=0,
        metavar="N",
        help="also run every scenario under N plugin registration orders and load schedules;"
        " any change in the recorded bytes fails the scenario",
    )
    group.addoption(
        "--headerlock-record",
        type=record_mode_option,
        default=None,
        metavar="{none,new,all}",
        help="none (default; alias replay): replay, a missing recording is an error; new:"
        " record only the tests that have no recording, replay the rest; all (alias record):"
        " re-record every test (the same as --snapshot-update). Default: the"
        " headerlock_record ini option",
    )
    group.addoption(
        "--headerlock-no-pending",
        action="store_true",
        default=False,
        help="a replay that mismatches writes no <name>.yaml.new pending file (and answers the"
        " mismatching request with an HTTP 400 instead of the recorded response)",
    )
    group.addoption(
        "--headerlock-manifest",
        default=None,
        metavar="PATH",
        help="write this run's usage manifest (JSON: tests run, recordings used, written,"
        " pending) to PATH at the end; merge CI jobs' with: headerlock unused MANIFEST...",
    )
    parser.addini(
        "headerlock_manifest", "write the run's usage manifest to this path (rootdir-relative)"
    )
    parser.addini(
        "headerlock_record",
        "record mode: none (replay), new or all (record); default none",
        default="none",
    )
    parser.addini(
        "headerlock_ignore",
        "request paths never compared in any headerlock_wire test (config.seed,"
        " messages[*].content); one reaching no request of the session is reported",
        type="args",
    )
    group.addoption(
        "--headerlock-cache",
        nargs="?",
        const="report",
        default=None,
        choices=("report", "fail"),
        help="report every headerlock_wire test's prompt-cache breaks in the summary;"
        " =fail also fails the tests whose session has one (write it as --headerlock-cache=fail)",
    )
    group.addoption(
        "--headerlock-flakes-dump",
        dest="headerlock_flakes_dump",
        metavar="DIR",
        default=None,
        help="(what `headerlock flakes` runs) run only the headerlock_wire tests, sealed and"
        " recording nothing, and write each one's request headers to DIR",
    )
    parser.addini("headerlock_fixtures", "directory of scenario fixtures", default="fixtures")
    parser.addini("headerlock_recordings", "directory of recordings", default="recordings")
    parser.addini("headerlock_redact_env", "env vars whose values are secrets", type="args")
    parser.addini(
        "headerlock_allow_hosts",
        "hosts a sealed headerlock_wire test may open raw connections to (never model requests)",
        type="args",
    )
    parser.addini(
        "headerlock_cache",
        "report (or fail on) every headerlock_wire test's prompt-cache breaks: report, fail, off",
        default="",
    )
    parser.addini(
        "headerlock_require_pin",
        "fail the headerlock_wire tests of a header class that has no pinned test",
        type="bool",
        default=False,
    )
