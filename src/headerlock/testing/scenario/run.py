"""Running a scenario through the driver its ``app:`` names, in a fresh workspace."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from headerlock.errors import ConfigError, HeaderlockError, PluginExitError, ScenarioRunError
from headerlock.formats.fixture import Scenario
from headerlock.runtime.context import Plugin
from headerlock.runtime.driver import DriverJob, ModelSource, PluginSchedule, RunOutput
from headerlock.runtime.plugins import describe_error
from headerlock.testing.scenario.drivers import get_driver


def _seed(workspace: Path, files: dict[str, str]) -> None:
    for relative, content in sorted(files.items()):
        target = workspace / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")


async def run_scenario(
    scenario: Scenario,
    model: ModelSource,
    *,
    plugins: Sequence[Plugin] = (),
    schedule: PluginSchedule | None = None,
) -> RunOutput:
    """Run every prompt of ``scenario`` in a fresh temporary workspace.

    ``plugins`` load beside the configured ones (in-process drivers only).
    ``schedule`` reorders the configured plugins and delays their loading (a
    subprocess driver takes the order only).
    """
    driver = get_driver(scenario.app)
    reason = driver.unavailable(scenario.config)
    if reason is not None:
        raise ConfigError(f"{scenario.name}: app {scenario.app!r} {reason}", key="app")
    with tempfile.TemporaryDirectory(prefix="headerlock-") as temp:
        workspace = Path(temp).resolve()
        _seed(workspace, dict(scenario.files))
        job = DriverJob(
            name=scenario.name,
            config=scenario.config,
            prompts=scenario.prompts,
            workspace=workspace,
            model=model,
            plugins=plugins,
            schedule=schedule,
        )
        try:
            return await driver.run(job)
        except PluginExitError as error:
            raise _crashed(scenario, str(error)) from None
        except HeaderlockError:
            raise
        except (Exception, SystemExit) as error:  # RecursionError included
            raise _crashed(scenario, describe_error(error)) from None


def _crashed(scenario: Scenario, what: str) -> ScenarioRunError:
    """A run that a plugin or the agent ended: the scenario fails, nothing is written."""
    return ScenarioRunError(
        f"scenario {scenario.name!r} did not run to its end: {what}",
        scenario=scenario.name,
    )
