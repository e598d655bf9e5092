"""``headerlock cache PATH... [--html FILE]``: lines, exit codes, bad input, the page
(parsed, and rendered in headless Chromium where it is installed), determinism."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from headerlock.cli import main
from tests.model_server import ModelServer
from tests.wire.cache.corpus import TOOLS, Req, base, planted, record, schema

CHROMIUM = Path("/usr/bin/chromium")


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main(["cache", *args], out=out)
    return code, out.getvalue(), capsys.readouterr().err


@pytest.fixture
def sessions(model_server: ModelServer, tmp_path: Path) -> Path:
    """A folder: a stable session, a reordered one (pinned), and a non-wire YAML file."""
    folder = tmp_path / "recordings"
    record(model_server, "openai.chat", base("openai.chat"), folder / "a_stable.yaml")
    record(
        model_server, "anthropic.messages",
        planted("tools-reordered", "anthropic.messages"), folder / "b_moved.yaml",
    )  # fmt: skip
    (folder / "notes.yaml").write_text("kind: scenario\n", encoding="utf-8")
    return folder


def test_exit_0_for_a_stable_recording_and_1_for_a_break(
    sessions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, str(sessions / "a_stable.yaml"))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert (
        lines[0]
        == f"cache report: {(sessions / 'a_stable.yaml').as_posix()} (pinned; 3 requests; 1 conversation)"
    )
    assert [line.split()[0] for line in lines[2:5]] == ["1", "2", "3"]
    assert lines[5].startswith("  total: 3 requests, ") and lines[5].endswith(", 0 findings")
    code, out, err = cli(capsys, str(sessions))
    assert (code, err) == (1, "")
    assert out.count("cache report: ") == 2
    assert "  findings:\n    request 3 tools[0] (bash) byte " in out
    assert ": tools-reordered: order read_file, grep, bash -> bash, grep, read_file\n" in out
    assert out.splitlines()[-1] == "all: 2 recordings, 1 with findings, 1 finding"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing.yaml", "missing.yaml: no such file or folder"),
        ("notes.yaml", "notes.yaml: not a wire recording (no `kind: wire`)"),
        ("broken.yaml", "broken.yaml: requests[0].api: missing"),
        ("empty", "empty: no wire recordings in this folder"),
        (
            "bad_tools.yaml",
            "bad_tools.yaml: requests[0].prefix.tools: is not JSON: Expecting value (char 9)",
        ),
        (
            "bad_system.yaml",
            "bad_system.yaml: requests[1].prefix.system: is not JSON: Expecting value (char 9)",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_the_file(
    sessions: Path, capsys: pytest.CaptureFixture[str], name: str, message: str
) -> None:
    (sessions / "empty").mkdir()
    (sessions / "broken.yaml").write_text(
        "kind: wire\nversion: 1\npinned: false\nrequests:\n- path: /v1/x\n", encoding="utf-8"
    )
    pinned = (sessions / "b_moved.yaml").read_text(encoding="utf-8")
    for file, old, new, skip in [
        (
            "bad_tools.yaml",
            'tools: "[{\\"name\\":\\"read_file',
            'tools: "[{\\"name\\":read_file',
            0,
        ),
        ("bad_system.yaml", 'system: "[{\\"type\\":\\"text', 'system: "[{\\"type\\":text', 1),
    ]:  # the raw prefix text of a pinned recording, hand-edited into invalid JSON
        at = pinned.index(old)
        for _ in range(skip):
            at = pinned.index(old, at + 1)
        broken = pinned[:at] + new + pinned[at + len(old) :]
        (sessions / file).write_text(broken, encoding="utf-8")
    code, out, err = cli(capsys, str(sessions / "a_stable.yaml"), str(sessions / name))
    assert code == 2
    assert out == ""  # nothing half-printed: every file is read first
    assert err.count("\n") == 1 and err.startswith("headerlock: ") and "Traceback" not in err
    assert message in err and str(sessions) in err


class Page(HTMLParser):
    """What the page holds: its tags, requests, bars and findings, and any external reference."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.rows: list[dict[str, str]] = []
        self.bars: list[str] = []
        self.codes: list[str] = []
        self.external: list[str] = []
        self.text: list[str] = []
        self.legend: list[str] = []
        self.depth = 0
        """How deep inside the legend the parser is (0: outside)."""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        given = {k: v or "" for k, v in attrs}
        self.tags.append(tag)
        if tag == "tr" and "data-request" in given:
            self.rows.append(given)
        if tag == "span" and given.get("class") in ("reused", "shared", "resent"):
            self.bars.append(f"{given['class']} {given.get('style', '')}")
        if tag == "div" and given.get("class") == "finding":
            self.codes.append(given["data-code"])
        for key in ("src", "href"):
            if key in given:
                self.external.append(given[key])
        if self.depth or (tag == "div" and given.get("class") == "legend"):
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self.depth:
            self.legend.append(data.strip())


