"""The record path's faster writes give the bytes the plain ones gave (no timings): a
recording whose requests share their messages is dumped and depth-checked once per
distinct message, not once per request that repeats it; a recording's lock, taken
without filelock's bookkeeping, is still the lock filelock takes (issue 31)."""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from headerlock.errors import OutputFileError
from headerlock.formats.canonical_yaml import dump
from headerlock.formats.strict_yaml import loads
from headerlock.formats.wire_recording import nesting
from headerlock.formats.write_lock import lock_file, recording_lock

_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=12)
_plain = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)


@st.composite
def _shared(draw: st.DrawFn) -> Any:
    """Data whose lists hold the same objects in several places (at several indents)."""
    pool = draw(st.lists(_plain, min_size=1, max_size=4))
    picks = st.lists(st.sampled_from(pool), max_size=5)
    return {
        "requests": [{"messages": draw(picks), "n": n} for n in range(draw(st.integers(0, 4)))],
        "nested": [draw(picks), [draw(picks)]],
    }


@settings(max_examples=300, deadline=None)
@given(_shared())
def test_shared_data_dumps_as_its_unshared_copy(data: Any) -> None:
    alone = copy.deepcopy(data)  # no object held twice: nothing to reuse
    assert dump(data) == dump(alone)
    assert loads(dump(data)) == alone
    assert nesting(data) == nesting(alone)


class _Counted(Mapping[str, Any]):
    """A message that counts how often its keys are read."""

    reads = 0

    def __init__(self, n: int) -> None:
        self._data = {"content": f"message {n}", "role": "user"}

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        type(self).reads += 1
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def _session(requests: int) -> dict[str, Any]:
    """A growing session: request ``n`` sends the first ``n`` messages again."""
    messages = [_Counted(n) for n in range(requests)]
    return {"requests": [{"messages": messages[: n + 1]} for n in range(requests)]}


def test_a_growing_session_writes_each_message_once() -> None:
    data = _session(200)
    _Counted.reads = 0
    text = dump(data)
    assert _Counted.reads == 200  # once per message, not 20,100 times
    plain = {"requests": [{"messages": [dict(m) for m in r["messages"]]} for r in data["requests"]]}
    assert text == dump(plain)


def test_the_depth_check_walks_each_message_once() -> None:
    data = _session(200)
    _Counted.reads = 0
    assert nesting(data) == 5  # the document, its requests, one, its messages, one
    assert _Counted.reads <= 200


_HOLDER = """
import sys, time
from filelock import FileLock, Timeout
lock = FileLock(sys.argv[1], timeout=float(sys.argv[2]))
try:
    lock.acquire()
except Timeout:
    print("busy", flush=True)
    raise SystemExit(0)
print("held", flush=True)
sys.stdin.readline()
lock.release()
"""


def _holder(lock: Path, timeout: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(lock), str(timeout)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_a_recording_lock_excludes_other_processes_and_threads_and_nests(tmp_path: Path) -> None:
    """The lock taken without filelock's bookkeeping is the one filelock takes: another
    process holding it (with filelock) keeps this one out, and the other way round; a
    thread holding it keeps another out, and takes it again inside its own hold."""
    recording = tmp_path / "one.yaml"
    other = _holder(lock_file(recording), 5)
    try:
        assert other.stdout is not None and other.stdout.readline() == "held\n"
        with (
            pytest.raises(OutputFileError, match="cannot lock it"),
            recording_lock(recording, timeout=0.2),
        ):
            pass
    finally:
        other.communicate("\n", timeout=10)
    with recording_lock(recording):
        with recording_lock(recording):  # nested in one thread: held, not a deadlock
            outcome = _holder(lock_file(recording), 0.2).communicate(timeout=10)[0]
            assert outcome == "busy\n"
            got: list[str] = []

            def take() -> None:
                try:
                    with recording_lock(recording, timeout=0.2):
                        got.append("taken")
                except OutputFileError:
                    got.append("refused")

            thread = threading.Thread(target=take)
            thread.start()
            thread.join()
            assert got == ["refused"]
        assert _holder(lock_file(recording), 0.2).communicate(timeout=10)[0] == "busy\n"
    assert _holder(lock_file(recording), 5).communicate("\n", timeout=10)[0] == "held\n"


def test_a_recording_lock_is_taken_after_its_directory_went_away(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temp"))  # this test's own
    (tmp_path / "temp").mkdir()
    recording = tmp_path / "one.yaml"
    with recording_lock(recording):
        pass
    lock = lock_file(recording)
    shutil.rmtree(lock.parent)  # a temp cleaner, between two updates of a session
    with recording_lock(recording):
        assert lock.is_file()


@pytest.mark.skipif(sys.platform == "win32", reason="Windows: filelock takes every lock")
def test_a_recording_lock_on_posix_does_without_importing_filelock(tmp_path: Path) -> None:
    """filelock costs 13 ms to import, on every pytest run's first wire test; where the
    lock is a plain ``flock`` it is never imported."""
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from headerlock.formats.write_lock import recording_lock\n"
        f"with recording_lock(Path({str(tmp_path / 'one.yaml')!r})):\n    pass\n"
        "print('filelock' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout == "False\n", result.stderr
