"""Scenarios: fixtures (``fixtures/<name>.yaml``) run through the driver their ``app:``
names, recorded, replayed and compared, with pins, guards and the project's files.

Used by the CLI and the pytest plugin; imports nothing else of ``headerlock.testing``.
"""
