"""``HeaderlockSession``: the one plugin object of a pytest session (the model is
syrupy's ``SnapshotSession``), kept in ``config.stash`` and registered as
``headerlock-session``.

It owns the parts, each a plain object with plain methods: the recording books and
their update transaction (``updates.Updates``), the header classes of the wire tests
(``wire_classes.WireClasses``), the call phase of a wire test (``call_phase.CallPhase``),
the cache watch (``wire_cache.CacheWatch``, when asked for) and the manifest writer
(``manifest.ManifestWriter``, when asked for). The hooks (``hooks``) are short calls into
it; the order of the work is written here, not in hook priorities.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from headerlock.testing.plugin.books_summary import books_lines
from headerlock.testing.plugin.call_phase import CallPhase
from headerlock.testing.plugin.flake_probe import deselect_unwired
from headerlock.testing.plugin.manifest import ManifestWriter, manifest_writer
from headerlock.testing.plugin.nodes import GuardsItem
from headerlock.testing.plugin.state import PATHS_KEY, updating
from headerlock.testing.plugin.updates import Updates
from headerlock.testing.plugin.wire_cache import CacheWatch, cache_watch
from headerlock.testing.plugin.wire_classes import WireClasses


class HeaderlockSession:
    """This pytest process's headerlock state and the order of its work."""

    def __init__(self, config: pytest.Config) -> None:
        fixtures, recordings = config.stash[PATHS_KEY]
        update = updating(config)
        self.config = config
        self.is_worker = hasattr(config, "workerinput")
        self.books = Updates(config, recordings=recordings, fixtures=fixtures, update=update)
        self.manifest: ManifestWriter | None = manifest_writer(config, self.books)
        self.classes = WireClasses(config, update=update)
        self.cache: CacheWatch | None = cache_watch(config)
        self.calls = CallPhase()

    # -- collection ------------------------------------------------------------------

    def collected(self, collector: pytest.Collector, report: pytest.CollectReport) -> None:
        """What a collector collected, before ``--lf`` narrows it."""
        self.books.collected(collector, report)
        self.classes.collected(report)

    def sort(self, items: list[pytest.Item]) -> None:
        """The run's order: the classes' pins first (under an update), the project's
        guards last; under ``headerlock flakes`` only the wire tests."""
        self.classes.sort(items)
        items.sort(key=lambda item: isinstance(item, GuardsItem))
        deselect_unwired(self.config, items)

    def collection_finished(self, session: pytest.Session) -> None:
        """The selection is final."""
        self.books.collection_finished(session)

    # -- running ---------------------------------------------------------------------

    def call(self, item: pytest.Item) -> Generator[None, object, object]:
        """Around a test function: its wire lock closes, then its cache report."""
        __tracebackhide__ = True
        result = yield from self.calls.call(item)
        if self.cache is not None:
            self.cache.after_call(item)
        return result

    def made_report(
        self, item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport
    ) -> None:
        """A phase's report (after xfail had its say): the books, then the verdict."""
        self.books.made_report(item, report)
        self.calls.made_report(item, call, report)

    def logged(self, report: pytest.TestReport) -> None:
        """A phase's report as logged (on the xdist controller: a worker's)."""
        self.books.logged(report)
        if self.cache is not None:
            self.cache.logged(report)

    def node_down(self, node: Any, error: object) -> None:
        """An xdist worker ended: its books and classes join the controller's."""
        self.books.node_down(node, error)
        self.classes.node_down(node)

    # -- the end ---------------------------------------------------------------------

    def finish(self, session: pytest.Session, exitstatus: int) -> None:
        """In this order: the books decide (a worker hands them on), the classes are
        handed on, an interrupted mismatch fails the session, and the manifest is
        written last, from the final books and exit status."""
        self.books.finish(session, exitstatus)
        self.classes.finish()
        self.calls.finish(session)
        if self.manifest is not None:
            self.manifest.write(session)

    def summary(self) -> list[str]:
        """The lines of the ``headerlock`` summary section, in this order: the books, the
        header classes, the mismatches that stopped the session, the cache report, the
        manifest."""
        lines: list[str] = []
        if not self.is_worker:
            lines += [f"headerlock: {line}" for line in books_lines(self.books)]
            lines += [f"headerlock: {line}" for line in self.classes.book.lines()]
        lines += self.calls.lines(self.config)
        if self.cache is not None:
            lines += self.cache.lines()
        if self.manifest is not None:
            lines += self.manifest.lines()
        return lines
