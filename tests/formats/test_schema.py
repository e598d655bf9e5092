"""``formats.schema``: every file kind's version in one place, a step from each older
version, and a file newer than this headerlock refused in one line naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from headerlock.cli import main
from headerlock.errors import HeaderlockError
from headerlock.formats import header_lock, manifest, recording, schema, wire_recording
from headerlock.formats.header_lock import load_lock
from headerlock.formats.manifest import read_manifest

ROOT = Path(__file__).parents[2]


def test_every_kind_has_one_version_and_a_step_from_each_older_one() -> None:
    assert [k.name for k in schema.KINDS] == [
        "wire", "scenario", "header-lock", "fixture", "manifest"]  # fmt: skip
    for kind in schema.KINDS:
        assert sorted(kind.steps) == list(range(kind.oldest(), kind.version))
    assert wire_recording.WIRE_FORMAT_VERSION == schema.WIRE.version == 3
    assert schema.SCENARIO.version == recording.FORMAT_VERSION
    assert schema.HEADER_LOCK.version == header_lock.LOCK_VERSION
    assert schema.MANIFEST.version == manifest.FORMAT_VERSION


def test_a_newer_header_lock_and_manifest_are_one_line_naming_them(tmp_path: Path) -> None:
    lock = tmp_path / "headers.lock.yaml"
    lock.write_text("headers: {}\nkind: header-lock\nversion: 2\n")
    with pytest.raises(HeaderlockError) as caught:
        load_lock(lock)
    assert str(caught.value) == (
        f"{lock}: version: header lock format version 2 is newer than this headerlock"
        " reads (1); upgrade headerlock"
    )
    found = tmp_path / "m.json"
    found.write_text(json.dumps({"format": "headerlock-manifest", "version": 2}))
    with pytest.raises(HeaderlockError) as caught:
        read_manifest(found)
    assert "m.json: manifest format version 2 is newer than this headerlock reads (1)" in str(
        caught.value
    )


def test_a_fixture_may_say_its_version_and_a_newer_one_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fixtures").mkdir()
    fixture = (ROOT / "fixtures" / "text-turn.yaml").read_text()
    (tmp_path / "fixtures" / "text-turn.yaml").write_text("version: 1\n" + fixture)
    assert main(["record"]) == 0
    assert main(["migrate", "--check"]) == 0
    (tmp_path / "fixtures" / "text-turn.yaml").write_text("version: 2\n" + fixture)
    capsys.readouterr()
    assert main(["replay"]) == 2
    assert "fixture format version 2 is newer than this headerlock reads (1)" in (
        capsys.readouterr().err
    )
    assert main(["migrate"]) == 2
    assert "text-turn.yaml: fixture format version 2 is newer" in capsys.readouterr().out
