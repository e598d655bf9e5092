"""``pytest --headerlock-cache[=fail]`` (ini ``headerlock_cache``): the cache report of
every ``headerlock_wire`` test.

When a wire test's function returns and its lock has closed (this hook wraps the one
that closes it), its session is reported from the bytes it sent (its ``WireRun``: every
segment seen, pinned or not), numbered as the recording it read or wrote numbers them,
with each recorded response's usage on the request that received it. The report travels on the
test's ``user_properties`` (so xdist workers hand it to the controller) and the
terminal summary prints it, one section per test. ``fail`` also fails a test whose
session has a finding, with a ``CacheBreakError`` listing them (a failed test
records nothing, as any failure).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Final

import pytest

from headerlock.testing.plugin.display import summary_line

OPTION: Final = "headerlock_cache"
INI: Final = "headerlock_cache"
MODES: Final = ("report", "fail")
PROPERTY: Final = "headerlock_cache"
PLUGIN_NAME: Final = "headerlock-wire-cache"


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
    """Plugin object: reports (and under ``fail`` checks) each wire test's session."""

    def __init__(self, fail: bool) -> None:
        self.fail = fail
        self.sections: list[tuple[str, str, bool]] = []

    @pytest.hookimpl(wrapper=True, tryfirst=True)  # outermost: after the lock has closed
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, object, object]:
        __tracebackhide__ = True
        result = yield
        run = _wire_run(item)
        if run is None or not run.requests:
            return result
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
        return result

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        for key, value in report.user_properties:
            if key == PROPERTY and isinstance(value, (tuple, list)) and len(value) == 2:
                self.sections.append((report.nodeid, str(value[0]), bool(value[1])))

    def pytest_terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> None:
        if not self.sections:
            return
        broken = sum(1 for _, _, found in self.sections if found)
        terminalreporter.section("headerlock cache report")
        for _, text, _ in sorted(self.sections):
            for line in text.splitlines():
                summary_line(terminalreporter, line)
        noun = "test" if len(self.sections) == 1 else "tests"
        terminalreporter.write_line(
            f"headerlock cache: {len(self.sections)} wire {noun}, {broken} with findings"
        )


def _wire_run(item: pytest.Item) -> Any:
    funcargs = getattr(item, "funcargs", None)
    if not isinstance(funcargs, dict) or "headerlock_wire" not in funcargs:
        return None
    from headerlock.testing.wire.run import WireRun

    run = funcargs["headerlock_wire"]
    return run if isinstance(run, WireRun) else None


def install(config: pytest.Config) -> None:
    """Register the watch when the option or the ini value asks for it."""
    mode = cache_mode(config)
    if mode is not None and not config.pluginmanager.has_plugin(PLUGIN_NAME):
        config.pluginmanager.register(CacheWatch(fail=mode == "fail"), PLUGIN_NAME)
