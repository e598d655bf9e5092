"""Tests of ``headerlock.demo``: the demo apps and their tool plugins."""
