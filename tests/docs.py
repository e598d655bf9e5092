"""The project's documentation as the tests read it: the README and every page of the
docs site (``docs/``). An example is a fenced block right under an HTML comment that
names it (``<!-- example: lock -->``, ``<!-- recipe: sdk -->``), wherever it lives, so a
section can move between the README and the site without its test noticing. ``blocks()``
is every fenced block, marked or not, for the guard in ``tests/project/test_doc_blocks.py``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))


def text() -> str:
    """Every page, one after the other."""
    return "\n".join(page.read_text("utf-8") for page in PAGES)


def examples(tag: str) -> dict[str, str]:
    """``{name: code}`` of the blocks marked ``<!-- tag: name -->``; a name used twice
    is an error (two blocks could not both be the one a test runs)."""
    found: dict[str, str] = {}
    for block in blocks():
        if block.tag != tag:
            continue
        if block.name in found:
            raise ValueError(f"{block.where}: {tag} {block.name!r} is marked twice")
        found[block.name] = block.code
    return found


MARKER = re.compile(r"<!-- (?P<tag>[\w-]+): (?P<name>.+?) -->")
OPEN = re.compile(r"(?P<indent> *)```(?P<lang>[\w-]*)\s*")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page: where it starts, its language, the marker
    comment right above it (``tag``/``name``, empty when none) and its text."""

    page: Path
    line: int
    lang: str
    tag: str
    name: str
    code: str

    @property
    def where(self) -> str:
        """``page:line`` of the opening fence, as an editor opens it."""
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"


def blocks() -> list[Block]:
    """Every fenced block of every page, in page order (an indented fence in a list
    item included, its text dedented)."""
    found: list[Block] = []
    for page in PAGES:
        lines = page.read_text("utf-8").splitlines()
        index = 0
        while index < len(lines):
            opened = OPEN.fullmatch(lines[index])
            if opened is None:
                index += 1
                continue
            indent = len(opened["indent"])
            end = next((j for j in range(index + 1, len(lines)) if lines[j].strip() == "```"), None)
            if end is None:
                raise ValueError(f"{page}:{index + 1}: a fence that never closes")
            marker = MARKER.fullmatch(lines[index - 1].strip()) if index else None
            found.append(
                Block(
                    page=page,
                    line=index + 1,
                    lang=opened["lang"],
                    tag=marker["tag"] if marker else "",
                    name=marker["name"] if marker else "",
                    code="\n".join(line[indent:] for line in lines[index + 1 : end]),
                )
            )
            index = end + 1
    return found
