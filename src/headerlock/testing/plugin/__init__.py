"""The pytest plugin. ``hooks`` is the ``pytest11`` entry module and the top of this room:
it imports its helpers, never the reverse; ``state`` (stash keys) imports nothing of it.

``nodes`` are the collection nodes, ``items`` what they run, ``updates``/``ledger``/
``unused``/``names`` the transactional recording books, ``wire_fixture`` the
``headerlock_wire`` fixture, ``wire_classes`` its tests' header classes and
``wire_guard`` the check of a class's tests against its pin.
"""
