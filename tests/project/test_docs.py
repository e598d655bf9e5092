"""The docs site: every public name is in the reference, every command and option of the
command line in its page, and the site builds with ``mkdocs build --strict``."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from headerlock.cli import build_parser
from tests import docs

REFERENCE = docs.ROOT / "docs" / "reference"
FACADES = ("headerlock", "headerlock.agent", "headerlock.wire", "headerlock.strategies")
INTERNAL = ("run-once", "flake-worker")
"""Commands that ``flakes`` starts in its fresh processes; the page says so."""


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    actions = build_parser()._actions
    (sub,) = [a for a in actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


@pytest.mark.parametrize("facade", FACADES)
def test_every_public_name_is_in_the_api_reference(facade: str) -> None:
    page = (REFERENCE / "api.md").read_text("utf-8")
    table = importlib.import_module(facade)._PUBLIC
    missing = [
        f"{home}.{name}"
        for home, names in table.items()
        for name in names
        if f"::: {home}.{name}\n" not in page
        and f"(errors.md#headerlock.errors.{name})" not in page
    ]
    assert not missing


def test_every_command_and_option_is_on_the_command_line_page() -> None:
    page = (REFERENCE / "cli.md").read_text("utf-8")
    for name, parser in _subcommands().items():
        if name in INTERNAL:
            assert f"`headerlock {name}`" in page
            continue
        assert f"## headerlock {name}\n" in page, name
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert option in page, f"headerlock {name} {option}"


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    if shutil.which("mkdocs") is None and importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=docs.ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "reference" / "api" / "index.html").is_file()
