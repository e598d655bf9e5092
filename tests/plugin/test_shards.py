"""Sharded CI: each pytest-split job writes a usage manifest; ``headerlock unused`` merges
them, ``headerlock review --from`` takes the jobs' pending files, ``headerlock cache
--manifest`` reports over the recordings they used (pytester projects, real pytest-split)."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest

import headerlock.testing.plugin.items  # noqa: F401  (in-process pytester runs reuse it)
from headerlock.cli import main
from headerlock.formats.manifest import Manifest, digest_lines, write_manifest
from headerlock.testing.plugin.unused import resolver
from tests.model_server import ModelServer
from tests.support import RUN_APP_CONFTEST
from tests.wire.cache.corpus import base, planted, record

INI = (
    "[pytest]\nasyncio_default_fixture_loop_scope = function\ntestpaths = tests\n"
    "addopts = -p no:randomly -p no:cacheprovider\n"
)
APP_TESTS = """
import os


def test_one(headerlock_recorder, run_app):
    headerlock_recorder.assert_match(run_app(os.environ.get("WORD_ONE", "one")))


def test_two(headerlock_recorder, run_app):
    headerlock_recorder.assert_match(run_app("two"))
    assert not os.environ.get("TWO_FAILS"), "two failed after assert_match"


def test_three(headerlock_recorder, run_app):
    headerlock_recorder.assert_match(run_app("three"))
