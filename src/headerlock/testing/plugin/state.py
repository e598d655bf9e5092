"""The plugin's shared state: stash keys and the session's project and update flag.

Imports nothing of the plugin, so every plugin module can use it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from headerlock.testing.plugin.session import HeaderlockSession
    from headerlock.testing.scenario.project import Project
    from headerlock.testing.wire.record_mode import RecordMode

PATHS_KEY = pytest.StashKey[tuple[Path, Path]]()
PROJECT_KEY = pytest.StashKey["Project"]()
SESSION_KEY = pytest.StashKey["HeaderlockSession"]()
SESSION_NAME = "headerlock-session"
"""The name the session object is registered under (``pluginmanager.get_plugin``)."""
GUARDS_NAME = "headerlock-guards"


def session_of(config: pytest.Config) -> HeaderlockSession:
    """The pytest session's ``HeaderlockSession`` (made in ``pytest_configure``)."""
    return config.stash[SESSION_KEY]


def relative_to_cwd(path: Path) -> Path:
    """``path`` relative to the working directory when it lies below it (for messages)."""
    absolute = path.resolve()
    try:
        return absolute.relative_to(Path.cwd().resolve())
    except ValueError:
        return absolute


def project_of(config: pytest.Config) -> Project:
    """The session's ``Project``, built on first use (it imports the fixture machinery)."""
    if PROJECT_KEY not in config.stash:
        from headerlock.testing.scenario.project import Project

        config.stash[PROJECT_KEY] = Project(
            *config.stash[PATHS_KEY], pending=pending_enabled(config)
        )
    return config.stash[PROJECT_KEY]


def record_mode(config: pytest.Config, marked: RecordMode | None = None) -> RecordMode:
    """The record mode (``headerlock.testing.wire.record_mode``) of this session, or of a
    test whose marker says ``mode=marked``: ``--headerlock-record`` or
    ``--snapshot-update`` (an alias of ``all``), else the marker's, else the ini's
    ``headerlock_record`` (a project default), else ``none``."""
    given = _given_mode(config)
    if given is not None:
        return given
    if marked is not None:
        return marked
    from headerlock.errors import ConfigError
    from headerlock.testing.wire.record_mode import DEFAULT, record_mode as checked

    try:
        value = str(config.getini("headerlock_record")).strip() or DEFAULT
    except ValueError:  # the plugin's options are not registered (a bare config)
        return DEFAULT
    try:
        return checked(value, where="headerlock_record")
    except ConfigError as error:
        raise pytest.UsageError(f"headerlock: {error}") from None


def _given_mode(config: pytest.Config) -> RecordMode | None:
    """The mode the command line gives. ``--snapshot-update`` with an explicit
    ``--headerlock-record=none`` or ``=new`` is a usage error, never a silent override of
    either."""
    if getattr(config.option, "headerlock_flakes_dump", None) is not None:
        return "none"  # headerlock flakes: nothing is recorded
    mode: RecordMode | None = getattr(config.option, "headerlock_record", None)  # checked
    if getattr(config.option, "update_snapshots", False):
        if mode in ("none", "new"):
            raise pytest.UsageError(
                f"headerlock: --snapshot-update and --headerlock-record={mode} contradict each"
                " other (--snapshot-update re-records every test, as"
                f" --headerlock-record=all does); pass one of them"
            )
        return "all"
    return mode


def updating(config: pytest.Config) -> bool:
    """Whether this session records everything (``--snapshot-update``,
    ``--headerlock-record=all``)."""
    return record_mode(config) == "all"


def records_missing(config: pytest.Config, path: Path) -> bool:
    """Whether a test whose recording is ``path`` records it now: under ``all``, or
    under ``new`` when there is no recording yet."""
    from headerlock.testing.wire.record_mode import records

    return records(record_mode(config), exists=path.is_file())


def pending_enabled(config: pytest.Config) -> bool:
    """Whether a mismatching replay writes ``<name>.yaml.new`` (not
    ``--headerlock-no-pending``)."""
    return not getattr(config.option, "headerlock_no_pending", False)


def record_test_command(item: pytest.Item) -> str:
    """The command that (re-)records the Python test ``item``'s recording."""
    return f"pytest --snapshot-update {item.nodeid}"
