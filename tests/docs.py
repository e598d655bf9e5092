"""The project's documentation as the tests read it: the README and every page of the
docs site (``docs/``). An example is a fenced block right under an HTML comment that
names it (``<!-- example: lock -->``, ``<!-- recipe: sdk -->``), wherever it lives, so a
section can move between the README and the site without its test noticing."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
FENCE = r"```(?P<lang>[\w-]*)\n(?P<code>.*?)\n```"


def text() -> str:
    """Every page, one after the other."""
    return "\n".join(page.read_text("utf-8") for page in PAGES)


def examples(tag: str) -> dict[str, str]:
    """``{name: code}`` of the blocks marked ``<!-- tag: name -->``; a name used twice
    is an error (two blocks could not both be the one a test runs)."""
    found: dict[str, str] = {}
    marked = re.compile(rf"<!-- {tag}: (?P<name>[\w-]+) -->\n{FENCE}", re.S)
    for page in PAGES:
        for match in marked.finditer(page.read_text("utf-8")):
            if match["name"] in found:
                raise ValueError(f"{page}: {tag} {match['name']!r} is marked twice")
            found[match["name"]] = match["code"]
    return found