"""
MODULE = "recordings/tests/test_app"
ORPHAN = f"{MODULE}/test_gone.yaml"
GROUPS = (["--splits", "2", "--group", "1"], ["--splits", "2", "--group", "2"])


@pytest.fixture(autouse=True)
def switches_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("WORD_ONE", "TWO_FAILS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """tests/test_app.py: three recorded tests; plus one orphan recording and a file in
    the recordings directory that is not a recording."""
    pytester.makeini(INI)
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "conftest.py").write_text(RUN_APP_CONFTEST)
    (pytester.path / "tests" / "test_app.py").write_text(APP_TESTS)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=3)
    shutil.copy(pytester.path / MODULE / "test_one.yaml", pytester.path / ORPHAN)
    (pytester.path / MODULE / "notes.yaml").write_text("owner: the team\n")
    return pytester


def run_groups(project: pytest.Pytester, *extra: str, groups: int = 2) -> list[Path]:
    """Run pytest-split groups 1..groups, each with --headerlock-manifest; the manifests."""
    manifests = []
    for group in GROUPS[:groups]:
        name = f"manifest-{group[-1]}.json"
        project.runpytest(*group, f"--headerlock-manifest={name}", *extra)
        manifests.append(Path(name))  # relative to the project, where the merge runs
    return manifests


def unused(root: Path, *args: str | Path) -> tuple[int, str]:
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        code = main(["unused", *map(str, args)], out=out)
    finally:
        os.chdir(cwd)
    return code, out.getvalue()


def test_the_merge_names_only_the_orphan_and_removes_only_it(project: pytest.Pytester) -> None:
    manifests = run_groups(project)
    data = [json.loads((project.path / m).read_text()) for m in manifests]
    assert [sorted(d["tests"]) for d in data] == [
        ["tests/test_app.py::test_one", "tests/test_app.py::test_two"],
        ["tests/test_app.py::test_three"],
    ]
    assert data[0]["collected"]["count"] == data[1]["collected"]["count"] == 3
    assert data[0]["used"] == {
        f"{MODULE}/test_one.yaml": ["tests/test_app.py::test_one"],
        f"{MODULE}/test_two.yaml": ["tests/test_app.py::test_two"],
    }
    assert data[1]["selection"]["splits"] == 2 and data[1]["selection"]["group"] == 2

    code, out = unused(project.path, *manifests)
    assert code == 1, out
    assert [line for line in out.splitlines() if line.startswith("unused:")] == [
        f"unused: {ORPHAN}"
    ]
    assert (project.path / ORPHAN).exists()

    code, out = unused(project.path, "--remove", *manifests)
    assert code == 0, out
    assert f"removed {ORPHAN}" in out
    assert sorted(p.name for p in (project.path / MODULE).iterdir()) == [
        "notes.yaml",
        "test_one.yaml",
        "test_three.yaml",
        "test_two.yaml",
    ]


@pytest.mark.slow
def test_xdist_workers_books_reach_the_manifest(project: pytest.Pytester) -> None:
    for n, group in enumerate(GROUPS, 1):
        result = project.runpytest(*group, "-n", "2", f"--headerlock-manifest=m{n}.json")
        result.assert_outcomes(passed=3 - n)
    data = json.loads((project.path / "m1.json").read_text())
    assert data["selection"]["workers"] == 2
    assert sorted(data["used"]) == [f"{MODULE}/test_one.yaml", f"{MODULE}/test_two.yaml"]
    code, out = unused(project.path, "m1.json", "m2.json", "--remove")
    assert code == 0, out
    assert not (project.path / ORPHAN).exists()
    assert (project.path / MODULE / "test_two.yaml").exists()


def test_a_missing_group_removes_nothing_and_names_the_tests_no_job_ran(
    project: pytest.Pytester,
) -> None:
    (manifest,) = run_groups(project, groups=1)
    code, out = unused(project.path, "--remove", manifest)
    assert code == 2, out
    assert (
        "1 collected test no job ran: tests/test_app.py::test_three (no manifest of group 2/2)"
        in out
    )
    assert "\nunused:" not in out
    assert (project.path / ORPHAN).exists()


def test_a_failed_test_removes_nothing_and_is_named(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TWO_FAILS", "1")
    manifests = run_groups(project)
    code, out = unused(project.path, "--remove", *manifests)
    assert code == 2, out
    assert "1 test failed: tests/test_app.py::test_two (in manifest-1.json (group 1/2))" in out
    assert (project.path / ORPHAN).exists()


def test_a_test_run_by_two_jobs_is_reported(project: pytest.Pytester) -> None:
    project.makeini(INI + "headerlock_manifest = ci/all.json\n")  # the ini key: rootdir-relative
    project.runpytest("tests")
    project.runpytest(*GROUPS[1], "--headerlock-manifest=m2.json")
    code, out = unused(project.path, "ci/all.json", "m2.json")
    assert code == 1, out
    assert (
        "1 test ran in more than one job: tests/test_app.py::test_three (ci/all.json,"
        " m2.json (group 2/2))" in out
    )


def test_manifests_of_another_collection_are_named_and_never_merged(
    project: pytest.Pytester,
) -> None:
    (first,) = run_groups(project, groups=1)
    (project.path / "tests" / "test_more.py").write_text("def test_more():\n    pass\n")
    project.runpytest(*GROUPS[1], "--headerlock-manifest=other.json")
    code, out = unused(project.path, "--remove", first, "other.json")
    assert code == 2, out
    assert (
        f"not merged: other.json (group 2/2) does not belong with {first}: another collection"
        " (4 tests collected, not 3, or other node ids)" in out
    )
    assert (project.path / ORPHAN).exists()


def test_an_interrupted_run_writes_a_manifest_that_says_so(project: pytest.Pytester) -> None:
    (project.path / "tests" / "test_zz.py").write_text(
        "def test_zz_interrupt():\n    raise KeyboardInterrupt\n"
    )
    result = project.runpytest_subprocess("--headerlock-manifest=m.json")  # a real Ctrl-C
    assert result.ret == pytest.ExitCode.INTERRUPTED
    data = json.loads((project.path / "m.json").read_text())
    assert data["interrupted"] is True
    code, out = unused(project.path, "--remove", "m.json")
    assert code == 2, out
    assert "m.json was interrupted (exit status 2)" in out
    assert (project.path / ORPHAN).exists()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"format": "headerlock-manifest", "version": 1,', "invalid JSON"),
        ("[1, 2]", 'not a headerlock manifest (no "format"'),
        ('{"format": "headerlock-manifest", "version": 1}', "'collected' is missing"),
    ],
    ids=["truncated", "not-a-manifest", "missing-field"],
)
def test_a_bad_manifest_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, says: str
) -> None:
    (tmp_path / "bad.json").write_text(text)
    code, _ = unused(tmp_path, "bad.json")
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("headerlock: bad.json: ") and says in err, err
    assert err.count("\n") == 1


def test_the_checkout_must_hold_the_recordings_the_jobs_started_with(
    project: pytest.Pytester,
) -> None:
    manifests = run_groups(project)
    new = project.path / MODULE / "test_added_later.yaml"
    shutil.copy(project.path / MODULE / "test_one.yaml", new)
    code, out = unused(project.path, "--remove", *manifests)
    assert code == 2, out
    assert "is not what the jobs started with" in out
    assert new.exists() and (project.path / ORPHAN).exists()


def test_review_from_applies_a_ci_jobs_pending_file_to_a_clean_checkout(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    checkout = tmp_path / "checkout"
    shutil.copytree(project.path, checkout)
    monkeypatch.setenv("WORD_ONE", "uno")
    project.runpytest(*GROUPS[0]).assert_outcomes(passed=1, failed=1)  # the CI job
    pending = project.path / MODULE / "test_one.yaml.new"
    artifact = tmp_path / "artifacts" / "job-1" / MODULE / "test_one.yaml.new"
    artifact.parent.mkdir(parents=True)
    shutil.copy(pending, artifact)
    project.runpytest("--snapshot-update", "tests/test_app.py::test_one")
    expected = (project.path / MODULE / "test_one.yaml").read_bytes()

    twin = tmp_path / "artifacts" / "job-2" / MODULE / "test_one.yaml.new"  # a test run twice
    twin.parent.mkdir(parents=True)
    shutil.copy(pending, twin)
    out = io.StringIO()
    monkeypatch.chdir(checkout)
    code = main(["review", "--from", "../artifacts", "--list"], out=out)
    assert code == 1
    assert out.getvalue().splitlines() == [
        "../artifacts/job-2/recordings/tests/test_app/test_one.yaml.new: the same change as"
        " ../artifacts/job-1/recordings/tests/test_app/test_one.yaml.new, reviewed once",
        "../artifacts/job-1/recordings/tests/test_app/test_one.yaml.new: changes"
        " recordings/tests/test_app/test_one.yaml (scenario, 8 events)",
        "1 pending change under ../artifacts (keep them out of git: *.yaml.new in .gitignore)",
    ]
    out = io.StringIO()
    code = main(
        ["review", "--from", "../artifacts", "--accept", f"{MODULE}/test_one.yaml"], out=out
    )
    assert code == 0, out.getvalue()
    assert (checkout / MODULE / "test_one.yaml").read_bytes() == expected
    assert not artifact.exists()
    assert not (checkout / MODULE / "test_one.yaml.new").exists()

    shutil.copy(pending, artifact)  # the same change again: its recording changed since
    code = main(["review", "--from", str(tmp_path / "artifacts"), "--accept-all"], out=out)
    assert code == 1
    assert (checkout / MODULE / "test_one.yaml").read_bytes() == expected


def test_one_cache_report_over_the_recordings_the_jobs_used(
    model_server: ModelServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "recordings" / "tests" / "test_app"
    record(model_server, "openai.chat", base("openai.chat"), folder / "test_a.yaml")
    moved = planted("tools-reordered", "anthropic.messages")
    record(model_server, "anthropic.messages", moved, folder / "test_b.yaml")
    record(model_server, "openai.chat", base("openai.chat"), folder / "test_unused.yaml")
    (folder / "test_scenario.yaml").write_text("kind: scenario\n")  # used, not wire
    jobs = {"m1.json": ("test_a", "test_scenario"), "m2.json": ("test_b",)}
    for name, used in jobs.items():
        write_manifest(tmp_path / name, job_manifest(used))

    def cache(*args: str) -> tuple[int, str]:
        out = io.StringIO()
        code = main(["cache", *args], out=out)
        assert capsys.readouterr().err == ""
        return code, out.getvalue()

    monkeypatch.chdir(tmp_path)
    merged = cache("--manifest", "m1.json", "--manifest", "m2.json")
    full = cache(f"{MODULE}/test_a.yaml", f"{MODULE}/test_b.yaml")
    assert merged == full
    assert merged[0] == 1 and "all: 2 recordings, 1 with findings, 1 finding" in merged[1]


def job_manifest(used: tuple[str, ...]) -> Manifest:
    """A job's manifest in which the tests ``used`` used their recordings."""
    ids = [f"tests/test_app.py::{name}" for name in used]
    return Manifest(
        headerlock="1.0",
        recordings="recordings",
        fixtures="fixtures",
        listing={"count": 0, "sha256": digest_lines([])},
        collected=("tests/test_app.py::test_a", "tests/test_app.py::test_b"),
        spaces=(),
        selection={},
        interrupted=False,
        exitstatus=0,
        lost_workers=(),
        tests=dict.fromkeys(ids, "passed"),
        used={f"{MODULE}/{name}.yaml": (nodeid,) for name, nodeid in zip(used, ids, strict=True)},
        skipped={},
    )


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("headerlock", "0.0.1", "headerlock 0.0.1, not "),
        ("recordings", "elsewhere", "recordings directory elsewhere, not recordings"),
    ],
)
def test_manifests_of_another_version_or_recordings_directory_are_never_merged(
    project: pytest.Pytester, field: str, value: str, says: str
) -> None:
    first, second = run_groups(project)
    data = json.loads((project.path / second).read_text())
    data[field] = value
    (project.path / second).write_text(json.dumps(data))
    code, out = unused(project.path, "--remove", first, second)
    assert code == 2, out
    assert f"not merged: {second} (group 2/2) does not belong with {first}: {says}" in out
    assert (project.path / ORPHAN).exists()


