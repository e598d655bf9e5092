"""The ``headerlock_wire`` pytest fixture: a wire ``lock()`` around one test.

The lock opens on the test's own recording, ``recordings/<test file without
.py>/<test name>.yaml`` (``claim_recording`` claims it, so it is never reported
unused while its test exists). A plain run replays it; ``--snapshot-update``
records, ``@pytest.mark.headerlock_pin`` pins, and
``@pytest.mark.headerlock_wire(script=[...], redact_env=[...])`` scripts the
model (without a script, or with ``--headerlock-live``, recording forwards to
the endpoint the agent calls). Secrets: the default credentials, the
``headerlock_redact_env`` ini option and the marker's ``redact_env``.

The lock closes right after the test function, inside the call phase, and is
handed the test's exception as a ``with`` block would be: a mismatch is the
test's failure (with the agent's error as its context), and a failed test
records nothing. A new recording is only staged (``updates.stage``): the
session's books write it once the test has passed setup, call and teardown,
so a failing test keeps the old bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest

from headerlock.errors import ConfigError, HeaderlockError, MissingRecordingError, WireMismatch
from headerlock.formats.secrets import secret_env
from headerlock.formats.wire_recording import WireRecording, save_wire_recording
from headerlock.testing.plugin.state import record_test_command, updating
from headerlock.testing.plugin.updates import claim_recording, note_matched, stage
from headerlock.testing.wire.compare import report
from headerlock.testing.wire.lock import WireLock, WireRun

FIXTURE: Final = "headerlock_wire"
MARKER: Final = "headerlock_wire"
PIN_MARKER: Final = "headerlock_pin"
PLUGIN_NAME: Final = "headerlock-wire-calls"
_MARKER_KEYS: Final = ("redact_env", "script")
_OPEN = pytest.StashKey["OpenLock"]()


@dataclass(frozen=True, slots=True)
class WireMarker:
    """What ``@pytest.mark.headerlock_wire(...)`` asks for (empty without the marker);
    the script is checked when a recording run uses it."""

    script: Sequence[Any] | None = None
    redact_env: tuple[str, ...] = ()


def wire_marker(item: pytest.Item) -> WireMarker:
    """The closest ``headerlock_wire`` marker's options, checked."""
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return WireMarker()
    where = f"{item.nodeid}: @pytest.mark.{MARKER}"
    if marker.args:
        raise ConfigError(f"{where} takes keywords only (script=[...], redact_env=[...])")
    unknown = sorted(set(marker.kwargs) - set(_MARKER_KEYS))
    if unknown:
        raise ConfigError(
            f"{where}: unknown keyword {unknown[0]!r}; expected script or redact_env",
            key=unknown[0],
        )
    names = marker.kwargs.get("redact_env", ())
    if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
        raise ConfigError(
            f"{where}: redact_env must be a list of environment variable names, got {names!r}",
            key="redact_env",
        )
    return WireMarker(marker.kwargs.get("script"), tuple(names))


class OpenLock:
    """The lock of one test while it is open; ``close`` ends it once."""

    def __init__(self, item: pytest.Item, lock: WireLock, path: Path, *, update: bool) -> None:
        self.item = item
        self.lock = lock
        self.path = path
        self.update = update
        self.run = lock.__enter__()
        self.closed = False

    def close(self, error: BaseException | None) -> None:
        """Exit the lock as a ``with`` block ending with ``error``; stage or note the result.

        Raises the replay's ``WireMismatch`` (naming the pytest command that
        re-records) or the script's ``ScriptExhaustedError``.
        """
        __tracebackhide__ = True
        if self.closed:
            return
        self.closed = True
        traceback = None if error is None else error.__traceback__
        mismatch: WireMismatch | None = None
        try:
            self.lock.__exit__(None if error is None else type(error), error, traceback)
        except WireMismatch as found:
            mismatch = found
        if mismatch is not None:
            raise self._mismatch(mismatch)  # outside the except: its context is the agent's
        recording = self.run.recording
        if self.update and recording is not None and error is None:
            stage(self.item, self.path, recording.to_text(), _writer(recording, self.path))
        elif not self.update and error is None:
            note_matched(self.item, self.path)

    def _mismatch(self, mismatch: WireMismatch) -> WireMismatch:
        lines = report(self.run.differences, path=self.path.as_posix()).splitlines()
        lines[-1] = f"If the change is intended, re-record: {record_test_command(self.item)}"
        error = WireMismatch("\n".join(lines), path=mismatch.path, differences=mismatch.differences)
        error.__context__ = mismatch.__context__  # the agent's error, if any
        return error


class _NotRun(BaseException):
    """Handed to a lock whose test function never ran: end it without a verdict."""


def _writer(recording: WireRecording, path: Path) -> Callable[[], None]:
    def write() -> None:
        save_wire_recording(recording, path)  # atomic: a reader sees old or new bytes

    return write


class CallPhase:
    """Plugin object: closes a test's wire lock when its function returns or raises."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, object, object]:
        __tracebackhide__ = True
        try:
            result = yield
        except BaseException as error:
            opened = item.stash.get(_OPEN, None)
            if opened is not None:
                opened.close(error)  # a mismatch replaces the error, which stays its context
            raise
        opened = item.stash.get(_OPEN, None)
        if opened is not None:
            opened.close(None)
        return result


def _install(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin(PLUGIN_NAME):
        config.pluginmanager.register(CallPhase(), PLUGIN_NAME)


def _open(item: pytest.Item, path: Path) -> OpenLock:
    update = updating(item.config)
    pinned = item.get_closest_marker(PIN_MARKER) is not None
    options = wire_marker(item)
    redact_env = (*options.redact_env, *secret_env().values())
    if update:
        live = bool(item.config.getoption("headerlock_live", False))
        try:
            lock = WireLock(
                None,  # written by the session's books once the test passed, never here
                mode="record",
                pin=pinned,
                script=None if live else options.script,
                redact=None,
                redact_env=redact_env,
            )
        except ConfigError as error:
            raise ConfigError(f"{item.nodeid}: @pytest.mark.{MARKER}: {error}") from None
        return OpenLock(item, lock, path, update=True)
    if not path.is_file():
        raise MissingRecordingError(
            f"no wire recording at {path.as_posix()}; record it with: {record_test_command(item)}",
            scenario=item.nodeid,
        )
    lock = WireLock(
        path, mode="replay", pin=pinned, script=None, redact=None, redact_env=redact_env
    )
    try:
        return OpenLock(item, lock, path, update=False)
    except ConfigError as error:
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
        return _open(item, claim_recording(item, fixture=FIXTURE))
    except HeaderlockError as error:
        return f"{type(error).__name__}: {error}"


def open_wire(request: pytest.FixtureRequest) -> Iterator[WireRun]:
    """The ``headerlock_wire`` fixture: yields the test's ``WireRun`` (``.requests``)."""
    item = request.node
    assert isinstance(item, pytest.Item)
    _install(item.config)
    opened = _opened(item)
    if isinstance(opened, str):
        pytest.fail(opened, pytrace=False)  # the user's to fix, and the message says how
    item.stash[_OPEN] = opened
    try:
        yield opened.run
    finally:
        del item.stash[_OPEN]
        opened.close(_NotRun())  # still open: the test function never ran (setup failed)
