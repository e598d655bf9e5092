"""headerlock writes only files it owns (issue 32): never through a link at a pending
file's path, and a directory there is one line naming it while the other scenarios run."""

from __future__ import annotations

from pathlib import Path

from tests.hostile import PINNED, cli, no_traceback, scenario, write


def project(root: Path) -> Path:
    """Two recorded scenarios: ``a-plain`` and the pinned ``z-pin``."""
    plain = scenario().replace("{model: demo}", "{model: demo, persona: Be brief.}")
    write(root, {"fixtures/a-plain.yaml": plain, "fixtures/z-pin.yaml": PINNED})
    result = cli(root, "record")
    assert result.returncode == 0, result.stdout + result.stderr
    return root


def test_a_mismatching_replay_never_writes_through_a_link_at_its_pending_path(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    victim = root / "victim.txt"
    victim.write_text("not headerlock's\n")
    link = root / "recordings" / "a-plain.yaml.new"
    link.symlink_to(Path("..") / "victim.txt")  # a repository can commit one
    fixture = root / "fixtures" / "a-plain.yaml"
    fixture.write_text(fixture.read_text().replace("prompt: hi", "prompt: hello"))
    result = cli(root, "replay")
    assert result.returncode == 1, result.stdout + result.stderr
    no_traceback(result)
    assert victim.read_text() == "not headerlock's\n"
    assert link.is_symlink()
    assert (
        "(no pending file: recordings/a-plain.yaml.new: is a symbolic link; headerlock writes"
        " only files it owns, never through a link" in result.stdout
    )


def test_a_directory_at_a_pending_path_is_one_line_and_the_other_scenarios_run(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    for name in ("a-plain", "z-pin"):
        (root / "recordings" / f"{name}.yaml.new").mkdir()
    matching = cli(root, "replay")  # both replays match
    assert matching.returncode == 2, matching.stdout + matching.stderr
    no_traceback(matching)
    assert matching.stderr.splitlines() == [
        f"headerlock: recordings/{name}.yaml.new: is a directory, where headerlock keeps this"
        " recording's pending file; remove or rename it (headerlock never removes a directory)"
        for name in ("a-plain", "z-pin")
    ]
    assert "[2/2] FAIL z-pin" in matching.stdout  # the second scenario still ran
    fixture = root / "fixtures" / "a-plain.yaml"
    fixture.write_text(fixture.read_text().replace("prompt: hi", "prompt: hello"))
    mismatching = cli(root, "replay", "a-plain")
    assert mismatching.returncode == 1, mismatching.stdout + mismatching.stderr
    assert (
        "(no pending file: recordings/a-plain.yaml.new: is a directory, where headerlock keeps"
        in mismatching.stdout
    )
    assert (root / "recordings" / "a-plain.yaml.new").is_dir()
