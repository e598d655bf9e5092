"""The plugin's collection nodes: the fixtures directory, one file and one replay item
per scenario, and the project-wide guards item. What an item does when it runs lives
in ``items`` (imported on first run)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from headerlock.errors import HeaderlockError
from headerlock.testing.plugin.state import GUARDS_NAME


class FixturesDir(pytest.Directory):
    """The fixtures directory: one file node per scenario, then the guards item."""

    def collect(self) -> Iterable[pytest.Item | pytest.Collector]:
        for path in sorted(self.path.glob("*.yaml")):
            if path.is_file() and not self.ihook.pytest_ignore_collect(
                collection_path=path, config=self.config
            ):
                yield ScenarioFile.from_parent(self, path=path)
        yield GuardsItem.from_parent(self, name=GUARDS_NAME)


class ScenarioFile(pytest.Module):
    """A ``fixtures/<name>.yaml`` file: one replay item.

    A ``Module`` (with an empty module object, nothing is imported) so that
    module-scoped fixtures of other plugins (pytest-recording, pytest-asyncio)
    find the node they expect above the item.
    """

    def _getobj(self) -> ModuleType:
        module = ModuleType(f"headerlock_fixture:{self.path.stem}")
        module.__file__ = str(self.path)
        return module

    def collect(self) -> Iterable[pytest.Item]:
        item = ScenarioItem.from_parent(self, name="replay", callobj=_run_scenario_item)
        item.recording_name = self.path.stem
        yield item


class ScenarioItem(pytest.Function):
    """Replays one scenario (records it under ``--snapshot-update``)."""

    recording_name: str

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"scenario {self.path.stem}"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, HeaderlockError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


def _run_scenario_item(request: pytest.FixtureRequest) -> None:
    from headerlock.testing.plugin.items import run_scenario_item

    item = request.node
    assert isinstance(item, ScenarioItem)
    run_scenario_item(request, item.recording_name)


class GuardsItem(pytest.Item):
    """Project-wide guards: pins, header locks, normalized recordings, fresh pins."""

    def runtest(self) -> None:
        from headerlock.testing.plugin.items import run_guards

        run_guards(self.config)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, "headerlock guards"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, HeaderlockError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))
