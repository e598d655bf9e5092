"""Tests of ``headerlock.testing.wire``: the wire lock, script, replay, diff and order check."""
