"""Wire capture: record, replay and pin the model requests any agent sends over HTTP.

``lock()`` patches the ``httpx2``/``httpx`` transports for the duration of a
block; ``apis`` holds one module per model API (openai chat, openai responses,
anthropic messages, gemini) and the registry the rest asks; ``spans`` finds the
raw bytes of JSON values; ``compare`` explains a difference; ``script`` answers
as a scripted model.
Nothing here imports ``httpx2``, ``httpx`` or an SDK until a lock is opened.
"""
