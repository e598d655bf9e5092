"""``--headerlock-flakes-dump DIR``: the pytest side of ``headerlock flakes``.

``headerlock flakes tests/...`` runs pytest in fresh processes under varied hash
seeds with this option. Then only the selected ``headerlock_wire`` tests run (the
rest are deselected), each sealed: answered from its recording (a request that
matches nothing gets the closest recorded reply, so the agent goes on) or, with no
recording, from its marker's ``script``. Nothing is recorded, no pending file is
written, no verdict is given (``record_mode`` is ``none``): each test writes the
header of every request it sent (api, path, config, system, tools; secrets
scrubbed) to one JSON file in DIR, which the command compares across runs
(``headerlock.testing.order.pytest_flakes``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from headerlock.errors import MissingRecordingError
from headerlock.formats.atomic import atomic_write
from headerlock.formats.secrets import secret_values
from headerlock.formats.wire_scrub import Scrubber
from headerlock.testing.plugin.state import record_test_command
from headerlock.testing.plugin.wire_classes import MARKER

if TYPE_CHECKING:
    from headerlock.testing.wire.lock import WireLock
    from headerlock.testing.wire.run import WireRequest

OPTION: Final = "headerlock_flakes_dump"
"""The option's ``config.option`` name (``--headerlock-flakes-dump DIR``)."""


def probe_dir(config: pytest.Config) -> Path | None:
    """The directory this session dumps headers to, or ``None`` (a normal session)."""
    value = getattr(config.option, OPTION, None)
    return None if value is None else Path(value)


def deselect_unwired(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under the probe, deselect every test that does not use ``headerlock_wire``."""
    from headerlock.testing.plugin.wire_classes import uses_wire

    if probe_dir(config) is None:
        return
    kept = [item for item in items if uses_wire(item)]
    dropped = [item for item in items if not uses_wire(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def probe_lock(
    item: pytest.Item, path: Path, script: Sequence[Any] | None, **options: Any
) -> WireLock:
    """A sealed lock for ``item``: answering from its recording ``path`` (the closest
    recorded answer to a request that matches none, no pending file), else from its
    marker's ``script``; ``options`` are the lock's redact, redact_env, allow_hosts and
    ignore."""
    from headerlock.testing.wire.lock import WireLock  # the wire machinery: on first use

    if path.is_file():
        return WireLock(path, mode="none", pin=False, script=None, stand_in=True, **options)
    if script is not None:
        return WireLock(None, mode="all", pin=False, script=script, **options)
    raise MissingRecordingError(
        f"no wire recording at {path.as_posix()} and no script= in its"
        f" @pytest.mark.{MARKER}, so nothing can answer it without the network; record it"
        f" first: {record_test_command(item)}",
        scenario=item.nodeid,
    )


def header_of(request: WireRequest) -> dict[str, Any]:
    """What ``headerlock flakes`` compares of one request: its header, and its tools one
    per name as its API lists them (``named_tools``: ``[name, tool]`` pairs)."""
    from headerlock.testing.wire.apis import model_api  # the API modules: on first use

    api = model_api(request.api)
    tools = request.header.tools
    return {
        "api": request.api,
        "path": request.path,
        "config": request.header.config,
        "system": request.header.system,
        "tools": tools,
        "named_tools": [[api.tool_name(t), t] for t in api.tools_of(tools)],
    }


def dump(
    directory: Path,
    nodeid: str,
    requests: Sequence[WireRequest],
    *,
    secrets: Sequence[str] = (),
    error: str | None = None,
) -> Path:
    """Write one test's headers (or why it could not run) as ``DIR/<hash of id>.json``."""
    scrubber = Scrubber.of([*secret_values(), *secrets])
    data = {
        "test": nodeid,
        "requests": scrubber.data([header_of(r) for r in requests]),
        "error": None if error is None else scrubber.text(error),
    }
    name = hashlib.sha256(nodeid.encode("utf-8")).hexdigest()[:24]
    path = directory / f"{name}.json"
    atomic_write(path, json.dumps(data, sort_keys=True, ensure_ascii=False) + "\n")
    return path
