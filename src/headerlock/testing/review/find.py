"""Where a project's recordings and fixtures are, and the pending files below them.

The recordings directory is the one pytest would use: the ``headerlock_recordings``
option of the first ini file found from the working directory up (``pytest.ini``,
``.pytest.ini``, ``pyproject.toml``'s ``[tool.pytest.ini_options]``, ``tox.ini``'s
``[pytest]``, ``setup.cfg``'s ``[tool:pytest]``, as pytest looks), relative to that
file's directory; ``recordings`` beside it when the option is not set. The fixtures
directory likewise (``headerlock_fixtures``, else ``fixtures``).
"""

from __future__ import annotations

import configparser
import tomllib
from pathlib import Path
from typing import Final

from headerlock.errors import InputFileError
from headerlock.formats.pending import SUFFIX, pending_path

OPTION: Final = "headerlock_recordings"
DEFAULT: Final = "recordings"
FIXTURES_OPTION: Final = "headerlock_fixtures"
FIXTURES_DEFAULT: Final = "fixtures"
_INI: Final = (("pytest.ini", "pytest"), (".pytest.ini", "pytest"))


def _from_ini(path: Path, section: str, option: str) -> tuple[bool, str | None]:
    """Whether ``path`` is pytest's ini file, and its option value."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError) as error:
        raise InputFileError(f"{path}: cannot read it: {error}", path=str(path)) from None
    if not parser.has_section(section):
        return path.name in ("pytest.ini", ".pytest.ini"), None
    return True, parser.get(section, option, fallback=None)


def _from_pyproject(path: Path, option: str) -> tuple[bool, str | None]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise InputFileError(f"{path}: cannot read it: {error}", path=str(path)) from None
    pytest_table = data.get("tool", {}).get("pytest", {})
    options = pytest_table.get("ini_options", pytest_table if pytest_table else None)
    if not isinstance(options, dict):
        return False, None
    value = options.get(option)
    return True, None if value is None else str(value)


def recordings_dir(start: Path | None = None) -> Path:
    """The recordings directory of the project around ``start`` (the working directory)."""
    return _ini_dir(OPTION, DEFAULT, start)


def fixtures_dir(start: Path | None = None) -> Path:
    """The fixtures directory of the project around ``start`` (the working directory)."""
    return _ini_dir(FIXTURES_OPTION, FIXTURES_DEFAULT, start)


def _ini_dir(option: str, default: str, start: Path | None) -> Path:
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        for name, section in (*_INI, ("pyproject.toml", ""), ("tox.ini", "pytest"),
                              ("setup.cfg", "tool:pytest")):  # fmt: skip
            path = directory / name
            if not path.is_file():
                continue
            found, value = (
                _from_pyproject(path, option) if section == "" else _from_ini(path, section, option)
            )
            if found:
                return _shown(directory / (value.strip() if value and value.strip() else default))
    return _shown(here / default)


def _shown(path: Path) -> Path:
    """``path`` relative to the working directory when it lies below it (for messages)."""
    try:
        return path.relative_to(Path.cwd().resolve())
    except ValueError:
        return path


def pending_files(recordings: Path) -> list[Path]:
    """Every pending file below ``recordings``, sorted by path; none when there is no
    such directory (nothing was recorded yet)."""
    if not recordings.exists():
        return []
    if not recordings.is_dir():
        raise InputFileError(
            f"{recordings}: not a directory (set {OPTION} or pass --recordings DIR)",
            path=str(recordings),
        )
    return sorted(p for p in recordings.rglob(f"*.yaml{SUFFIX}") if p.is_file())


def collected_pending(source: Path, recordings: Path) -> dict[Path, Path]:
    """The pending files at any depth under ``source`` (CI artifacts, per-job folders
    included), each with the recording it changes: its path below the first folder named
    like ``recordings`` (``job-2/recordings/tests/test_app/test_x.yaml.new`` ->
    ``recordings/tests/test_app/test_x.yaml``), sorted by pending file. One that lies
    below no such folder is an ``InputFileError``."""
    if not source.is_dir():
        raise InputFileError(f"{source}: no such directory (--from DIR)", path=str(source))
    anchor = _anchor(recordings)
    found: dict[Path, Path] = {}
    for path in sorted(p for p in source.rglob(f"*.yaml{SUFFIX}") if p.is_file()):
        parts = path.relative_to(source).parts
        below = _below_anchor(parts, anchor)
        if below is None:
            raise InputFileError(
                f"{path}: not below a {'/'.join(anchor)}/ folder, so its recording is unknown"
                " (upload the pending files with their path from the project root)",
                path=str(path),
            )
        found[path] = recordings.joinpath(*below[:-1], below[-1][: -len(SUFFIX)])
    return found


def _anchor(recordings: Path) -> tuple[str, ...]:
    """The recordings directory's path as artifacts keep it (from the project root)."""
    if recordings.is_absolute() or ".." in recordings.parts or not recordings.parts:
        return (recordings.resolve().name,)
    return recordings.parts


def _below_anchor(parts: tuple[str, ...], anchor: tuple[str, ...]) -> tuple[str, ...] | None:
    for start in range(len(parts) - len(anchor)):
        if parts[start : start + len(anchor)] == anchor:
            return parts[start + len(anchor) :]
    if len(anchor) > 1:
        return _below_anchor(parts, anchor[-1:])
    return None


def resolve(argument: Path) -> Path:
    """The pending file a command-line PATH names (the ``.new`` file, or its recording)."""
    path = argument if argument.name.endswith(SUFFIX) else pending_path(argument)
    if not path.is_file():
        raise InputFileError(f"{path}: no such pending file", path=str(path))
    return path
