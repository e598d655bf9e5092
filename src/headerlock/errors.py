"""The exception tree: every error headerlock raises on purpose (``headerlock`` re-exports
the few a test catches).

Each class subclasses ``HeaderlockError`` and carries structured fields beside
its one-line message. Where a built-in exception fits too, it is a second base,
so ``except ValueError`` and ``pytest.raises(AssertionError)`` keep working::

    HeaderlockError
    ├── ConfigError (ValueError) ............ a configuration value is invalid
    │   ├── ToolOrderError .................. a tool_order policy is malformed or unsatisfiable
    │   ├── UnorderedValueError (TypeError) . a set where bytes need a deterministic order
    │   ├── RecordingClashError ............. two tests would write the same recording file
    │   ├── ScriptAmbiguityError ............ concurrent requests raced for differing replies
    │   ├── WireOwnershipError .............. a request could belong to two open wire locks
    │   ├── IgnoreRuleError ................. an ignore rule matched no request of its session
    │   └── WireToolError ................... a tool given to order_wire_tools has no known shape
    ├── InputFileError (ValueError) ......... a file headerlock reads is unusable
    │   ├── YamlError ....................... not strict YAML (aliases, duplicate keys, ...)
    │   ├── ScenarioError ................... a fixture (scenario) file is invalid
    │   ├── RefusedPendingError ............. a pending file accepting refuses (partial, guard)
    │   │   └── StalePendingError ........... a pending file whose recording changed since
    │   └── RecordingError .................. a recording is malformed, tampered or outdated
    │       └── WireRecordingError .......... a wire recording is malformed (names file and key)
    ├── SerializationError (ValueError, TypeError) a value cannot be written as canonical YAML
    ├── OutputFileError ..................... a file could not be written (the old bytes are kept)
    ├── PluginError ......................... a plugin could not be resolved, called or loaded
    │   ├── PluginTimeoutError (TimeoutError) a plugin did not finish loading in time
    │   └── PluginExitError ................. a plugin raised SystemExit (sys.exit) while loading
    ├── ServiceError ........................ the plugin host's service table refused a call
    │   ├── ServiceNotFoundError (LookupError)
    │   └── ServiceConflictError (ValueError)
    ├── ToolRegistrationError ............... a tool name is taken or invalid
    ├── AgentError .......................... the agent runtime failed while running
    │   ├── AssemblyError ................... a system-prompt/assemble listener broke the contract
    │   ├── ModelError ...................... the model adapter failed
    │   │   └── ScriptExhaustedError ........ a scripted model got a request after its last reply
    │   ├── ReplayError ..................... a recording has no model output where one is needed
    │   ├── ToolExecutionError .............. a tool call could not be carried out
    │   ├── ToolInputError (ValueError) ..... a tool was called with arguments it cannot use
    │   ├── WorkspaceError .................. a path leaves the workspace
    │   ├── TurnBusyError ................... run_turn while a turn is running
    │   ├── AppStateError ................... the app used in a state that does not allow it
    │   ├── CorruptLogError ................. the session log breaks its own rules
    │   └── ReconstructionError ............. a request differs from its rebuild from the log
    ├── MissingRecordingError ............... a scenario has no recording and may not create one
    ├── NetworkSealedError (ConnectionRefusedError) a sealed wire lock refused to send
    └── CheckFailed (AssertionError) ........ a headerlock check failed; the message explains
        ├── ReplayMismatch .................. a replayed run differs from its recording
        ├── PinError ........................ a pin guard failed
        ├── OrderDependenceError ............ two registration orders gave different bytes
        │   └── WireOrderError .............. two orders of an agent's items sent different requests
        ├── RecordingRunError ............... a run made to record failed; nothing written
        ├── ScenarioRunError ................ a scenario's run crashed or hung; nothing written
        ├── WireMismatch .................... requests under a wire lock differ from the recording
        └── CacheBreakError ................. a recorded session's prompt cache breaks
"""

from __future__ import annotations

from collections.abc import Sequence


class HeaderlockError(Exception):
    """Base of every error headerlock raises on purpose."""


# -- configuration ---------------------------------------------------------------------


