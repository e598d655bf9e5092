"""Tests of ``headerlock.testing.plugin``: the pytest plugin, driven through pytester."""
