"""A directory that tools may touch; paths outside it are refused."""

from __future__ import annotations

from pathlib import Path

from headerlock.errors import WorkspaceError


class Workspace:
    """The ``workspace`` service: resolves relative paths inside ``root``."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()

    def resolve(self, relative: str) -> Path:
        """The absolute path of ``relative``; refuses absolute paths, ``..`` escapes, NUL."""
        if not isinstance(relative, str) or not relative:
            raise WorkspaceError(
                f"path must be a non-empty string, got {relative!r}", path=str(relative)
            )
        if "\x00" in relative:
            raise WorkspaceError("path contains a NUL byte", path=relative)
        candidate = Path(relative)
        if candidate.is_absolute():
            raise WorkspaceError(
                f"path {relative!r} is absolute; use a workspace-relative path", path=relative
            )
        resolved = (self.root / candidate).resolve()
        if not resolved.is_relative_to(self.root):
            raise WorkspaceError(f"path {relative!r} leaves the workspace", path=relative)
        return resolved

    def relative(self, path: Path) -> str:
        """``path`` relative to the root, with forward slashes."""
        return path.relative_to(self.root).as_posix()
