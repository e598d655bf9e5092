"""Where a project's recordings and fixtures are, and the pending files below them.

The recordings directory is the one pytest would use: the ``headerlock_recordings``
option of the configuration pytest finds from the working directory up, read by
pytest's own reader (``_pytest.config.findpaths``: ``pytest.ini``, ``pyproject.toml``'s
``[tool.pytest.ini_options]``, ``tox.ini``, ``setup.cfg``, ...), relative to pytest's
rootdir; ``recordings`` there when the option is not set. A configuration pytest cannot
read, or a value that is not one path, is an ``InputFileError`` naming the file. The fixtures
directory likewise (``headerlock_fixtures``, else ``fixtures``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from headerlock.errors import InputFileError
from headerlock.formats.pending import SUFFIX, pending_path

OPTION: Final = "headerlock_recordings"
DEFAULT: Final = "recordings"
FIXTURES_OPTION: Final = "headerlock_fixtures"
FIXTURES_DEFAULT: Final = "fixtures"
_NAMES: Final = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)


def _pytest_ini(here: Path) -> tuple[Path | None, Path | None, dict[str, object]]:
    """pytest's own reading of its configuration around ``here``: the rootdir, the ini
    file and its options (what pytest itself would use)."""
    from _pytest.config import findpaths

    try:
        found = findpaths.locate_config(here, [])
    except Exception as error:  # pytest fails on it the same way: name the file
        raise InputFileError(
            f"{_unreadable(here)}: pytest cannot read this configuration"
            f" ({type(error).__name__}: {' '.join(str(error).split())}); fix it, or pass"
            " --recordings DIR",
            path=str(_unreadable(here)),
        ) from None
    return found[0], found[1], dict(found[2])


def _unreadable(here: Path) -> Path:
    """The first configuration file pytest cannot read, from ``here`` up."""
    from _pytest.config import findpaths

    for directory in (here, *here.parents):
        for name in _NAMES:
            path = directory / name
            if not path.is_file():
                continue
            try:
                findpaths.load_config_dict_from_file(path)
            except Exception:
                return _shown(path)
    return _shown(here)


def recordings_dir(start: Path | None = None) -> Path:
    """The recordings directory of the project around ``start`` (the working directory)."""
    return _ini_dir(OPTION, DEFAULT, start)


def fixtures_dir(start: Path | None = None) -> Path:
    """The fixtures directory of the project around ``start`` (the working directory)."""
    return _ini_dir(FIXTURES_OPTION, FIXTURES_DEFAULT, start)


def _ini_dir(option: str, default: str, start: Path | None) -> Path:
    here = (start or Path.cwd()).resolve()
    rootdir, inipath, options = _pytest_ini(here)
    if inipath is None or rootdir is None:
        return _shown(here / default)
    raw = options.get(option)
    value = getattr(raw, "value", raw)  # pytest 9 wraps each value
    if value is None:
        value = default
    if not isinstance(value, str):
        raise InputFileError(
            f"{_shown(inipath)}: {option} must be one path, got {value!r}",
            path=str(_shown(inipath)),
        )
    if re.search(r"\s#", value):  # as the plugin refuses it
        raise InputFileError(
            f"{_shown(inipath)}: {option} = {value!r}: ini values cannot carry inline comments;"
            " put the comment on a line of its own",
            path=str(_shown(inipath)),
        )
    return _shown(rootdir / (value.strip() or default))


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
