"""Shared test setup: the Hypothesis profile for CI, the model server, and the
isolation of in-process pytest runs."""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from hypothesis._settings import is_in_ci

from tests.model_server import ModelServer, serve

# Extend Hypothesis's built-in "ci" profile (derandomized, no database) with a
# bound that keeps the suite fast; it loads automatically when CI is set.
settings.register_profile(
    "ci",
    settings.get_profile("ci"),
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if is_in_ci() else "dev"))

# cassetter (a benchmark peer) and pytest-recording both define --record-mode; the
# pytest processes this suite starts load one of them only.
# pytest-asyncio warns in every pytest run whose ini leaves its loop scope unset (the
# user-like projects the tests lay out): the suite's output carries no such warning.
CHILD_ADDOPTS = "-p no:cassetter -o asyncio_default_fixture_loop_scope=function"
os.environ["PYTEST_ADDOPTS"] = f"{os.environ.get('PYTEST_ADDOPTS', '')} {CHILD_ADDOPTS}".strip()

# The Ctrl-C tests send SIGINT to the processes they start. A shell that runs the suite
# in the background without job control (``.ci/run &``) starts it with SIGINT ignored,
# and an ignored signal stays ignored in every child: Ctrl-C would reach none of them.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# In-process pytester runs drop the modules first imported inside them. httpx2 maps
# httpcore2's exceptions through classes it caches on first use: were httpcore2 first
# imported inside such a run, a later test's connection error would escape unmapped
# (another httpcore2.ConnectError class). Importing the HTTP stacks here keeps them.
for _stack in ("httpcore2", "httpx2", "httpcore", "httpx"):
    with contextlib.suppress(ImportError):
        importlib.import_module(_stack)

XDIST_VARIABLES = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    """A real model server on 127.0.0.1 for one test: no routes yet (every path is a
    404) and every hit kept; see ``tests/model_server.py``."""
    with serve() as server:
        yield server


@pytest.fixture(autouse=True)
def isolated_pytester(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that runs pytest through ``pytester`` runs it as a user's project would:
    without this suite's xdist worker identity, and without this suite's ``tests``
    package imported (a user's ``tests/conftest.py`` would resolve to ours), and without
    cassetter (installed as a benchmark peer), whose ``--record-mode`` option collides
    with pytest-recording's."""
    if "pytester" not in request.fixturenames:
        return
    request.getfixturevalue("pytester")  # it clears PYTEST_ADDOPTS: set it after
    monkeypatch.setenv("PYTEST_ADDOPTS", CHILD_ADDOPTS)
    for name in XDIST_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for module in [m for m in sys.modules if m == "tests" or m.startswith("tests.")]:
        monkeypatch.delitem(sys.modules, module)
