"""The ``headerlock_wire`` pytest fixture: a wire ``lock()`` around one test.

The lock opens on the test's own recording, ``recordings/<test file without
.py>/<test name>.yaml`` (``claim_recording`` claims it, so it is never reported
unused while its test exists). A plain run replays it; ``--snapshot-update``
records, ``@pytest.mark.headerlock_pin`` pins, and
``@pytest.mark.headerlock_wire(script=[...], redact_env=[...], header_class=...)``
scripts the model (without a script, or with ``--headerlock-live``, recording
forwards to the endpoint the agent calls) and names the test's header class
(``wire_classes``; ``wire_guard`` checks an unpinned test against its pin). A
record whose model request failed (HTTP >= 400, no answer) fails the test naming
its recording, whose old bytes stay, unless the marker says ``record_errors=True``. Secrets:
the default credentials, the ``headerlock_redact_env`` ini option and the marker's
``redact_env``.

The lock closes right after the test function, inside the call phase, and is
handed the test's exception as a ``with`` block would be: a mismatch is the
test's failure (with the agent's error as its context), and a failed test
records nothing. A new recording is only staged (``updates.stage``): the
session's books write it once the test has passed setup, call and teardown,
so a failing test keeps the old bytes.

A verdict cannot be hidden: a mismatch (or a failed class guard) fails the test
whatever the test does after the 400, skip, xfail or any ``BaseException``
included; the report says failed. Only an interrupt (``KeyboardInterrupt``,
``pytest.exit``) still stops the session, which then cannot end green.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Final

import pytest

from headerlock.errors import (
    ConfigError,
    HeaderlockError,
    IgnoreRuleError,
    MissingRecordingError,
    PinError,
    RecordingRunError,
    WireMismatch,
)
from headerlock.formats.header_lock import LOCK_NAME
from headerlock.formats.secrets import env_secrets, held_secrets, secret_env, secret_values
from headerlock.formats.wire_scrub import Scrubber
from headerlock.testing.plugin.call_phase import OPEN, NotRun, interrupted, rule, rule_setup
from headerlock.testing.plugin.flake_probe import dump, probe_dir, probe_lock
from headerlock.testing.plugin.session_notes import ignore_rules, note_session
from headerlock.testing.plugin.state import pending_enabled, record_mode, record_test_command
from headerlock.testing.plugin.updates import claim_recording, note_matched, updates_of
from headerlock.testing.plugin.wire_classes import (
    FIXTURE,
    MARKER,
    PIN_MARKER,
    REQUIRE_PIN_INI,
    HeaderClass,
    classes_of,
    pins_message,
    unchecked_message,
)
from headerlock.testing.plugin.wire_guard import Pin, Unguarded, guard_failure, pinned_headers
from headerlock.testing.plugin.wire_headers import header_notes, predates, stage_recording
from headerlock.testing.wire.compare import ORDER_HINT, RECORD_HINT, report
from headerlock.testing.wire.lock import WireLock
from headerlock.testing.wire.lock_options import LockOptions, lock_options
from headerlock.testing.wire.record_mode import RecordMode, records
from headerlock.testing.wire.run import WireRun

OWNED: Final = {
    "pin": "@pytest.mark.headerlock_pin",
    "pending": "--headerlock-no-pending",
    "header_lock": "the plugin (headers.lock.yaml beside the test's recordings)",
}
"""``lock()`` keywords the plugin sets for a test, and what sets them."""
HEADER_CLASS: Final = "header_class"
"""The marker's one keyword that is not ``lock()``'s (``wire_classes``)."""


@dataclass(frozen=True, slots=True)
class WireMarker:
    """What ``@pytest.mark.headerlock_wire(...)`` asks for (empty without the marker): its
    ``lock()`` keywords, checked by ``lock()``'s own check (``lock_options``), and
    whether it names the test's record mode."""

    options: LockOptions = field(default_factory=LockOptions)
    mode_given: bool = False


def wire_marker(item: pytest.Item) -> WireMarker:
    """The closest ``headerlock_wire`` marker's keywords: ``lock()``'s, and
    ``header_class``."""
    return _wire_marker(item, item.get_closest_marker(MARKER))


