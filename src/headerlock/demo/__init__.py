"""The bundled demo: tool plugins and listeners, and the stdio and ACP demo
apps, which plug into the testing layer as ``app:`` drivers (entry points in
the ``headerlock.drivers`` group). May import ``headerlock.runtime`` and
``headerlock.formats``, never ``headerlock.testing``.
"""
