"""``headerlock review``: pending changes (``<name>.yaml.new``) accepted or rejected.

``find`` says where a project's recordings and fixtures are (the
``headerlock_recordings`` and ``headerlock_fixtures`` ini options, or
``--recordings DIR``) and lists the pending files below them; ``apply`` shows one as
a readable diff and accepts it (atomically, as an update writes; a stale or partial
one is refused, and a scenario's recording must pass the guard ``headerlock record``
runs) or rejects it; ``terminal`` walks them one by one.
"""