def test_the_html_page_is_self_contained_and_explains_itself(
    sessions: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "cache.html"
    code, out, _ = cli(capsys, str(sessions), "--html", str(page))
    assert code == 1 and out.splitlines()[-1] == f"wrote {page.as_posix()}"
    text = page.read_text(encoding="utf-8")
    parsed = Page()
    parsed.feed(text)
    assert (
        "script" not in parsed.tags
        and parsed.external == []
        and "http" not in text.split("<body>")[1]
    )
    assert len(parsed.rows) == 6 and parsed.codes == ["tools-reordered"]
    assert [r["data-request"] for r in parsed.rows] == ["1", "2", "3"] * 2
    assert parsed.rows[4]["class"] == "request" and parsed.rows[5]["class"] == "request broken"
    assert len(parsed.bars) == 18 and parsed.bars[0] == "reused width:0.00%"
    words = " ".join(parsed.text)
    assert "read from the cache (recorded, else predicted)" in words and "sent anew" in words
    legend = " ".join(parsed.legend)
    assert "^ marks the first byte that differs from the request it continues" in legend
    assert "continues request 1" in words and "continues request 2" in words
    assert " as " not in words.split("why:")[1].split("(source")[0]  # its own rule
    again = tmp_path / "again.html"
    cli(capsys, str(sessions), "--html", str(again))
    assert again.read_bytes() == page.read_bytes()


@pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="headless Chromium is not installed (/usr/bin/chromium; Debian package chromium)",
)
def test_the_page_renders_in_headless_chromium(
    sessions: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "cache.html"
    cli(capsys, str(sessions), "--html", str(page))
    shot = tmp_path / "cache.png"
    subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,900",
         f"--screenshot={shot}", page.as_uri()],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    keep = os.environ.get("HEADERLOCK_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)


def test_the_same_recording_gives_the_same_bytes_in_every_hash_seed(
    sessions: Path, tmp_path: Path
) -> None:
    outputs, pages = set(), set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        page = tmp_path / f"page-{seed}.html"
        done = subprocess.run(
            [sys.executable, "-m", "headerlock", "cache", str(sessions), "--html", str(page)],
            env=env, capture_output=True, check=False, timeout=120,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        outputs.add(done.stdout.replace(page.as_posix().encode(), b"PAGE"))
        pages.add(page.read_bytes())
    assert len(outputs) == 1 and len(pages) == 1


def test_html_overwrites_only_a_report_it_wrote(
    sessions: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recording = sessions / "a_stable.yaml"
    other = tmp_path / "notes.html"
    other.write_text("<html><head><title>mine</title></head></html>\n")
    folder = tmp_path / "folder.html"
    folder.mkdir()
    fifo = tmp_path / "pipe.html"
    os.mkfifo(fifo)
    page = tmp_path / "cache.html"
    assert cli(capsys, str(recording), "--html", str(page))[0] == 0
    link = tmp_path / "link.html"
    link.symlink_to(page)
    before = {p: p.read_bytes() for p in (recording, other, page)}
    for target, what in [
        (recording, "not a cache report headerlock wrote (no generator mark in its head)"),
        (other, "not a cache report headerlock wrote (no generator mark in its head)"),
        (folder, "a directory"),
        (fifo, "not a regular file"),
        (link, "a symbolic link"),
    ]:
        code, out, err = cli(capsys, str(recording), "--html", str(target))
        assert (code, out) == (2, "")
        assert err == (
            f"headerlock: {target.as_posix()}: --html would overwrite it, but it is {what};"
            " name a new file (or an earlier report); nothing written\n"
        )
    assert {p: p.read_bytes() for p in before} == before and link.is_symlink()
    code, out, _ = cli(capsys, str(sessions), "--html", str(page))  # its own report: rewritten
    assert code == 1 and out.endswith(f"wrote {page.as_posix()}\n")
    assert page.read_bytes() != before[page]


def test_tool_and_model_names_reach_the_terminal_escaped(
    model_server: ModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = ("\x1b]0;pwned\x07grep\u202e", "Search files.", schema("pattern"))
    tools = (TOOLS[0], hostile)
    reqs = [Req(tools=tools, turn=1), Req(tools=tools[::-1], turn=2)]
    path = tmp_path / "hostile.yaml"
    record(model_server, "openai.chat", [replace(r, model="gpt\x1b[2J-4o") for r in reqs], path)
    code, out, err = cli(capsys, str(path))
    assert code == 1, out + err
    assert "\x1b" not in out + err and "\u202e" not in out + err and "\x07" not in out + err
    assert "order read_file, \\x1b]0;pwned\\x07grep\\u202e -> " in out
