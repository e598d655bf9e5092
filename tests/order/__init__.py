"""Tests of ``headerlock.testing.order``: order invariance, strategies, flake hunting."""