def test_the_resolver_gives_what_resolve_gives_through_links(tmp_path: Path) -> None:
    real = tmp_path / "real" / "tests"
    real.mkdir(parents=True)
    (real / "a.yaml").write_text("x")
    (tmp_path / "elsewhere.yaml").write_text("y")
    (real / "linked.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    (tmp_path / "recordings").symlink_to(tmp_path / "real")
    resolved = resolver()
    for name in ("a.yaml", "linked.yaml", "missing.yaml"):
        path = tmp_path / "recordings" / "tests" / name
        assert resolved(path) == str(path.resolve())


def test_a_split_shuffled_by_pytest_randomly_is_named(project: pytest.Pytester) -> None:
    project.makeini(INI.replace("-p no:randomly ", ""))  # pytest-randomly on, seeds differ
    runs = []
    for (n, group), seed in zip(enumerate(GROUPS, 1), (1, 4), strict=True):
        project.runpytest(*group, f"--randomly-seed={seed}", f"--headerlock-manifest=r{n}.json")
        runs.append(set(json.loads((project.path / f"r{n}.json").read_text())["tests"]))
    twice, never = (
        runs[0] & runs[1],
        {f"tests/test_app.py::test_{n}" for n in ("one", "two", "three")},
    )
    never -= runs[0] | runs[1]
    assert twice and never  # the premise: these seeds shuffle the split apart
    code, out = unused(project.path, "--remove", "r1.json", "r2.json")
    assert code == 2, out
    assert f"1 test ran in more than one job: {min(twice)} (r1.json (group 1/2), r2.json" in out
    assert "the jobs ran with different pytest-randomly seeds (1, 4)" in out
    assert f"1 collected test no job ran: {min(never)}" in out
    assert (project.path / ORPHAN).exists()