class ConfigError(HeaderlockError, ValueError):
    """A configuration value is invalid; ``key`` names it when known."""

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class ToolOrderError(ConfigError):
    """A ``tool_order`` policy is malformed or cannot be satisfied.

    ``kind`` is one of ``type``, ``duplicate``, ``missing-rest``,
    ``unregistered`` or ``reserved``; ``names`` are the offending names.
    """

    def __init__(self, message: str, *, kind: str, names: Sequence[str] = ()) -> None:
        super().__init__(message, key="tool_order")
        self.kind = kind
        self.names = tuple(names)


class UnorderedValueError(ConfigError, TypeError):
    """A set (no deterministic order) was given where bytes must not depend on hashing."""


class RecordingClashError(ConfigError):
    """Two tests would write the same recording file; ``path`` is the file, ``owners``
    the node ids of the tests (a ``headerlock_name`` marker is the usual cause)."""

    def __init__(self, message: str, *, path: str, owners: Sequence[str]) -> None:
        super().__init__(message, key="headerlock_name")
        self.path = path
        self.owners = tuple(owners)


# -- files -----------------------------------------------------------------------------


class InputFileError(HeaderlockError, ValueError):
    """A file headerlock reads is unusable; ``path`` names it, ``reason`` is the bare cause."""

    def __init__(self, message: str, *, path: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.reason = message if reason is None else reason


class YamlError(InputFileError):
    """A YAML file could not be read; ``path`` and ``line`` say where (line is 1-based)."""

    def __init__(self, message: str, *, path: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}", path=path, reason=message)
        self.line = line


class ScenarioError(InputFileError):
    """A fixture is invalid; ``path``, ``key`` and ``line`` say where."""

    def __init__(
        self, message: str, *, path: str, key: str | None = None, line: int | None = None
    ) -> None:
        where = f"{path}:{line}" if line is not None else path
        what = f" {key}:" if key else ""
        super().__init__(f"{where}:{what} {message}", path=path, reason=message)
        self.key = key
        self.line = line


class RecordingError(InputFileError):
    """A recording file is missing, malformed, of another version or tampered with."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(f"{path}: {message}", path=path, reason=message)


class SerializationError(HeaderlockError, ValueError, TypeError):
    """A value cannot be written as canonical YAML (unknown type, non-string key,
    lone surrogate)."""


class OutputFileError(HeaderlockError):
    """A file could not be written (disk full, read-only, too large); the old file is kept.

    ``path`` names the file, ``reason`` is the bare cause.
    """

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.reason = message


# -- plugin host -----------------------------------------------------------------------


class PluginError(HeaderlockError):
    """A plugin could not be resolved, called or loaded."""

    def __init__(self, message: str, *, plugin: str) -> None:
        super().__init__(message)
        self.plugin = plugin


class PluginTimeoutError(PluginError, TimeoutError):
    """A plugin did not finish loading within ``timeout`` seconds (``plugin_timeout``)."""

    def __init__(self, plugin: str, *, timeout: float) -> None:
        super().__init__(
            f"plugin {plugin} did not finish loading within {timeout:g}s (plugin_timeout)",
            plugin=plugin,
        )
        self.timeout = timeout


class PluginExitError(PluginError):
    """A plugin raised ``SystemExit`` (called ``sys.exit``) while loading: its failure,
    not an exit of the process; ``code`` is the exit code it gave."""

    def __init__(self, plugin: str, *, code: object) -> None:
        super().__init__(
            f"plugin {plugin} raised SystemExit({code!r}) while loading", plugin=plugin
        )
        self.code = code


class ServiceError(HeaderlockError):
    """The plugin host's service table refused a call; ``name`` is the service."""

    def __init__(self, message: str, *, name: str) -> None:
        super().__init__(message)
        self.name = name


class ServiceNotFoundError(ServiceError, LookupError):
    """A service was requested from a context that does not provide it."""

    def __init__(self, name: str, available: Sequence[str]) -> None:
        known = ", ".join(sorted(available)) or "(none)"
        super().__init__(
            f"no service named {name!r} is provided; provided services: {known}", name=name
        )


class ServiceConflictError(ServiceError, ValueError):
    """A service name is already provided by another plugin."""

    def __init__(self, name: str) -> None:
        super().__init__(f"service {name!r} is already provided", name=name)


class ToolRegistrationError(HeaderlockError):
    """A tool could not be registered (for instance, its name is taken)."""

    def __init__(self, message: str, *, name: str) -> None:
        super().__init__(message)
        self.name = name


# -- the agent runtime -----------------------------------------------------------------


class AgentError(HeaderlockError):
    """The agent runtime failed while running a turn or managing its app."""


class AssemblyError(AgentError):
    """A ``system-prompt/assemble`` listener broke the assembly contract."""


class ModelError(AgentError):
    """The model adapter failed (HTTP error, timeout, malformed output, no reply left).

    The loop records it as ``assistant/error``, so a replay fails the same way.
    """


class ReplayError(AgentError):
    """The recording has no model output where the run needs some."""


class ToolExecutionError(AgentError):
    """A tool call could not be carried out; ``tool`` names the tool."""

    def __init__(self, message: str, *, tool: str) -> None:
        super().__init__(message)
        self.tool = tool


class ToolInputError(AgentError, ValueError):
    """A tool was called with arguments it cannot use."""


class WorkspaceError(AgentError):
    """A path was refused because it leaves the workspace or is malformed."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class TurnBusyError(AgentError):
    """``run_turn`` was called while a turn was running."""


class AppStateError(AgentError):
    """The app was used in a state that does not allow it (e.g. a turn before start)."""


class CorruptLogError(AgentError):
    """The session log does not follow its own rules (for instance, a delta first)."""

    def __init__(self, message: str, *, seq: int | None = None) -> None:
        super().__init__(message if seq is None else f"corrupt log at seq {seq}: {message}")
        self.seq = seq


class ReconstructionError(AgentError):
    """A request differs from its rebuild from the log; ``part`` says where.

    ``part`` is one of ``messages``, ``header``, ``not frozen``, ``no step``, ``no header``.
    """

    def __init__(self, message: str, *, part: str) -> None:
        super().__init__(f"request is not reconstructable from the log ({part}): {message}")
        self.part = part


# -- checks ----------------------------------------------------------------------------


class MissingRecordingError(HeaderlockError):
    """A scenario has no recording and the run may not create one."""

    def __init__(self, message: str, *, scenario: str) -> None:
        super().__init__(message)
        self.scenario = scenario


class CheckFailed(HeaderlockError, AssertionError):
    """A headerlock check failed; the message explains what differs and how to fix it."""


class ReplayMismatch(CheckFailed):
    """A replayed run differs from its recording; the message explains how."""

    def __init__(self, message: str, *, scenario: str) -> None:
        super().__init__(message)
        self.scenario = scenario


class PinError(CheckFailed):
    """A pin guard failed; the message lists every problem."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


class OrderDependenceError(CheckFailed):
    """Two registration orders gave different recorded bytes."""

    def __init__(self, message: str, *, first: str, second: str) -> None:
        super().__init__(message)
        self.first = first
        self.second = second


class RecordingRunError(CheckFailed):
    """A run made to record did not succeed (its model script ran out, the live endpoint
    failed); nothing is written and the old recording stays."""

    def __init__(self, message: str, *, scenario: str) -> None:
        super().__init__(message)
        self.scenario = scenario


class ScenarioRunError(CheckFailed):
    """A scenario's run did not complete: its agent or a plugin raised (an exception,
    ``SystemExit``, ``RecursionError``) or an agent entry outlived its ``turn_timeout``.
    The scenario fails, the others still run, and nothing is written."""

    def __init__(self, message: str, *, scenario: str) -> None:
        super().__init__(message)
        self.scenario = scenario


# -- wire capture ----------------------------------------------------------------------


class ScriptExhaustedError(ModelError):
    """A scripted model got a request after its last reply.

    ``request`` is the 1-based number of the request that ran out, ``replies``
    how many the script had and ``api`` the request's model api.
    """

    def __init__(self, *, api: str, request: int, replies: int) -> None:
        noun = "reply" if replies == 1 else "replies"
        super().__init__(
            f"the script has no reply for request {request} ({api}):"
            f" it has {replies} {noun}; add a reply for every model request the agent makes"
        )
        self.api = api
        self.request = request
        self.replies = replies


class WireToolError(ConfigError):
    """A tool passed to ``order_wire_tools`` has no known shape or a value JSON lacks.

    ``index`` is the tool's position in the list given (``None`` when the list
    itself is wrong); ``name`` its name when known.
    """

    def __init__(self, message: str, *, index: int | None = None, name: str | None = None) -> None:
        super().__init__(message, key=f"tools[{index}]" if index is not None else "tools")
        self.index = index
        self.name = name


class WireRecordingError(RecordingError):
    """A wire recording is missing or malformed; ``key`` names the offending entry."""

    def __init__(self, message: str, *, path: str, key: str | None = None) -> None:
        super().__init__(f"{key}: {message}" if key else message, path=path)
        self.key = key


class WireOrderError(OrderDependenceError):
    """Two orders of the items given to the wire order check sent different requests.

    ``first_order`` and ``second_order`` are the item labels of the minimal
    pair; ``request`` (1-based), ``api``, ``segment``, ``tool`` (in the first
    order) and ``offset`` (the first differing byte of the body) say where,
    each ``None`` when not known (for instance, only the agent's error differs).
    """

    def __init__(
        self,
        message: str,
        *,
        first_order: Sequence[str],
        second_order: Sequence[str],
        request: int | None = None,
        api: str | None = None,
        segment: str | None = None,
        tool: str | None = None,
        offset: int | None = None,
    ) -> None:
        super().__init__(
            message,
            first=f"[{', '.join(first_order)}]",
            second=f"[{', '.join(second_order)}]",
        )
        self.first_order = tuple(first_order)
        self.second_order = tuple(second_order)
        self.request = request
        self.api = api
        self.segment = segment
        self.tool = tool
        self.offset = offset


class WireMismatch(CheckFailed):
    """Requests sent under a wire ``lock()`` differ from the recording.

    ``differences`` are one line each; the message is the readable report.
    """

    def __init__(self, message: str, *, path: str, differences: Sequence[str]) -> None:
        super().__init__(message)
        self.path = path
        self.differences = tuple(differences)


class CacheBreakError(CheckFailed):
    """``assert_cache_stable`` found cache problems its ``allow`` list does not name:
    ``path`` is the session's source (a recording, or ``run``), ``findings`` one line each
    (request, segment, byte, code, cause), ``codes`` their codes, in order."""

    def __init__(
        self, message: str, *, path: str, findings: Sequence[str], codes: Sequence[str]
    ) -> None:
        super().__init__(message)
        self.path = path
        self.findings = tuple(findings)
        self.codes = tuple(codes)


class NetworkSealedError(HeaderlockError, ConnectionRefusedError):
    """A sealed wire lock (replay, or a scripted record) refused a request or a connection;
    nothing was sent. ``host`` names where it would have gone."""

    def __init__(self, message: str, *, host: str | None = None) -> None:
        HeaderlockError.__init__(self, message)
        self.host = host

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ScriptAmbiguityError(ConfigError):
    """Requests that run at the same time took positional scripted replies that differ:
    which request got which reply was a race. ``requests`` are their numbers."""

    def __init__(self, message: str, *, requests: Sequence[int] = ()) -> None:
        super().__init__(message, key="script")
        self.requests = tuple(requests)


class WireOwnershipError(ConfigError):
    """A request was sent by code that no open wire lock owns while several are open."""


class IgnoreRuleError(ConfigError):
    """An ignore rule matched no request of its session (a misspelled path would silently
    disable nothing). ``paths`` are the rules that matched nothing."""

    def __init__(self, message: str, *, paths: Sequence[str]) -> None:
        super().__init__(message, key="ignore")
        self.paths = tuple(paths)


class RefusedPendingError(InputFileError):
    """A pending file (``<name>.yaml.new``, ``path``) that accepting refuses, not applies:
    partial (it could never pass), or failing its class's pin guard."""


class StalePendingError(RefusedPendingError):
    """A pending file written against a recording that changed since."""
