"""headerlock items beside pytest-recording (vcrpy), pytest-asyncio, pytest-randomly,
pytest-xdist and syrupy's own snapshots, in one user's project and one run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

# Imported once here so that in-process pytester runs reuse them (see test_pytest_plugin):
# a client module imported afresh by a later run would leave vcrpy holding the patch of
# the earlier one (vcrpy restores what it found), which routes to a lock list nobody fills.
import headerlock.testing.plugin.items
import headerlock.testing.wire.clients.aiohttp_client
import headerlock.testing.wire.clients.httpx_client
import headerlock.testing.wire.clients.urllib3_client  # noqa: F401

ROOT = Path(__file__).parents[2]
BUNDLED = sorted(
    p.stem for p in (ROOT / "fixtures").glob("*.yaml") if (ROOT / "recordings" / p.name).is_file()
)

CONFTEST = """
import asyncio
import pytest
import pytest_asyncio
from headerlock.agent import ToolSchema
from headerlock.runtime.adapters.scripted import ScriptedAdapter
from headerlock.runtime.app import AgentApp


@pytest_asyncio.fixture(autouse=True, scope="module", loop_scope="module")
async def module_resource():
    # An autouse module-scoped async fixture: every item, scenarios included, gets it.
    yield "ready"


@pytest.fixture(autouse=True, scope="module")
def module_marker(request):
    return request.module.__name__


@pytest.fixture
def app():
    def tools(ctx):
        ctx.tools.register(ToolSchema("read", "Read a file."), lambda a: "text")

    app = AgentApp({"model": "demo", "persona": "Be brief."}, plugins=[tools],
                   adapter=ScriptedAdapter(["PONG"]))
    async def go():
        async with app:
            await app.run_turn("ping")
    asyncio.run(go())
    return app
"""

OTHER_TESTS = """
import asyncio
import pytest


@pytest.mark.vcr
def test_with_a_cassette(vcr):
    assert vcr is not None  # pytest-recording opened a cassette (nothing is requested)


@pytest.mark.asyncio
async def test_async():
    await asyncio.sleep(0)


def test_syrupy_snapshot(snapshot):
    assert {"tools": ["read", "write"]} == snapshot


def test_agent(headerlock_recorder, app):
    headerlock_recorder.assert_match(app)
"""

PLUGINS = ("recording-", "asyncio-", "randomly-", "syrupy-", "xdist-", "headerlock-")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """The bundled fixtures and recordings, a tests/ directory using the other plugins."""
    pytester.makeini(
        "[pytest]\ntestpaths = fixtures tests\nasyncio_default_fixture_loop_scope = function\n"
    )
    for folder in ("fixtures", "recordings"):
        (pytester.path / folder).mkdir()
        for name in BUNDLED:
            shutil.copy(ROOT / folder / f"{name}.yaml", pytester.path / folder)
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "conftest.py").write_text(CONFTEST)
    (pytester.path / "tests" / "test_other.py").write_text(OTHER_TESTS)
    return pytester


def snapshot_files(project: pytest.Pytester) -> dict[str, bytes]:
    """Every recording and every syrupy snapshot, by path."""
    found = [*project.path.glob("recordings/**/*.yaml"), *project.path.rglob("*.ambr")]
    return {p.relative_to(project.path).as_posix(): p.read_bytes() for p in found}


def test_bundled_fixtures_run_beside_the_other_plugins(project: pytest.Pytester) -> None:
    options = ("--record-mode=none", "--block-network", "-p", "randomly")
    items = len(BUNDLED) + 1 + 4
    result = project.runpytest("--snapshot-update", *options)
    result.assert_outcomes(passed=items)
    header = next(line for line in result.stdout.lines if line.startswith("plugins:"))
    assert all(name in header for name in PLUGINS), header
    result.stdout.fnmatch_lines(["Using --randomly-seed=*", "*1 snapshot generated.*"])
    recorded = snapshot_files(project)
    for name in BUNDLED:
        assert (
            recorded[f"recordings/{name}.yaml"]
            == (ROOT / "recordings" / f"{name}.yaml").read_bytes()
        )
    assert "recordings/tests/test_other/test_agent.yaml" in recorded
    assert "tests/__snapshots__/test_other.ambr" in recorded

    result = project.runpytest(*options)
    result.assert_outcomes(passed=items)
    result.stdout.fnmatch_lines(
        [f"headerlock: {len(BUNDLED) + 1} recordings matched", "*1 snapshot passed.*"]
    )
    assert snapshot_files(project) == recorded


@pytest.mark.slow
def test_a_parallel_update_beside_the_other_plugins(project: pytest.Pytester) -> None:
    project.runpytest("--snapshot-update", "tests").assert_outcomes(passed=4)
    (project.path / "recordings" / "text-turn.yaml").unlink()
    before = snapshot_files(project)
    result = project.runpytest_subprocess(
        "-n", "2", "--snapshot-update", "--record-mode=none", "-p", "randomly"
    )
    result.assert_outcomes(passed=len(BUNDLED) + 1 + 4)
    result.stdout.fnmatch_lines([f"headerlock: 1 recording written, {len(BUNDLED)} unchanged"])
    after = snapshot_files(project)
    assert after == {
        **before,
        "recordings/text-turn.yaml": (ROOT / "recordings" / "text-turn.yaml").read_bytes(),
    }
