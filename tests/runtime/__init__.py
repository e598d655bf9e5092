"""Tests of ``headerlock.runtime``: the plugin host, tools, headers, the loop, adapters."""
