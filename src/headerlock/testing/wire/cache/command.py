"""``headerlock cache PATH... [--html FILE]``: the cache report of wire recordings.

Each PATH is a wire recording or a folder searched for them (``*.yaml`` with
``kind: wire``, in path order; other YAML there is skipped). Per recording it prints
a line per request and a ``total`` line (``text``), then the findings. Exit code 0
when nothing is found, 1 on any finding; bad input (a missing path, a file that is
not a wire recording, a folder with none, an invalid recording) raises an
``InputFileError`` naming the file, which the command line prints as one
``headerlock:`` line and exits 2.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

from headerlock.errors import InputFileError
from headerlock.formats.atomic import atomic_write
from headerlock.formats.strict_yaml import loads, read_text
from headerlock.formats.wire_recording import (
    WIRE_MAX_BYTES,
    WIRE_MAX_DEPTH,
    WireRecording,
    is_wire_data,
    wire_recording_from_data,
)
from headerlock.testing.wire.apis import NAMES
from headerlock.testing.wire.cache.report import CacheReport, recording_report

EXIT_OK, EXIT_FINDINGS = 0, 1


def _read(path: Path, *, required: bool) -> WireRecording | None:
    """The wire recording at ``path``; ``None`` for other YAML unless ``required``."""
    text = read_text(path, max_bytes=WIRE_MAX_BYTES, missing="no such file")
    data = loads(text, path=str(path), max_depth=WIRE_MAX_DEPTH)
    if not is_wire_data(data):
        if not required:
            return None
        raise InputFileError(
            f"{path}: not a wire recording (no `kind: wire`); headerlock cache reads wire"
            " recordings",
            path=str(path),
        )
    return wire_recording_from_data(data, path=str(path), apis=NAMES)


def recordings(paths: Sequence[Path]) -> list[tuple[Path, WireRecording]]:
    """The wire recordings named by ``paths`` (files, or folders searched in path order)."""
    found: list[tuple[Path, WireRecording]] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(path.rglob("*.yaml"), key=lambda p: p.as_posix())
            here = [(p, r) for p in inside if (r := _read(p, required=False)) is not None]
            if not here:
                raise InputFileError(
                    f"{path}: no wire recordings in this folder (*.yaml with `kind: wire`)",
                    path=str(path),
                )
            found += here
        elif path.exists():
            recording = _read(path, required=True)
            assert recording is not None
            found.append((path, recording))
        else:
            raise InputFileError(f"{path}: no such file or folder", path=str(path))
    return found


def report_of(path: Path, recording: WireRecording) -> CacheReport:
    """The cache report of one loaded recording, named by its path."""
    return recording_report(path, recording)


def check_html_target(html: Path) -> None:
    """Refuse (``InputFileError``) an ``--html`` path that holds anything but a page this
    command wrote (its head has the generator mark): a recording, a fixture, any other
    file, a link, a directory or a device is never overwritten."""
    from headerlock.testing.wire.cache.html import GENERATOR

    try:
        info = os.lstat(html)
    except FileNotFoundError:
        return
    what = None
    if stat.S_ISLNK(info.st_mode):
        what = "a symbolic link"
    elif stat.S_ISDIR(info.st_mode):
        what = "a directory"
    elif not stat.S_ISREG(info.st_mode):
        what = "not a regular file"
    else:
        with open(html, "rb") as file:
            head = file.read(4096).decode("utf-8", "replace")
        if GENERATOR not in head.split("</head>", 1)[0]:
            what = "not a cache report headerlock wrote (no generator mark in its head)"
    if what is not None:
        raise InputFileError(
            f"{html.as_posix()}: --html would overwrite it, but it is {what}; name a new"
            " file (or an earlier report); nothing written",
            path=html.as_posix(),
        )


def cache_command(paths: Sequence[Path], html: Path | None, say: Callable[[str], None]) -> int:
    """Print the reports of ``paths``; write the page to ``html``; the exit code."""
    if html is not None:
        check_html_target(html)
    reports = [report_of(path, recording) for path, recording in recordings(paths)]
    for number, report in enumerate(reports):
        if number:
            say("")
        for line in report.lines():
            say(line)
    if len(reports) > 1:
        findings = sum(len(r.findings) for r in reports)
        broken = sum(1 for r in reports if r.findings)
        say("")
        say(
            f"all: {len(reports)} recordings, {broken} with findings,"
            f" {findings} finding{'' if findings == 1 else 's'}"
        )
    if html is not None:
        from headerlock.testing.wire.cache.html import html_page

        atomic_write(html, html_page(reports))
        say(f"wrote {html.as_posix()}")
    return EXIT_FINDINGS if any(r.findings for r in reports) else EXIT_OK
