"""Hostile corpus, the pytest plugin's books (issue 19): two sessions at once never remove
each other's recordings, and a killed xdist worker's recordings are never called unused."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.hostile import PYTEST, pytest_env, wait_for, write
from tests.support import RUN_APP_CONFTEST

pytest.importorskip("xdist")

INI = "[pytest]\ntestpaths = tests\naddopts = -p no:randomly -p no:cacheprovider\n"

AGENT_TESTS = """\
import os, pathlib, time


def test_alpha(headerlock_recorder, run_app):
    headerlock_recorder.assert_match(run_app("alpha"))


def test_wait():
    gate = os.environ.get("HX_GATE")
    if gate:
        pathlib.Path(gate, "waiting").touch()
        while not pathlib.Path(gate, "go").exists():
            time.sleep(0.05)
"""

LATER_TESTS = """

def test_beta(headerlock_recorder, run_app):
    headerlock_recorder.assert_match(run_app("beta"))


def test_gamma(headerlock_recorder, run_app):
    headerlock_recorder.assert_match(run_app("gamma"))
"""


def run_pytest(root: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PYTEST, "-p", "xdist.plugin", *args], cwd=root, env=pytest_env(**extra),
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def start_pytest(root: Path, *args: str, **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*PYTEST, *args], cwd=root, env=pytest_env(**extra),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def test_a_session_never_removes_a_recording_written_after_it_started(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "pytest.ini": INI,
            "tests/conftest.py": RUN_APP_CONFTEST,
            "tests/test_agent.py": AGENT_TESTS,
        },
    )
    first = run_pytest(root, "--snapshot-update")
    assert first.returncode == 0, first.stdout
    folder = root / "recordings" / "tests" / "test_agent"
    alpha = (folder / "test_alpha.yaml").read_bytes()
    (folder / "test_gone.yaml").write_bytes(alpha)  # unused before session 1 starts
    (folder / "test_gamma.yaml").write_bytes(alpha)  # unused too, until session 2 records it
    gate = tmp_path / "gate"
    gate.mkdir()
    session_1 = start_pytest(root, "--snapshot-update", HX_GATE=str(gate))
    try:
        wait_for((gate / "waiting").exists, what="session 1 to run")
        # Session 2: new tests in the same file, recorded while session 1 runs.
        with (root / "tests" / "test_agent.py").open("a") as tests:
            tests.write(LATER_TESTS)
        second = run_pytest(
            root,
            "--snapshot-update",
            "tests/test_agent.py::test_beta",
            "tests/test_agent.py::test_gamma",
        )
        assert second.returncode == 0, second.stdout
        assert (folder / "test_beta.yaml").exists(), second.stdout
        beta, gamma = (
            (folder / "test_beta.yaml").read_bytes(),
            (folder / "test_gamma.yaml").read_bytes(),
        )
        assert gamma != alpha
        (gate / "go").touch()
        out, _ = session_1.communicate(timeout=120)
    finally:
        if session_1.poll() is None:
            session_1.kill()
            session_1.communicate()
    assert session_1.returncode == 0, out
    assert (folder / "test_beta.yaml").read_bytes() == beta, out
    assert (folder / "test_gamma.yaml").read_bytes() == gamma, out
    assert not (folder / "test_gone.yaml").exists(), "a file unused since before still goes"
    assert (
        "headerlock: removed 1 unused recording: recordings/tests/test_agent/test_gone.yaml" in out
    )
    assert (
        "headerlock: kept 2 recordings written after this session started (another session's?):"
        " recordings/tests/test_agent/test_beta.yaml, recordings/tests/test_agent/test_gamma.yaml"
    ) in out


def test_a_file_changed_in_place_on_a_coarse_clock_is_not_unchanged(tmp_path: Path) -> None:
    from headerlock.testing.plugin.unused import RecordingsSnapshot

    path = tmp_path / "r.yaml"
    path.write_text("one\n")
    old = path.stat()
    snapshot = RecordingsSnapshot.take(tmp_path)
    assert snapshot.unchanged(path), "a file written just before the session is its own"
    with path.open("r+") as handle:  # in place: same inode, same size
        handle.write("two\n")
    os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))  # and the old mtime
    assert not snapshot.unchanged(path), "its ctime moved"
    # A coarse clock may leave even the ctime as it was: the digest taken of a file
    # touched near the snapshot still tells.
    stamp = (old.st_dev, old.st_ino, old.st_size, path.stat().st_mtime_ns, path.stat().st_ctime_ns)
    coarse = RecordingsSnapshot(snapshot.started_ns, {str(path.resolve()): (stamp, "0" * 64)})
    assert not coarse.unchanged(path)
    late = tmp_path / "late.yaml"
    late.write_text("new\n")
    assert not snapshot.unchanged(late), "created after the snapshot"
    assert snapshot.recent(snapshot.started_ns - 1) and not snapshot.recent(0)


def test_the_snapshot_sees_what_a_walk_and_resolve_of_every_file_see(tmp_path: Path) -> None:
    """``RecordingsSnapshot.take`` lists the folders once each: the same files and real
    paths as ``os.walk`` (links to folders not followed, hidden names skipped) and
    ``Path.resolve`` of each file, links to files followed, over a hostile tree."""
    from headerlock.testing.plugin.unused import RecordingsSnapshot

    root, outside = tmp_path / "recordings", tmp_path / "outside"
    for folder in ("a/b", ".hidden", "c.yaml", "a/.git"):
        (root / folder).mkdir(parents=True)
    outside.mkdir()
    for name in ("top.yaml", "a/one.yaml", "a/b/two.yaml", ".hidden/no.yaml", "a/.dot.yaml",
                 "a/.git/no.yaml", "a/notes.txt", "c.yaml/three.yaml"):  # fmt: skip
        (root / name).write_text(name)
    (outside / "far.yaml").write_text("far")
    (outside / "only-through-the-folder-link.yaml").write_text("not walked")
    (root / "a" / "to-far.yaml").symlink_to(outside / "far.yaml")
    (root / "a" / "b" / "to-one.yaml").symlink_to(root / "a" / "one.yaml")
    (root / "linked").symlink_to(outside, target_is_directory=True)  # not walked
    (root / "broken.yaml").symlink_to(tmp_path / "nowhere.yaml")
    (root / "via").symlink_to(root / "a", target_is_directory=True)
    expected = {}
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [name for name in subfolders if not name.startswith(".")]
        for name in names:
            path = Path(folder, name)
            if name.endswith(".yaml") and not name.startswith(".") and path.exists():
                expected[str(path.resolve())] = path.stat().st_ino
    snapshot = RecordingsSnapshot.take(root)
    assert {key: stamp[1] for key, (stamp, _) in snapshot.stamps.items()} == expected
    assert len(expected) == 5  # top, one (also to-one's), two, three, far (to-far's target)
    assert str((outside / "far.yaml").resolve()) in snapshot.stamps


def test_the_unused_check_lists_a_folder_as_iterdir_and_resolve_do(tmp_path: Path) -> None:
    """The files an unused check weighs in a folder, and the real path it matches claims
    by: those of ``iterdir`` (sorted; ``*.yaml``, not hidden, not the header lock, files
    or links to files) and ``Path.resolve``."""
    from headerlock.testing.plugin.unused import _yaml_files

    folder, outside = tmp_path / "recordings" / "tests" / "test_a", tmp_path / "outside"
    (folder / "sub.yaml").mkdir(parents=True)
    outside.mkdir()
    for name in ("b.yaml", "a.yaml", ".h.yaml", "headers.lock.yaml", "n.txt", "x.yaml.new"):
        (folder / name).write_text(name)
    (outside / "far.yaml").write_text("far")
    (folder / "to-far.yaml").symlink_to(outside / "far.yaml")
    (folder / "to-a.yaml").symlink_to(folder / "a.yaml")
    (folder / "broken.yaml").symlink_to(tmp_path / "nowhere.yaml")
    (folder / "to-folder.yaml").symlink_to(outside, target_is_directory=True)
    expected = [
        (path, str(path.resolve()))
        for path in sorted(folder.iterdir())
        if path.suffix == ".yaml"
        and not path.name.startswith(".")
        and path.name != "headers.lock.yaml"
        and path.is_file()
    ]
    assert [p.name for p, _ in expected] == ["a.yaml", "b.yaml", "to-a.yaml", "to-far.yaml"]
    assert _yaml_files(folder) == expected
    assert _yaml_files(tmp_path / "missing") == []


CRASH_TESTS = {
    "tests/test_a.py": """\
        import pytest

        pytestmark = pytest.mark.xdist_group("one")


        def test_alpha(headerlock_recorder, run_app):
            headerlock_recorder.assert_match(run_app("alpha"))


        def test_beta(headerlock_recorder, run_app):
            headerlock_recorder.assert_match(run_app("beta"))
        """,
    "tests/test_b.py": """\
        import os, signal
        import pytest

        pytestmark = pytest.mark.xdist_group("one")


        def test_crash():
            if os.environ.get("HX_CRASH"):
                os.kill(os.getpid(), signal.SIGKILL)
        """,
}


@pytest.mark.parametrize("update", [True, False], ids=["update", "replay"])
def test_a_killed_workers_recordings_are_never_called_unused(tmp_path: Path, update: bool) -> None:
    root = write(tmp_path, {"pytest.ini": INI, "tests/conftest.py": RUN_APP_CONFTEST})
    for relative, text in CRASH_TESTS.items():
        (root / relative).write_text(textwrap.dedent(text))
    first = run_pytest(root, "--snapshot-update")
    assert first.returncode == 0, first.stdout
    before = sorted(p.name for p in (root / "recordings").rglob("*.yaml"))
    assert before == ["test_alpha.yaml", "test_beta.yaml"]
    args = [
        "-n",
        "2",
        "--dist",
        "loadgroup",
        "--max-worker-restart",
        "0",
        *(["--snapshot-update"] if update else []),
    ]
    result = run_pytest(root, *args, HX_CRASH="1")
    assert result.returncode == 1, result.stdout
    assert "crashed" in result.stdout, result.stdout
    said = [line for line in result.stdout.splitlines() if "unused recording" in line]
    assert not [line for line in said if "test_alpha" in line or "test_beta" in line], said
    assert sorted(p.name for p in (root / "recordings").rglob("*.yaml")) == before
