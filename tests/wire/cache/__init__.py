"""Tests of the cache report (issue 20)."""
