"""The cache report: where each recorded session's prompt cache breaks, why, and what
it costs, offline and deterministic.

``prefix`` renders a request's cacheable prefix as its provider does (the API module's
``CacheRules``; ``from_entry`` is the one place a recording entry's header is read),
``turns`` reads an assistant turn from a recorded response and from a sent message,
``simulate`` is the provider's cache (who continues whom, and a prefix index of what
each earlier request sent and wrote), ``volatile`` recognises values that change every
request, ``breaks`` finds the first break between a request and the one it continues,
``breakpoints`` applies the length and breakpoint rules, ``findings`` is the registry of
codes (each with its meaning, provider rule, APIs and check), ``model`` holds the
report's values, ``report`` builds them (and ``assert_cache_stable``), ``text`` and
``html`` render them (functions of the values: no import cycle). Public names:
``headerlock.wire.cache_report``, ``assert_cache_stable``, ``CacheReport``,
``CacheFinding``.
"""
