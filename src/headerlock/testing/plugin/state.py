"""The plugin's shared state: stash keys and the session's project and update flag.

Imports nothing of the plugin, so every plugin module can use it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from headerlock.testing.scenario.project import Project

PATHS_KEY = pytest.StashKey[tuple[Path, Path]]()
PROJECT_KEY = pytest.StashKey["Project"]()
GUARDS_NAME = "headerlock-guards"


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

        config.stash[PROJECT_KEY] = Project(*config.stash[PATHS_KEY])
    return config.stash[PROJECT_KEY]


def updating(config: pytest.Config) -> bool:
    """Whether this session records (``--snapshot-update``)."""
    return bool(getattr(config.option, "update_snapshots", False))


def record_test_command(item: pytest.Item) -> str:
    """The command that (re-)records the Python test ``item``'s recording."""
    return f"pytest --snapshot-update {item.nodeid}"