def _wire_marker(item: pytest.Item, marker: pytest.Mark | None) -> WireMarker:
    if marker is None:
        return WireMarker()
    where = f"{item.nodeid}: @pytest.mark.{MARKER}"
    if marker.args:
        raise ConfigError(
            f"{where} takes keywords only (lock()'s: script=[...], redact_env=[...], ...;"
            " and header_class=...)"
        )
    header_class = marker.kwargs.get(HEADER_CLASS)
    if header_class is not None and (not isinstance(header_class, str) or not header_class.strip()):
        raise ConfigError(
            f"{where}: header_class must be a non-empty string, got {header_class!r}",
            key=HEADER_CLASS,
        )
    options = lock_options(marker.kwargs, where=where, owned=OWNED, also=(HEADER_CLASS,))
    return WireMarker(options, "mode" in marker.kwargs)


class OpenLock:
    """The lock of one test while it is open; ``close`` ends it once."""

    def __init__(
        self,
        item: pytest.Item,
        lock: WireLock,
        path: Path,
        *,
        update: bool,
        header_class: HeaderClass,
        redact_env: Sequence[str],
        probe: Path | None = None,
    ) -> None:
        self.item = item
        self.probe = probe
        """Under ``headerlock flakes``: where the test's headers go (no verdict)."""
        self.lock = lock
        self.path = path
        self.update = update
        self.header_class = header_class
        self.redact_env = tuple(redact_env)
        self.run = lock.__enter__()
        self.closed = False

    def close(self, error: BaseException | None) -> None:
        """Exit the lock as a ``with`` block ending with ``error``; stage or note the result.

        Raises the replay's ``WireMismatch`` (naming the pytest command that
        re-records) or the script's ``ScriptExhaustedError``. A mismatch is raised
        whatever ``error`` is (a skip, an xfail, any ``BaseException``), except an
        interrupt, which goes on and leaves the mismatch to the session's summary.
        """
        __tracebackhide__ = True
        if self.closed:
            return
        self.closed = True
        traceback = None if error is None else error.__traceback__
        if self.probe is not None:
            self._dump(self.probe, error, traceback)
            return
        mismatch: WireMismatch | None = None
        try:
            self.lock.__exit__(None if error is None else type(error), error, traceback)
        except WireMismatch as found:
            mismatch = found
        except IgnoreRuleError as found:
            raise rule(self.item, found, plain=True) from None
        except RecordingRunError as found:
            raise rule(self.item, _named(found, self.path), plain=True) from None
        finally:
            note_session(self.item, self.run, self.lock)
        if mismatch is None and self.run.differences and not isinstance(error, NotRun):
            # the lock let a BaseException (a skip, an xfail) pass: the verdict still stands
            mismatch = WireMismatch("", path=str(self.path), differences=[])
            mismatch.__context__ = error
        if mismatch is not None:
            verdict = self._mismatch(mismatch)
            if isinstance(error, KeyboardInterrupt | pytest.exit.Exception):
                interrupted(self.item).append((self.item.nodeid, str(verdict)))
                return
            raise rule(self.item, verdict)  # outside the except: its context is the agent's
        recording = self.run.recording
        if self.update and recording is not None and error is None:
            stage_recording(self.item, self.path, self.lock)
        elif not self.update and error is None:
            note_matched(self.item, self.path)

    def _dump(self, probe: Path, error: BaseException | None, traceback: Any) -> None:
        """``headerlock flakes``: end the lock, keep no verdict, write the headers sent."""
        failure = None if error is None or isinstance(error, NotRun) else error
        try:
            self.lock.__exit__(None if error is None else type(error), error, traceback)
        except HeaderlockError as found:  # a replay that differs, an exhausted script
            failure = failure or found
        why = None if failure is None else f"{type(failure).__name__}: {failure}"
        dump(probe, self.item.nodeid, self.run.requests, secrets=self.run.secrets, error=why)

    def _mismatch(self, mismatch: WireMismatch) -> WireMismatch:
        path, found = self.path.as_posix(), self.run.differences
        extra = mismatch.differences[len(found) :]  # refusals, exchanges never sent
        head = f"wire replay of {path} does not match the recording:"
        lines = report(found, path=path).splitlines() if found else [head, RECORD_HINT]
        hint, lines = lines[-1], lines[:-1] + [f"  {line}" for line in extra]
        if hint == RECORD_HINT:  # say how to re-record this very test
            hint = f"If the change is intended, re-record: {record_test_command(self.item)}"
        elif hint == ORDER_HINT:  # name this very test
            hint = ORDER_HINT.replace("<test>", self.item.nodeid).replace(
                "re-record the test.", f"re-record it: {record_test_command(self.item)}"
            )
        lines.append(hint)
        lines += header_notes(self.item, self.run, self.lock)
        differences = mismatch.differences or [d.line() for d in self.run.differences]
        error = WireMismatch("\n".join(lines), path=mismatch.path, differences=differences)
        error.__context__ = mismatch.__context__  # the agent's error, if any
        return error

    def before_call(self) -> None:
        """Fail an unchecked class's test under ``headerlock_require_pin = true``."""
        __tracebackhide__ = True
        header_class = self.header_class
        if (
            self.probe is not None
            or header_class.pins
            or not self.item.config.getini(REQUIRE_PIN_INI)
        ):
            return
        message = unchecked_message(header_class.name, header_class.member_ids())
        raise rule(self.item, PinError([f"{message} ({REQUIRE_PIN_INI} = true)"]), plain=True)

    def guard(self) -> None:
        """Check an unpinned test's requests against its class's pin (``wire_guard``);
        raises ``PinError`` on a miss, notes for the summary a pin with no recording."""
        __tracebackhide__ = True
        pin_item = self.header_class.pin
        if self.probe is not None or pin_item is None or pin_item.nodeid == self.item.nodeid:
            return
        pin = Pin(
            pin_item.nodeid, updates_of(pin_item.config).python_path(pin_item),
            record_test_command(pin_item),
        )  # fmt: skip
        headers = pinned_headers(pin)
        if isinstance(headers, Unguarded):
            classes_of(self.item.config).note_unguarded(self.header_class, self.item, headers.why)
            return
        scrubber = Scrubber.of([*secret_values(), *env_secrets(self.redact_env)])
        message = guard_failure(
            self.item.nodeid, self.header_class.name, pin, self.run.requests, headers, scrubber
        )
        if message is not None:
            raise rule(self.item, PinError([message]), plain=True)


