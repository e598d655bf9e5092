"""Wire capture: record, replay and pin the model requests any agent sends over HTTP.

- ``lock``: the public context manager; ``run``: what a lock saw (``WireRun``);
  ``session`` decides each request of one lock (replay, record, scripted record),
  ``matching`` finds its recorded exchange by content, ``origins`` tells which lock
  owns the running thread or task, ``seal`` refuses other connections;
- ``clients/``: one module per HTTP library (httpx2/httpx, aiohttp, urllib3) behind
  one interception core; ``apis/``: one module per model API (OpenAI chat, OpenAI
  responses, Anthropic messages, Gemini) and the registry the rest asks;
- ``entry``, ``memo``, ``spans``, ``ignore``: how a request becomes a recording entry
  (scrubbed once, raw JSON spans, ignore rules); ``script``, ``script_match``: the
  scripted model; ``compare``, ``explain``: readable differences; ``order``,
  ``recipes``: the order check for any agent; ``cache/``: the prompt-cache report;
  ``driver``, ``agent_entry``: ``app: wire`` fixtures.

Nothing here imports ``httpx2``, ``httpx``, ``aiohttp`` or an SDK until a lock is opened.
"""
