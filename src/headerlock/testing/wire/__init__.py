"""Wire capture: record, replay and pin the model requests any agent sends over HTTP.

``lock()`` patches the ``httpx2``/``httpx`` transports for the duration of a
block; ``apis`` splits each request into config, system, tools and messages;
``compare`` explains a difference; ``script`` answers as a scripted model.
Nothing here imports ``httpx2``, ``httpx`` or an SDK until a lock is opened.
"""
