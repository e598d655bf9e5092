"""Helpers of the hostile corpus (issue 19): a user's project on disk and the real
command line run on it, in a process of its own."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

HEADERLOCK = [sys.executable, "-P", "-m", "headerlock"]
"""``-P``: the working directory is on ``sys.path`` only because headerlock puts it there."""

PINNED = """\
app: spine
pin: true
config: {model: demo, persona: Be brief.}
steps: [{prompt: hi}]
model: [{text: hello}]
"""
"""A pinned scenario of the default header class, so that every other one has its pin."""


def env(**extra: str) -> dict[str, str]:
    """This environment without the test run's own encoding or xdist settings, plus ``extra``."""
    drop = (
        "PYTHONIOENCODING",
        "PYTEST_XDIST_WORKER",
        "PYTEST_XDIST_WORKER_COUNT",
        "PYTEST_ADDOPTS",
    )
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **extra}


def cli(
    cwd: Path, *args: str, timeout: float = 120, **extra: str
) -> subprocess.CompletedProcess[str]:
    """``headerlock *args`` in ``cwd``, in a process of its own."""
    return subprocess.run(
        [*HEADERLOCK, *args],
        cwd=cwd,
        env=env(**extra),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def start_cli(cwd: Path, *args: str, **extra: str) -> subprocess.Popen[str]:
    """``headerlock *args`` started in ``cwd`` (its output piped)."""
    return subprocess.Popen(
        [*HEADERLOCK, *args],
        cwd=cwd,
        env=env(**extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    """Neither output stream holds a Python traceback."""
    for text in (result.stdout, result.stderr):
        assert "Traceback" not in text, text


PYTEST = [sys.executable, "-m", "pytest", "-p", "headerlock.testing.plugin.hooks", "-p", "syrupy"]
"""pytest with only headerlock and syrupy (``--snapshot-update``) loaded (``pytest_env``):
a fast start."""


def pytest_env(**extra: str) -> dict[str, str]:
    """``env`` for a pytest of its own that loads no plugin but those named with ``-p``."""
    return env(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", **extra)


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The one ``headerlock: ...`` line on stderr (and no traceback anywhere)."""
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("headerlock: "), result.stderr
    return lines[0]


def write(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path → text, dedented) below ``root``; returns ``root``."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def scenario(plugin: str | None = None, *, prompt: str = "hi") -> str:
    """A spine fixture with one optional plugin and one scripted reply."""
    plugins = f"plugins: [{plugin}]\n" if plugin else ""
    return f"app: spine\nconfig: {{model: demo}}\n{plugins}steps: [{{prompt: {prompt}}}]\nmodel: [{{text: hello}}]\n"


def tree(root: Path) -> dict[str, str]:
    """Every file below ``root`` (symlinks as their target), by relative path: its sha256."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def wait_for(check: Callable[[], bool], *, timeout: float = 60, what: str = "a condition") -> None:
    """Poll ``check`` until it holds; fails after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def interrupt(
    process: subprocess.Popen[str], *, timeout: float = 15
) -> tuple[int, str, str, float]:
    """Send SIGINT (Ctrl-C) to ``process``: its exit code, stdout, stderr and how long it
    took to end (seconds)."""
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, out, err, time.monotonic() - sent


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie counts as ended)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True