_UNNAMED: Final = "wire lock: "
"""How a lock with no path (the session's books write the test's file) starts an error."""


def _named(error: RecordingRunError, path: Path) -> RecordingRunError:
    """``error`` naming the test's recording ``path``, and saying its old bytes are kept."""
    text = str(error)
    if not text.startswith(_UNNAMED):
        return error
    rest = text.removeprefix(_UNNAMED)
    if path.exists():
        written = "nothing was written"
        rest = rest.replace(written, f"{written} (the old recording is kept)", 1)
    named = RecordingRunError(f"{path.as_posix()}: {rest}", scenario=path.as_posix())
    named.__context__ = error.__context__
    return named


def _closest(item: pytest.Item) -> dict[str, pytest.Mark]:
    """The closest marker of each of the plugin's names a test carries (one walk of its
    markers instead of one per name: ``get_closest_marker``'s order)."""
    found: dict[str, pytest.Mark] = {}
    for mark in item.iter_markers():
        if mark.name in _NAMES:
            found.setdefault(mark.name, mark)
    return found


_NAMES: Final = frozenset((MARKER, PIN_MARKER))
_SESSION_MODE = pytest.StashKey["RecordMode"]()


def _mode(config: pytest.Config, marked: RecordMode | None) -> RecordMode:
    """``record_mode(config, marked)``; the session's own (no marker's) worked out once:
    the command line and the ini do not change during a session."""
    if marked is not None:
        return record_mode(config, marked)
    mode = config.stash.get(_SESSION_MODE, None)
    if mode is None:
        mode = config.stash[_SESSION_MODE] = record_mode(config)
    return mode


