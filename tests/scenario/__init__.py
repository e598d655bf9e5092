"""Tests of ``headerlock.testing.scenario``: fixtures, record and replay, pins."""
