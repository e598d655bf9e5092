"""Tests of ``headerlock.formats``: YAML in and out, recordings, scrubbing, atomic files."""
