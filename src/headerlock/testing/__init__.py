"""What users test with, one room per audience:

- ``scenario/``: fixture authors' scenarios: the driver registry, loading fixtures,
  running, recording and replaying them, pins and guards, the project's files.
- ``order/``: flake hunters: load schedules, Hypothesis strategies, the plugin-order
  check of headerlock apps, and ``headerlock flakes`` with its workers.
- ``wire/``: agents headerlock did not write: the HTTP capture (``lock()``), one module
  per model API, scripted replies, comparisons and explanations, the order check for
  any agent, framework recipes and the ``app: wire`` driver.
- ``plugin/``: the pytest plugin: its entry module (``hooks``), collection nodes, what
  items run, the transactional recording books and the ``headerlock_wire`` fixture.
- ``review/``: fixture authors reviewing pending changes (``headerlock review``): finding
  the ``.new`` files, the diff shown, accept and reject.

Imports point one way: ``plugin`` / ``review`` → ``order`` / ``wire`` → ``scenario``;
``order`` and ``wire`` never import each other, nor ``plugin`` and ``review``. May import
``headerlock.runtime`` and ``headerlock.formats``; never ``headerlock.demo``.
"""
