"""``headerlock review`` on bad input (issue 32): pytest's own configuration reader, an
invalid, oversized or hand-edited pending file, line numbers, and the exit codes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from headerlock.formats.pending import write_pending
from headerlock.formats.strict_yaml import loads
from tests.hostile import HEADERLOCK, PINNED, cli, no_traceback, scenario, write
from tests.plugin.test_review import _read_until

PLAIN = scenario().replace("{model: demo}", "{model: demo, persona: Be brief.}")


def project(root: Path) -> Path:
    """Two recorded scenarios, ``a-plain`` and the pinned ``z-pin``, each with a valid
    pending file (the recording as it is)."""
    write(root, {"fixtures/a-plain.yaml": PLAIN, "fixtures/z-pin.yaml": PINNED})
    result = cli(root, "record")
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("a-plain", "z-pin"):
        recording = root / "recordings" / f"{name}.yaml"
        write_pending(recording, recording.read_text())
    return root


def test_review_reads_the_configuration_as_pytest_does_or_refuses_it(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("tool = 5\n")
    broken = cli(tmp_path, "review", "--list")
    assert broken.returncode == 2
    no_traceback(broken)
    assert broken.stderr.startswith("headerlock: pyproject.toml: pytest cannot read this")
    assert len(broken.stderr.splitlines()) == 1
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nheaderlock_recordings = ["recs"]\n'
    )
    listed = cli(tmp_path, "review", "--list")
    assert (listed.returncode, listed.stderr) == (
        2,
        "headerlock: pyproject.toml: headerlock_recordings must be one path, got ['recs']\n",
    )
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / "pytest.ini").write_text("[pytest]\nheaderlock_recordings = recs  # mine\n")
    commented = cli(tmp_path, "review", "--list")
    assert (commented.returncode, commented.stderr) == (
        2,
        "headerlock: pytest.ini: headerlock_recordings = 'recs  # mine': ini values cannot"
        " carry inline comments; put the comment on a line of its own\n",
    )  # as pytest's run refuses it
    (tmp_path / "pytest.ini").write_text("[pytest]\nheaderlock_recordings =\n    recs\n")
    write(tmp_path / "recs", {"a.yaml": PLAIN})
    write_pending(tmp_path / "recs" / "a.yaml", PLAIN)
    found = cli(tmp_path, "review", "--list")  # found where the multi-line value says
    assert found.returncode == 2, found.stdout + found.stderr  # (a fixture: not a recording)
    assert found.stdout.splitlines()[-1].startswith("1 pending change below recs (1 invalid)")


def test_an_invalid_pending_file_is_named_and_the_others_go_on(tmp_path: Path) -> None:
    root = project(tmp_path)
    bad = root / "recordings" / "a-plain.yaml.new"
    bad.write_text("not a pending file\n")
    listed = cli(root, "review", "--list")
    assert listed.returncode == 2
    assert listed.stderr == (
        "headerlock: recordings/a-plain.yaml.new: not a headerlock pending file (no `# headerlock"
        " pending: ` header); left as it is\n"
    )
    assert listed.stdout.startswith("recordings/z-pin.yaml.new: changes recordings/z-pin.yaml")
    accepted = cli(root, "review", "--accept-all")
    assert accepted.returncode == 2, accepted.stdout + accepted.stderr
    assert accepted.stdout == "accepted recordings/z-pin.yaml.new -> recordings/z-pin.yaml\n"
    assert "recordings/a-plain.yaml.new: not a headerlock pending file" in accepted.stderr
    assert bad.exists()
    rejected = cli(root, "review", "--reject", "recordings/a-plain.yaml.new")
    assert (rejected.returncode, rejected.stdout) == (0, "rejected recordings/a-plain.yaml.new\n")
    assert not bad.exists()


def test_an_oversized_pending_file_is_refused_unread_and_errors_carry_the_files_lines(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    pending = root / "recordings" / "a-plain.yaml.new"
    head = pending.read_text().split("\n")[:2]
    with open(pending, "w") as file:
        file.write("\n".join([*head, "app: spine", ""]))
        file.truncate(600 * 1024 * 1024)  # sparse: nothing is stored
    listed = cli(root, "review", "--list")
    assert listed.returncode == 2
    assert listed.stderr.startswith(
        f"headerlock: recordings/a-plain.yaml.new: {600 * 1024 * 1024} bytes, more than the"
        f" limit of {32 * 1024 * 1024 + len(head[0]) + len(head[1]) + 13} of the recording it"
        " would become; not read"
    )
    body = "app: spine\nevents: [1,\n"
    pending.write_text("\n".join([*head, body]))
    try:
        loads(body, path="x")
    except Exception as error:
        line = int(str(error).split(":")[1])  # the line in the body alone
    else:
        raise AssertionError("the body was expected not to load")
    wrong = cli(root, "review", "--list")
    assert f"recordings/a-plain.yaml.new:{line + 2}: " in wrong.stderr, wrong.stderr


def test_accept_guards_the_scenario_its_path_names_whatever_the_text_says(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    recording = root / "recordings" / "a-plain.yaml"
    text = recording.read_text()
    fixture = root / "fixtures" / "a-plain.yaml"
    fixture.write_text(PLAIN.replace("Be brief.", "Be loud."))  # off its class's pin
    write_pending(recording, text.replace("scenario: a-plain", "scenario: elsewhere"))
    before = recording.read_bytes()
    refused = cli(root, "review", "--accept", "recordings/a-plain.yaml")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stderr == (
        "headerlock: recordings/a-plain.yaml.new: it says `scenario: elsewhere`, but it would"
        " replace the recording of scenario 'a-plain'; nothing written\n"
    )
    write_pending(recording, text)
    guarded = cli(root, "review", "--accept", "recordings/a-plain.yaml")
    assert guarded.returncode == 1, guarded.stdout + guarded.stderr
    assert "the pin guard failed" in guarded.stderr
    assert recording.read_bytes() == before


def test_an_interactive_review_exits_1_when_it_refused_anything(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "recordings" / "a-plain.yaml.new").write_text("not a pending file\n")
    leader, follower = os.openpty()
    process = subprocess.Popen(
        [*HEADERLOCK, "review"], cwd=root, stdin=follower, stdout=follower,
        stderr=follower, close_fds=True,
    )  # fmt: skip
    os.close(follower)
    seen = bytearray()
    try:
        _read_until(leader, b"q quit > ", seen)
        os.write(leader, b"a")
        _read_until(leader, b"not reviewed", seen, count=2)
        assert process.wait(timeout=30) == 1, seen.decode(errors="replace")
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    screen = seen.decode().replace("\r\n", "\n")
    assert "[1/2] not reviewed: recordings/a-plain.yaml.new: not a headerlock pending" in screen
    assert "review: 1 accepted, 0 rejected, 1 skipped, 0 not reviewed" in screen
