"""The pytest report text of headerlock's failures, made safe for a terminal.

A failure headerlock raised (its message quotes recorded and sent requests: tool and
model names, prompts) and headerlock's report sections and summary lines go through
``headerlock.formats.display.escaped`` before pytest shows them (the terminal, the
short summary, ``--junitxml``). Other tests' reports are left as pytest made them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from headerlock.formats.display import escaped

_OURS = "headerlock."
"""How the crash line of an error headerlock raised starts (``headerlock.errors.X: ...``)."""


def escape_report(report: pytest.TestReport) -> None:
    """Escape ``report``'s failure text when headerlock raised it, and its headerlock
    sections."""
    longrepr = report.longrepr
    if isinstance(longrepr, str):
        report.longrepr = escaped(longrepr)
    elif _ours(longrepr):
        report.longrepr = _escape_all(longrepr)
    report.sections = [
        (title, escaped(text) if "headerlock" in title else text) for title, text in report.sections
    ]


def summary_line(terminalreporter: Any, line: str) -> None:
    """Write one headerlock summary line to the terminal, escaped."""
    terminalreporter.write_line(escaped(line))


def _ours(longrepr: object) -> bool:
    crash = getattr(longrepr, "reprcrash", None)
    message = getattr(crash, "message", "")
    return isinstance(message, str) and message.startswith(_OURS)


def _escape_all(value: Any) -> Any:
    """``value`` (pytest's failure representation) with every string in it escaped."""
    if isinstance(value, str):
        return escaped(value)
    if isinstance(value, list):
        return [_escape_all(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_escape_all(item) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            object.__setattr__(value, field.name, _escape_all(getattr(value, field.name)))
    return value
