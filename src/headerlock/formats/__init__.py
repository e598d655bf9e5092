"""Bytes on disk: strict YAML loading, canonical YAML dumping, fixture and
recording files, scrub/restore normalization, atomic writes and the readable
explanation of a difference. May import ``headerlock.runtime``, nothing above it.
"""
