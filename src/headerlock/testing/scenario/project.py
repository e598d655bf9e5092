"""A project's fixtures and recordings directories, and the checks run over them."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import NoReturn

from headerlock.errors import (
    HeaderlockError,
    MissingRecordingError,
    PinError,
    RecordingError,
    ReplayMismatch,
    ScenarioError,
    ScenarioRunError,
    WireRecordingError,
)
from headerlock.formats.fixture import Scenario, check_name, discover
from headerlock.formats.header_lock import load_lock, lock_path
from headerlock.formats.pending import base_of
from headerlock.formats.recording import Recording, load_recording, save_recording
from headerlock.formats.scrub import full_headers, redact_secrets
from headerlock.formats.secrets import secret_values
from headerlock.formats.strict_yaml import locate, read_text
from headerlock.formats.write_lock import write_unless_changed
from headerlock.runtime.driver import RunOutput
from headerlock.runtime.header import RequestHeader
from headerlock.testing.scenario import pending
from headerlock.testing.scenario.fixtures import load_scenario
from headerlock.testing.scenario.header_locks import (
    check_locked,
    locked_headers,
    run_header_ids,
    write_lock,
)
from headerlock.testing.scenario.pins import (
    check_against_pin,
    check_fixed_point,
    pinned_header,
    pins_by_class,
)
from headerlock.testing.scenario.replay import (
    assert_scenario_matches,
    record_scenario,
    record_scenario_command,
    replay_scenario,
)

MAX_NAME_BYTES = 255
"""The longest file name (one path component) common filesystems accept."""


def check_workspace_files(scenario: Scenario) -> None:
    """Refuse ``files:`` keys that cannot become files in a fresh workspace: the
    workspace itself, a directory, an over-long name, two keys for one file, or a
    file that another key uses as a directory."""
    seen: dict[str, str] = {}
    for relative in scenario.files:
        parts = [part for part in relative.split("/") if part not in ("", ".")]
        problem = None
        if not parts:
            problem = "names the workspace itself, not a file"
        elif relative.endswith("/"):
            problem = "ends with '/': name a file, not a directory"
        elif any(len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for part in parts):
            problem = f"has a name longer than {MAX_NAME_BYTES} bytes"
        elif "/".join(parts) in seen:
            problem = f"names the same file as {seen['/'.join(parts)]!r}"
        if problem is None:
            seen["/".join(parts)] = relative
            continue
        _refuse_file(scenario, relative, f"file path {relative!r} {problem}")
    directories: dict[str, str] = {}
    for normalized, relative in sorted(seen.items()):
        parts = normalized.split("/")
        for end in range(1, len(parts)):
            directories.setdefault("/".join(parts[:end]), relative)
    for normalized, relative in sorted(seen.items()):
        if normalized in directories:
            inside = directories[normalized]
            _refuse_file(
                scenario,
                relative,
                f"file path {relative!r} is a file, but {inside!r} uses it as a directory",
            )


def _refuse_file(scenario: Scenario, relative: str, message: str) -> NoReturn:
    try:
        line = locate(read_text(scenario.path), ["files", relative])
    except HeaderlockError:
        line = None
    raise ScenarioError(message, path=str(scenario.path), key=f"files.{relative}", line=line)


@dataclass
class Project:
    """``fixtures/`` (scenarios people write) and ``recordings/`` (what runs produced)."""

    fixtures: Path
    recordings: Path
    pending: bool = True
    """A mismatching replay writes ``<name>.yaml.new`` (``scenario.pending``)."""
    _scenarios: dict[str, Scenario] = field(default_factory=dict, repr=False)
    _pins: dict[str, tuple[Scenario, RequestHeader]] = field(default_factory=dict, repr=False)
    _recordings: dict[str, tuple[tuple[object, ...], Recording]] = field(
        default_factory=dict, repr=False
    )
    _incomplete: set[str] = field(default_factory=set, repr=False)
    """Scenarios whose run did not complete here (a crash, a turn timeout): the guards
    never run them again (a second timeout, the same failure printed twice)."""

    def scenario_names(self) -> list[str]:
        """Names of every fixture, sorted."""
        return [p.stem for p in discover(self.fixtures)]

    def scenario_path(self, name: str) -> Path:
        """``fixtures/<name>.yaml``; the name may not leave the directory."""
        return self.fixtures / f"{check_name(name, path=str(self.fixtures))}.yaml"

    def recording_path(self, name: str) -> Path:
        """``recordings/<name>.yaml``; the name may not leave the directory."""
        return self.recordings / f"{check_name(name, path=str(self.recordings))}.yaml"

    def scenario(self, name: str) -> Scenario:
        """The validated scenario ``name`` (cached)."""
        if name not in self._scenarios:
            path = self.scenario_path(name)
            if not path.is_file():
                raise ScenarioError("no such fixture", path=str(path))
            scenario = load_scenario(path)
            check_workspace_files(scenario)
            self._scenarios[name] = scenario
        return self._scenarios[name]

    def scenarios(self) -> list[Scenario]:
        """Every scenario; the first invalid fixture raises."""
        return [self.scenario(name) for name in self.scenario_names()]

    def valid_scenarios(self) -> list[Scenario]:
        """Every scenario that loads (an invalid fixture fails its own check, not others)."""
        valid = []
        for name in self.scenario_names():
            try:
                valid.append(self.scenario(name))
            except HeaderlockError:
                continue
        return valid

    def recording(self, name: str) -> Recording | None:
        """The recording of ``name``, or ``None`` when there is none yet.

        Each file is read once while it stays the same file (same inode, size and
        modification time): the scenario's item and the guards share the load.
        """
        path = self.recording_path(name)
        if not path.exists():
            self._recordings.pop(name, None)
            return None
        info = path.stat()
        stamp = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, secret_values())
        cached = self._recordings.get(name)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        self._recordings.pop(name, None)
        recording = load_recording(path)
        self._recordings[name] = (stamp, recording)
        return recording

    def _loaded_fixed_point(self, name: str, recording: Recording) -> bool:
        """Whether loading ``recording`` (unpinned, cached) already proved it a scrub
        fixed point under the secrets in force now."""
        cached = self._recordings.get(name)
        return (
            cached is not None
            and cached[1] is recording
            and not recording.pinned
            and cached[0][-1] == secret_values()
        )

    def require_recording(self, scenario: Scenario) -> Recording:
        """The recording of ``scenario``; a missing one is an error with the record command."""
        recording = self.recording(scenario.name)
        if recording is None:
            raise MissingRecordingError(
                f"scenario {scenario.name!r} has no recording at"
                f" {self.recording_path(scenario.name).as_posix()}; record it with:"
                f" {record_scenario_command(scenario)}",
                scenario=scenario.name,
            )
        return recording

    def reusable_recording(self, name: str) -> Recording | None:
        """The recording to take model output from when re-recording (``None`` if
        missing or broken: a broken file is replaced, its output not reused)."""
        try:
            return self.recording(name)
        except RecordingError:
            return None

    async def record(self, scenario: Scenario, *, live: bool = False) -> Recording:
        """Record ``scenario``, check it against its class's pin (a ``PinError`` writes
        nothing: the old recording stays), and write its recording atomically."""
        path = self.recording_path(scenario.name)
        base = base_of(path)
        existing = self.reusable_recording(scenario.name)
        with self.noting_incomplete(scenario):
            recording, output = await record_scenario(scenario, existing=existing, live=live)
        await self.check_pin_guard(scenario, output)
        locked = self.header_locked(scenario)
        recording = self.with_header_ids(scenario, recording, output)
        text = recording.to_text()
        ours = "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
        write_unless_changed(  # another writer's identical bytes lose nobody's update
            path,
            partial(save_recording, recording, path),
            unchanged=lambda: base_of(path) in (base, ours),
            since="this record run started",
        )
        if locked:
            self.lock_headers(scenario, output)
        return recording

    def with_header_ids(
        self, scenario: Scenario, recording: Recording, output: RunOutput
    ) -> Recording:
        """``recording`` with the ids of its run's headers when its class is header-locked."""
        if not self.header_locked(scenario):
            return recording
        return replace(recording, headers=run_header_ids(output.events))

    def lock_headers(self, scenario: Scenario, output: RunOutput) -> None:
        """Merge a header-locked run's headers into ``recordings/headers.lock.yaml``
        (after its recording is written: the lock keeps the ids recordings refer to)."""
        if self.header_locked(scenario):
            write_lock(self.recordings, locked_headers(output.events))

    def check_header_lock(
        self, scenario: Scenario, expected: Recording, actual: Recording, output: RunOutput
    ) -> Recording:
        """Raise ``ReplayMismatch`` naming the segment when a header-locked run's headers
        differ from the locked ones; ``actual`` with the header ids otherwise."""
        if not self.header_locked(scenario):
            return actual
        check_locked(
            scenario.name,
            expected.headers or (),
            output.events,
            recordings=self.recordings,
            command=record_scenario_command(scenario),
        )
        return replace(actual, headers=run_header_ids(output.events))

    def header_locked(self, scenario: Scenario) -> bool:
        """Whether ``scenario``'s header is locked in ``recordings/headers.lock.yaml``:
        it is unpinned and its class has no pin."""
        if scenario.pin:
            return False
        return scenario.header_class not in pins_by_class(self.valid_scenarios())

    async def replay(self, scenario: Scenario) -> tuple[Recording, RunOutput]:
        """Replay ``scenario`` against its recording; raises ``ReplayMismatch`` on change."""
        expected = self.require_recording(scenario)
        with self.noting_incomplete(scenario):
            actual, output = await replay_scenario(scenario, expected)
        path = self.recording_path(scenario.name)
        actual = self.check_header_lock(scenario, expected, actual, output)
        try:
            assert_scenario_matches(scenario, expected, actual, path=path)
        except ReplayMismatch as error:
            if not self.pending:
                raise
            raise pending.pend(path, actual, error) from None
        if self.pending:
            pending.clear(path)
        return actual, output

    @contextmanager
    def noting_incomplete(self, scenario: Scenario) -> Iterator[None]:
        """Note ``scenario`` as incomplete when its run in the block raises
        ``ScenarioRunError`` (its pin's guard then never runs it again)."""
        try:
            yield
        except ScenarioRunError:
            self._incomplete.add(scenario.name)
            raise

    async def pin(self, header_class: str) -> tuple[Scenario, RequestHeader]:
        """The pinned scenario of ``header_class`` and its live header (cached); a pin
        whose run did not complete here is not run again (``ScenarioRunError``)."""
        if header_class not in self._pins:
            pin = pins_by_class(self.valid_scenarios())[header_class]
            if pin.name in self._incomplete:
                raise ScenarioRunError(_unchecked(pin.name, header_class), scenario=pin.name)
            recording = self.recording(pin.name)
            if recording is not None:
                _, output = await replay_scenario(pin, recording)
            else:
                _, output = await record_scenario(pin)
            self._pins[header_class] = (pin, pinned_header(pin, output.events))
        return self._pins[header_class]

    async def check_pin_guard(self, scenario: Scenario, output: RunOutput) -> None:
        """Raise ``PinError`` if an unpinned run's headers differ from its pin after restore."""
        if scenario.pin or not full_headers(output.events) or self.header_locked(scenario):
            return  # a class with no pin: its header lock guards it
        pin, header = await self.pin(scenario.header_class)
        problems = check_against_pin(scenario, output.events, pin, header)
        if problems:
            raise PinError(problems)

    async def check_recording_guard(self, scenario: Scenario, recording: Recording) -> None:
        """The guard ``record`` runs before writing, for a recording made elsewhere (a
        pending file being accepted): replay ``scenario`` with ``recording``'s model
        output and check the run against its class's pin (``PinError``)."""
        _, output = await replay_scenario(scenario, recording)
        await self.check_pin_guard(scenario, output)

    async def check_files(self, *, updating: bool = False) -> None:
        """Project-wide guards: one pin per class, scrub fixed points, pins not stale.

        ``updating``: the session records, so a pin with no recording yet is being
        recorded by its own item (under xdist perhaps on another worker, and after this
        check); that item reports its own failure."""
        scenarios = self.scenarios()
        pins = pins_by_class(scenarios)
        problems: list[str] = []
        recordings: dict[str, Recording | None] = {}
        for scenario in scenarios:
            try:
                recording = recordings[scenario.name] = self.recording(scenario.name)
            except RecordingError as error:
                problems.append(str(error))
                continue
            if recording is None or self._loaded_fixed_point(scenario.name, recording):
                continue  # loading refuses an unpinned recording that is not a fixed point
            problem = check_fixed_point(recording, self.recording_path(scenario.name))
            if problem:
                problems.append(problem)
        problems.extend(self._unlocked(recordings))
        for header_class, pin in sorted(pins.items()):
            if pin.name not in recordings:
                continue  # its recording is broken: reported above
            recording = recordings[pin.name]
            if pin.name in self._incomplete:
                problems.append(_unchecked(pin.name, header_class))
                continue
            if recording is None:
                if not updating:
                    problems.append(
                        f"pin {pin.name!r} of class {header_class!r} is not recorded yet"
                    )
                continue
            on_disk = full_headers(recording.events)
            _, live = await self.pin(header_class)
            if on_disk and on_disk[0][1].to_data() != redact_secrets(live.to_data()):
                problems.append(
                    f"pin {pin.name!r} of class {header_class!r} is stale: its recorded header"
                    f" differs from a live run; re-record: {record_scenario_command(pin)}"
                )
        if problems:
            raise PinError(problems)

    def _unlocked(self, recordings: dict[str, Recording | None]) -> list[str]:
        """Problems where a recording refers to a header its header lock lacks."""
        referring = {n: r for n, r in sorted(recordings.items()) if r is not None and r.headers}
        if not referring:
            return []
        path = lock_path(self.recordings)
        try:
            known = load_lock(path).headers
        except WireRecordingError as error:
            return [f"{error}; re-record the scenarios that refer to it: headerlock record"]
        return [
            f"{self.recording_path(name).as_posix()}: header {ident} is missing from"
            f" {path.as_posix()}; re-record: {record_scenario_command(self.scenario(name))}"
            for name, recording in referring.items()
            for ident in recording.headers or ()
            if ident not in known
        ]


def _unchecked(pin: str, header_class: str) -> str:
    return (
        f"pin {pin!r} of class {header_class!r} is not checked: its run did not complete"
        " (above), so it is not run again"
    )
