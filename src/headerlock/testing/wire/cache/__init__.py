"""The cache report: where each recorded session's prompt cache breaks, why, and what
it costs, offline and deterministic.

``prefix`` renders a request's cacheable prefix as its provider does (the API
module's ``CacheRules``), ``volatile`` recognises values that change every request,
``breaks`` finds the first break between a request and the previous one of its
session (one API, one model), ``breakpoints`` applies the length and breakpoint rules,
``findings`` holds the codes and their documentation, ``report`` builds the report
(and ``assert_cache_stable``), ``text`` and ``html`` render it. Public names:
``headerlock.wire.cache_report``, ``assert_cache_stable``, ``CacheReport``,
``CacheFinding``.
"""