def _open(item: pytest.Item, path: Path) -> OpenLock:
    marks = _closest(item)
    marker = _wire_marker(item, marks.get(MARKER))
    options = marker.options
    mode = _mode(item.config, options.mode if marker.mode_given else None)
    exists = path.is_file()
    update = records(mode, exists=exists)
    pinned = PIN_MARKER in marks
    header_class = classes_of(item.config).class_of(item)
    if len(header_class.pins) > 1:
        raise ConfigError(pins_message(header_class), key="headerlock_pin")
    redact_env = (*options.redact_env, *secret_env().values())
    allow_hosts = (*item.config.getini("headerlock_allow_hosts"), *options.allow_hosts)
    opened = partial(OpenLock, header_class=header_class, redact_env=options.redact_env)
    probe = probe_dir(item.config)
    if probe is not None:
        rules = ignore_rules(item, options.ignore)
        hosts = options.allow_hosts
        lock = probe_lock(item, path, options.script, redact=options.redact,
                          redact_env=redact_env, allow_hosts=hosts, ignore=rules)  # fmt: skip
        return opened(item, lock, path, update=False, probe=probe)
    if update:
        live = bool(item.config.getoption("headerlock_live", False))
        try:
            lock = WireLock(
                None,  # written by the session's books once the test passed, never here
                mode="all",
                pin=pinned,
                script=None if live else options.script,
                redact=options.redact,
                redact_env=redact_env,
                allow_hosts=allow_hosts,
                record_errors=options.record_errors,
                ignore=ignore_rules(item, options.ignore),
                header_lock=None if pinned else path.parent / LOCK_NAME,
                http_headers=options.http_headers,
            )
        except ConfigError as error:
            raise ConfigError(f"{item.nodeid}: @pytest.mark.{MARKER}: {error}") from None
        return opened(item, lock, path, update=True)
    if not exists:
        raise MissingRecordingError(
            f"no wire recording at {path.as_posix()}; record it with: {record_test_command(item)}",
            scenario=item.nodeid,
        )
    try:
        lock = WireLock(
            path,
            mode="none",
            pin=pinned,
            script=None,
            redact=options.redact,
            redact_env=redact_env,
            allow_hosts=allow_hosts,
            ignore=ignore_rules(item, options.ignore),
            pending=pending_enabled(item.config),
            header_lock=None if header_class.pin else path.parent / LOCK_NAME,  # else its guard
            http_headers=options.http_headers,
        )
        return opened(item, lock, path, update=False)
    except ConfigError as error:
        if error.key == "header":
            raise predates(error, record_test_command(item)) from None
        if error.key != "pin":
            raise
        raise ConfigError(
            f"{path.as_posix()}: the test is marked {PIN_MARKER}, but its recording is not"
            f" pinned; re-record it: {record_test_command(item)}",
            key="pin",
        ) from None


def _opened(item: pytest.Item) -> OpenLock | str:
    """The test's open lock, or why it cannot open (a missing recording, a bad marker)."""
    try:
        with held_secrets():  # the environment's secrets, read once for the steps below
            return _open(item, claim_recording(item, fixture=FIXTURE))
    except HeaderlockError as error:
        return f"{type(error).__name__}: {error}"


def open_wire(request: pytest.FixtureRequest) -> Iterator[WireRun]:
    """The ``headerlock_wire`` fixture: yields the test's ``WireRun`` (``.requests``)."""
    item = request.node
    assert isinstance(item, pytest.Item)
    opened = _opened(item)
    if isinstance(opened, str):
        probe = probe_dir(item.config)
        if probe is not None:  # headerlock flakes says why the test could not run
            dump(probe, item.nodeid, [], error=opened)
        rule_setup(item, opened)  # xfail too
        pytest.fail(opened, pytrace=False)  # the user's to fix, and the message says how
    item.stash[OPEN] = opened
    try:
        yield opened.run
    finally:
        del item.stash[OPEN]
        opened.close(NotRun())  # still open: the test function never ran (setup failed)
