"""The call phase of a ``headerlock_wire`` test: its lock closes when the test function
returns or raises, its class guard runs, and a failed check is the test's verdict.

A verdict cannot be hidden: the report of the phase it belongs to says failed, whatever
the test did after the 400 (skip, xfail, any ``BaseException``). A mismatch in a test
that stopped the session (an interrupt) is kept for the summary and fails the session.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import pytest

if TYPE_CHECKING:
    from headerlock.testing.plugin.wire_fixture import OpenLock

OPEN: pytest.StashKey[OpenLock] = pytest.StashKey()
"""The test's lock while it is open (set by the fixture)."""
_VERDICT = pytest.StashKey["Verdict"]()
_INTERRUPTED = pytest.StashKey[list[tuple[str, str]]]()


@dataclass(frozen=True, slots=True)
class Verdict:
    """A test's failed check (a mismatch, a class guard, a lock that could not open): its
    report of phase ``when`` says failed; ``plain`` shows only the message (no traceback)."""

    error: BaseException
    plain: bool = False
    when: str = "call"


def rule(item: pytest.Item, error: BaseException, *, plain: bool = False) -> BaseException:
    """Note ``error`` as ``item``'s verdict (``CallPhase`` makes the report say failed)."""
    item.stash[_VERDICT] = Verdict(error, plain)
    return error


def verdict(item: pytest.Item, error: BaseException) -> BaseException:
    """``error`` as ``item``'s verdict: its call fails whatever xfail marker it carries."""
    return rule(item, error)


def rule_setup(item: pytest.Item, message: str) -> None:
    """A lock that could not open: the setup's report says failed, xfail or not."""
    item.stash[_VERDICT] = Verdict(pytest.fail.Exception(message), True, "setup")


def interrupted(item: pytest.Item) -> list[tuple[str, str]]:
    """The mismatches of tests that stopped the session (node id, message)."""
    return item.config.stash.setdefault(_INTERRUPTED, [])


class NotRun(BaseException):
    """Handed to a lock whose test function never ran: end it without a verdict."""


SUMMARY_HEAD: Final = "{nodeid} stopped the session after its wire replay failed:"


class CallPhase:
    """Closes a test's wire lock when its function returns or raises, runs its class
    guard, and makes the report of a failed check say failed (a part of the session)."""

    def call(self, item: pytest.Item) -> Generator[None, object, object]:
        """Wrap the test function (``yield`` runs it)."""
        __tracebackhide__ = True
        opened = item.stash.get(OPEN, None)
        if opened is not None:
            opened.before_call()
        try:
            result = yield
        except BaseException as error:
            opened = item.stash.get(OPEN, None)
            if opened is not None:
                opened.close(error)  # a mismatch replaces the error, which stays its context
            raise
        opened = item.stash.get(OPEN, None)
        if opened is not None:
            opened.close(None)
            opened.guard()
        return result

    def made_report(
        self, item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport
    ) -> None:
        """A verdict makes its phase's report say failed (after xfail had its say)."""
        found = item.stash.get(_VERDICT, None)
        if found is not None and report.when == found.when:
            report.outcome = "failed"
            if hasattr(report, "wasxfail"):
                del report.wasxfail
            if found.plain or call.excinfo is None or call.excinfo.value is not found.error:
                report.longrepr = str(found.error)

    def finish(self, session: pytest.Session) -> None:
        """A session a mismatch stopped does not end green."""
        if session.config.stash.get(_INTERRUPTED, None) and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def lines(self, config: pytest.Config) -> list[str]:
        """The summary's part: each mismatch that stopped the session."""
        lines = []
        for nodeid, message in config.stash.get(_INTERRUPTED, []):
            lines += [f"headerlock: {SUMMARY_HEAD.format(nodeid=nodeid)}", message]
        return lines
