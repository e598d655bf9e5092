"""``headerlock review``: pending changes (``<name>.yaml.new``) accepted or rejected.

``find`` says where a project's recordings are (the ``headerlock_recordings`` ini
option, or ``--recordings DIR``) and lists the pending files below them; ``apply``
shows one as a readable diff and accepts it (through the guarded, atomic write of an
update; a stale one is refused) or rejects it; ``terminal`` walks them one by one.
"""
