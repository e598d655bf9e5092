"""``headerlock unused MANIFEST...``: the CI jobs' usage manifests merged into one verdict.

Manifests belong together when they name the same collection (node ids before
deselection), recordings directory, recordings found at the start and headerlock
version; others are named and never merged. Together they must have run every
collected test to its end, none failing, no job interrupted or short of a worker;
only then are the unused recordings named (and, with ``--remove``, removed), by the
rules a single green session uses (``headerlock.testing.plugin.unused``): only files
that hold a headerlock recording, in owner spaces every job collected whole. A test
run by two jobs (a shuffled split) is reported.

Exit codes: 0 no unused recording (or all removed), 1 unused recordings, 2 the
manifests cannot say (do not belong together, a test no job ran, a failed test, an
interrupted job, the checkout's recordings differ from the jobs', a bad manifest).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from headerlock.errors import ConfigError
from headerlock.formats.manifest import (
    Manifest,
    digest_lines,
    read_manifest,
    recordings_listing,
    shown_paths,
)
from headerlock.testing.plugin.ledger import Ledger, Space, SpaceKind
from headerlock.testing.plugin.unused import Outcome, find_unused, remove, resolver

EXIT_NONE, EXIT_UNUSED, EXIT_CANNOT_SAY = 0, 1, 2


def job_name(manifest: Manifest) -> str:
    """The manifest's file, and its pytest-split group when it has one."""
    group = manifest.group
    return f"{manifest.source} (group {group})" if group else manifest.source


def load(paths: Sequence[Path]) -> list[Manifest]:
    """The manifests at ``paths``; a bad one raises ``InputFileError`` naming it."""
    return [read_manifest(path) for path in paths]


def mismatches(manifests: Sequence[Manifest]) -> list[str]:
    """One line per manifest that does not belong with the first one, saying why."""
    first = manifests[0]
    lines = []
    for other in manifests[1:]:
        why = []
        if other.headerlock != first.headerlock:
            why.append(f"headerlock {other.headerlock}, not {first.headerlock}")
        if other.collection != first.collection:
            why.append(
                f"another collection ({len(other.collected)} tests collected, not"
                f" {len(first.collected)}, or other node ids)"
            )
        if other.recordings != first.recordings:
            why.append(f"recordings directory {other.recordings}, not {first.recordings}")
        elif other.listing.get("sha256") != first.listing.get("sha256"):
            why.append(
                f"other recordings at its start ({other.listing.get('count')} files, not"
                f" {first.listing.get('count')}: another commit?)"
            )
        if why:
            lines.append(f"{job_name(other)} does not belong with {first.source}: {'; '.join(why)}")
    return lines


@dataclass(slots=True)
class Merged:
    """What the jobs did together."""

    outcomes: dict[str, Outcome] = field(default_factory=dict)
    ran_by: dict[str, list[str]] = field(default_factory=dict)
    """Node id -> the jobs that ran it (to its end or to a failure)."""
    failed: dict[str, list[str]] = field(default_factory=dict)
    stopped: list[str] = field(default_factory=list)
    """One line per job that was interrupted, lost a worker or left tests unfinished."""
    not_run: list[str] = field(default_factory=list)
    ledger: Ledger = field(default_factory=Ledger)

    @property
    def whole(self) -> bool:
        """Whether the jobs ran every collected test to its end, none failing."""
        return not (self.not_run or self.failed or self.stopped)


def merge(manifests: Sequence[Manifest], root: Path) -> Merged:
    """Fold the manifests' books into one ledger (paths absolute under ``root``)."""
    merged = Merged()
    absolute = resolver()
    for manifest in manifests:
        name = job_name(manifest)
        merged.ledger.merge(_ledger(manifest, root, absolute))
        unfinished = 0
        for nodeid, outcome in manifest.tests.items():
            mine = merged.outcomes.setdefault(nodeid, Outcome())
            if outcome == "unfinished":
                unfinished += 1
                continue
            merged.ran_by.setdefault(nodeid, []).append(name)
            mine.finished = True
            mine.skipped |= outcome == "skipped"
            if outcome == "failed":
                mine.failed = True
                merged.failed.setdefault(nodeid, []).append(name)
        if manifest.interrupted:
            merged.stopped.append(f"{name} was interrupted (exit status {manifest.exitstatus})")
        for worker in manifest.lost_workers:
            merged.stopped.append(f"{name} lost a pytest-xdist worker ({worker})")
        if unfinished and not manifest.interrupted:
            noun = "test" if unfinished == 1 else "tests"
            merged.stopped.append(
                f"{name} stopped early: {unfinished} selected {noun} did not run (-x, --maxfail?)"
            )
    collected = set(manifests[0].collected)
    merged.not_run = sorted(i for i in collected if i not in merged.ran_by)
    merged.ledger.selected = set(merged.ran_by)
    return merged


def _ledger(manifest: Manifest, root: Path, absolute: Callable[[Path], str]) -> Ledger:

    ledger = Ledger(collected=set(manifest.collected))
    for space in manifest.spaces:
        kind: SpaceKind = "fixtures" if space.kind == "fixtures" else "module"
        items = None if space.items is None else list(space.items)
        ledger.spaces[space.root] = Space(kind, space.key, items)
    for path, ids in manifest.used.items():
        for nodeid in ids:
            ledger.claim(absolute(root / path), nodeid)
    ledger.paths = {nodeid: absolute(root / path) for nodeid, path in manifest.skipped.items()}
    return ledger


