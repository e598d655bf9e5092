"""The pytest plugin. ``hooks`` is the ``pytest11`` entry module and holds every hook,
each a short call into the one ``HeaderlockSession`` (``session``) kept in the config's
stash; ``state`` (stash keys, the record mode) imports nothing of it, ``options`` declares
the command-line options and ini keys.

The session's parts are plain objects: ``updates`` (the transactional recording books,
with ``ledger``/``unused``/``names``, summarised by ``books_summary``), ``wire_classes``
(the wire tests' header classes), ``call_phase`` (a wire test's lock closing and its
verdict), ``wire_cache`` (the cache report) and ``manifest`` (the usage manifest).
``nodes`` are the collection nodes, ``items`` what they run, ``wire_fixture`` the
``headerlock_wire`` fixture and ``wire_guard`` the check of a class's tests against its pin.
"""
