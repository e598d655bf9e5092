"""The books one pytest process keeps about recordings, merged across xdist workers.

A ``Ledger`` says which owner spaces were collected (a Python test module, the
fixtures directory) and with which items, which items were selected, which
recording each Python test would use, which recordings were claimed, written,
left unchanged or kept. It travels from xdist workers to the controller as
plain data (``to_data``/``from_data``); ``merge`` folds the workers' books.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

SpaceKind = Literal["module", "fixtures"]


@dataclass(slots=True)
class Space:
    """Where recordings have one kind of owner: a Python test module
    (``recordings/<module key>/``) or the fixtures directory (``recordings/*.yaml``).

    ``items`` are the node ids of every item collected in it, ``None`` when it was
    not collected whole (narrowed by node ids, ``--lf`` skipping the file, ...).
    """

    kind: SpaceKind
    key: str
    items: list[str] | None

    def to_data(self) -> dict[str, Any]:
        """Plain data for ``workeroutput``."""
        return {"kind": self.kind, "key": self.key, "items": self.items}


@dataclass(slots=True)
class Ledger:
    """One process's books (see the module docstring); paths are absolute strings."""

    spaces: dict[str, Space] = field(default_factory=dict)
    collected: set[str] = field(default_factory=set)
    """Every item collected, selected or not."""
    selected: set[str] = field(default_factory=set)
    paths: dict[str, str] = field(default_factory=dict)
    """Python test node id -> the recording it would use."""
    claims: dict[str, set[str]] = field(default_factory=dict)
    """Recording -> node ids of the items that used it this session."""
    matched: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    unchanged: set[str] = field(default_factory=set)
    kept: dict[str, str] = field(default_factory=dict)
    """Recording -> node id of the failed item that did not replace it."""
    changed: set[str] = field(default_factory=set)
    """Written recordings that replaced an older file (the rest of ``written`` are new)."""
    pending: set[str] = field(default_factory=set)
    """Pending files (``<name>.yaml.new``) mismatching replays wrote."""
    ignore_seen: set[str] = field(default_factory=set)
    """The ini ``headerlock_ignore`` rules the session's wire tests ran with."""
    ignore_matched: set[str] = field(default_factory=set)
    """Those of them that matched some request."""
    ignore_notes: set[str] = field(default_factory=set)
    """What the ignore rules the tests ran with turn off (``ignore.header_notice``)."""
    older_format: set[str] = field(default_factory=set)
    """Recordings replayed from an older format version (``headerlock migrate`` updates them)."""
    header_changes: dict[str, set[str]] = field(default_factory=dict)
    """A header change (the lock, the ids and segments, one line) -> the node ids of the
    tests whose replay it failed."""

    def claim(self, path: str, nodeid: str) -> None:
        """Note that ``nodeid`` used the recording at ``path``."""
        self.claims.setdefault(path, set()).add(nodeid)

    def to_data(self) -> dict[str, Any]:
        """Plain data (lists and dicts of strings) for ``workeroutput``."""
        return {
            "spaces": {root: space.to_data() for root, space in self.spaces.items()},
            "collected": sorted(self.collected),
            "selected": sorted(self.selected),
            "paths": dict(self.paths),
            "claims": {path: sorted(ids) for path, ids in self.claims.items()},
            "matched": sorted(self.matched),
            "written": sorted(self.written),
            "unchanged": sorted(self.unchanged),
            "kept": dict(self.kept),
            "changed": sorted(self.changed),
            "pending": sorted(self.pending),
            "ignore_seen": sorted(self.ignore_seen),
            "ignore_matched": sorted(self.ignore_matched),
            "ignore_notes": sorted(self.ignore_notes),
            "older_format": sorted(self.older_format),
            "header_changes": {k: sorted(v) for k, v in self.header_changes.items()},
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Ledger:
        """The ledger ``to_data`` gave."""
        return cls(
            spaces={
                root: Space(s["kind"], s["key"], None if s["items"] is None else list(s["items"]))
                for root, s in data["spaces"].items()
            },
            collected=set(data["collected"]),
            selected=set(data["selected"]),
            paths=dict(data["paths"]),
            claims={path: set(ids) for path, ids in data["claims"].items()},
            matched=set(data["matched"]),
            written=set(data["written"]),
            unchanged=set(data["unchanged"]),
            kept=dict(data["kept"]),
            changed=set(data.get("changed", ())),
            pending=set(data.get("pending", ())),
            ignore_seen=set(data.get("ignore_seen", ())),
            ignore_matched=set(data.get("ignore_matched", ())),
            ignore_notes=set(data.get("ignore_notes", ())),
            older_format=set(data.get("older_format", ())),
            header_changes={k: set(v) for k, v in data.get("header_changes", {}).items()},
        )

    def merge(self, other: Ledger) -> None:
        """Fold ``other`` (another worker's books) into this one."""
        for root, space in other.spaces.items():
            mine = self.spaces.get(root)
            if mine is None:
                self.spaces[root] = Space(space.kind, space.key, space.items)
            elif mine.items is None or space.items is None or set(mine.items) != set(space.items):
                mine.items = None  # the workers disagree: treat it as not collected whole
        self.collected |= other.collected
        self.selected |= other.selected
        self.paths.update(other.paths)
        for path, ids in other.claims.items():
            self.claims.setdefault(path, set()).update(ids)
        self.matched |= other.matched
        self.written |= other.written
        self.unchanged |= other.unchanged
        self.kept.update(other.kept)
        self.changed |= other.changed
        self.pending |= other.pending
        self.ignore_seen |= other.ignore_seen
        self.ignore_matched |= other.ignore_matched
        self.ignore_notes |= other.ignore_notes
        self.older_format |= other.older_format
        for change, ids in other.header_changes.items():
            self.header_changes.setdefault(change, set()).update(ids)