def unused_command(
    paths: Sequence[Path], *, root: Path, remove_them: bool, say: Callable[[str], None]
) -> int:
    """Run ``headerlock unused``; returns the exit code."""
    manifests = load(paths)
    first = manifests[0]
    jobs = ", ".join(job_name(m) for m in manifests)
    noun = "manifest" if len(manifests) == 1 else "manifests"
    say(f"headerlock unused: {len(manifests)} {noun}: {jobs}")
    lines = mismatches(manifests)
    if lines:
        for line in lines:
            say(f"not merged: {line}")
        say("nothing merged, nothing removed: merge the manifests of one CI run")
        return EXIT_CANNOT_SAY
    merged = merge(manifests, root)
    _duplicates(manifests, merged, say)
    if not merged.whole:
        _problems(manifests, merged, say)
        say(
            "nothing removed: unused recordings are known only when the jobs together ran"
            " every collected test, green"
        )
        return EXIT_CANNOT_SAY
    recordings = root / first.recordings
    listing = recordings_listing(recordings)
    if digest_lines(listing) != first.listing.get("sha256"):
        say(
            f"{recordings.as_posix()} in this checkout ({len(listing)} recordings) is not what"
            f" the jobs started with ({first.listing.get('count')}): run the merge in a"
            " checkout of the commit the jobs ran; nothing removed"
        )
        return EXIT_CANNOT_SAY
    unused = find_unused(
        merged.ledger, merged.outcomes, recordings=recordings, fixtures=root / first.fixtures
    )
    shown = [_shown(p, root) for p in unused]
    say(f"{len(merged.ran_by)} of {len(first.collected)} collected tests ran, all green")
    if not unused:
        say("no unused recording")
        return EXIT_NONE
    if not remove_them:
        for path in shown:
            say(f"unused: {path}")
        say(
            f"{_count(len(unused), 'unused recording')}; remove with:"
            f" headerlock unused --remove {' '.join(m.source for m in manifests)}"
        )
        return EXIT_UNUSED
    removed, errors = remove(unused, root=recordings)
    for gone in removed:
        say(f"removed {_shown(gone, root)}")
    for error in errors:
        say(f"could not remove {error}")
    say(f"removed {_count(len(removed), 'unused recording')}")
    return EXIT_CANNOT_SAY if errors else EXIT_NONE


def used_wire_recordings(paths: Sequence[Path], *, root: Path) -> list[Path]:
    """The wire recordings (below ``root``) the tests of the manifests at ``paths`` used
    or wrote, once each, sorted: ``headerlock cache --manifest``'s input. The manifests
    must belong together (one CI run)."""
    from headerlock.errors import InputFileError
    from headerlock.formats.strict_yaml import load_file
    from headerlock.formats.wire_recording import WIRE_MAX_BYTES, is_wire_data

    manifests = load(paths)
    lines = mismatches(manifests)
    if lines:
        raise InputFileError(f"not merged: {lines[0]}", path=manifests[0].source)
    found = []
    for name in sorted({p for m in manifests for p in (*m.used, *m.written)}):
        path = root / name
        if path.is_file() and is_wire_data(load_file(path, max_bytes=WIRE_MAX_BYTES)):
            found.append(path)
    if not found:
        raise InputFileError(
            f"{manifests[0].source}: the manifests name no wire recording in this checkout",
            path=manifests[0].source,
        )
    return found


def _duplicates(manifests: Sequence[Manifest], merged: Merged, say: Callable[[str], None]) -> None:
    twice = sorted(i for i, jobs in merged.ran_by.items() if len(jobs) > 1)
    if not twice:
        return
    named = [f"{i} ({', '.join(merged.ran_by[i])})" for i in twice]
    say(f"{_count(len(twice), 'test')} ran in more than one job: {shown_paths(named)}")
    seeds = sorted({str(m.selection.get("randomly_seed")) for m in manifests})
    if len(seeds) > 1:
        say(
            f"  the jobs ran with different pytest-randomly seeds ({', '.join(seeds)}): each"
            " shuffled its own split; give every job the same --randomly-seed=N, or run"
            " with -p no:randomly"
        )
    else:
        say("  a shuffled or overlapping split? every job must run its own tests")


def _problems(manifests: Sequence[Manifest], merged: Merged, say: Callable[[str], None]) -> None:
    if merged.not_run:
        say(
            f"{_count(len(merged.not_run), 'collected test')} no job ran:"
            f" {shown_paths(merged.not_run)}{_missing_groups(manifests)}"
        )
    if merged.failed:
        failed = sorted(merged.failed)
        named = [f"{i} (in {', '.join(merged.failed[i])})" for i in failed]
        say(f"{_count(len(failed), 'test')} failed: {shown_paths(named)}")
    for line in merged.stopped:
        say(line)


def _missing_groups(manifests: Sequence[Manifest]) -> str:
    """`` (no manifest of group 2/3)`` when pytest-split groups are missing."""
    splits = {m.selection.get("splits") for m in manifests}
    if len(splits) != 1:
        return ""
    total = splits.pop()
    if not isinstance(total, int) or total < 1:
        return ""
    seen = {m.selection.get("group") for m in manifests}
    missing = [f"{g}/{total}" for g in range(1, total + 1) if g not in seen]
    return f" (no manifest of group {', '.join(missing)})" if missing else ""


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def cache_inputs(paths: Sequence[Path], manifests: Sequence[Path], root: Path) -> list[Path]:
    """``headerlock cache``'s recordings: the PATHs, then the wire recordings the
    manifests name (``used_wire_recordings``)."""
    if not paths and not manifests:
        raise ConfigError("cache needs a PATH or --manifest MANIFEST", key="PATH")
    return [*paths, *(used_wire_recordings(manifests, root=root) if manifests else [])]
