"""``pytest --headerlock-cache[=fail]`` (ini ``headerlock_cache``): the cache report of
every ``headerlock_wire`` test.

When a wire test's function returns and its lock has closed (this hook wraps the one
that closes it), its session is reported from the bytes it sent (its ``WireRun``: every
segment seen, pinned or not), numbered as the recording it read or wrote numbers them,
with each recorded response's usage on the request that received it. The report travels on the
test's ``user_properties`` (so xdist workers hand it to the controller) and the
terminal summary prints it in the headerlock section, one block per test. ``fail`` also
fails a test whose session has a finding, with a ``CacheBreakError`` listing them (a failed test
records nothing, as any failure).
"""

from __future__ import annotations

from typing import Any, Final

import pytest

OPTION: Final = "headerlock_cache"
INI: Final = "headerlock_cache"
MODES: Final = ("report", "fail")
PROPERTY: Final = "headerlock_cache"
HEADING: Final = "headerlock cache report"


def cache_mode(config: pytest.Config) -> str | None:
    """``report``, ``fail`` or ``None`` (off): the option, else the ini value."""
    given = config.getoption(OPTION, None)
    if given:
        return str(given)
    value = str(config.getini(INI) or "").strip().lower()
    if value in ("", "off", "false", "no", "0"):
        return None
    if value in ("true", "yes", "1", "on"):
        return "report"
    if value not in MODES:
        raise pytest.UsageError(f"headerlock: {INI} = {value!r}: expected report, fail or off")
    return value


class CacheWatch:
    """Reports (and under ``fail`` checks) each wire test's session (a part of the
    session, there when the option or the ini value asks for it)."""

    def __init__(self, fail: bool) -> None:
        self.fail = fail
        self.sections: list[tuple[str, str, bool]] = []

    def after_call(self, item: pytest.Item) -> None:
        """Report the session of ``item``'s lock, which has closed; under ``fail`` raise
        ``CacheBreakError`` when it has a finding."""
        __tracebackhide__ = True
        run = _wire_run(item)
        if run is None or not run.requests:
            return
        from headerlock.testing.wire.cache.report import cache_report

        report = cache_report(run)
        name = f"{item.nodeid} ({run.path.as_posix()})" if run.path is not None else item.nodeid
        lines = report.lines()
        lines[0] = lines[0].replace(report.name, name, 1)
        item.user_properties.append((PROPERTY, ("\n".join(lines), bool(report.findings))))
        if self.fail and report.findings:
            from headerlock.errors import CacheBreakError
            from headerlock.testing.wire.cache.text import break_message

            found = report.findings
            raise CacheBreakError(
                break_message(report, found) + f"\n({INI} = fail: --headerlock-cache=fail)",
                path=report.name,
                findings=[f.line() for f in found],
                codes=[f.code for f in found],
            )

    def logged(self, report: pytest.TestReport) -> None:
        """Keep the report a call phase carries (on the xdist controller: a worker's)."""
        if report.when != "call":
            return
        for key, value in report.user_properties:
            if key == PROPERTY and isinstance(value, (tuple, list)) and len(value) == 2:
                self.sections.append((report.nodeid, str(value[0]), bool(value[1])))

    def lines(self) -> list[str]:
        """The summary's cache part: a heading, each test's report, then the count."""
        if not self.sections:
            return []
        broken = sum(1 for _, _, found in self.sections if found)
        lines = [HEADING]
        for _, text, _ in sorted(self.sections):
            lines += text.splitlines()
        noun = "test" if len(self.sections) == 1 else "tests"
        lines.append(f"headerlock cache: {len(self.sections)} wire {noun}, {broken} with findings")
        return lines


def _wire_run(item: pytest.Item) -> Any:
    funcargs = getattr(item, "funcargs", None)
    if not isinstance(funcargs, dict) or "headerlock_wire" not in funcargs:
        return None
    from headerlock.testing.wire.run import WireRun

    run = funcargs["headerlock_wire"]
    return run if isinstance(run, WireRun) else None


def cache_watch(config: pytest.Config) -> CacheWatch | None:
    """The watch when the option or the ini value asks for one."""
    mode = cache_mode(config)
    return None if mode is None else CacheWatch(fail=mode == "fail")
