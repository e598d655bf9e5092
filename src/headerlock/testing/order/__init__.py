"""Order and flakes: registration order and hash seeds must never change recorded bytes.

Load schedules and Hypothesis strategies, the plugin-order check of headerlock apps and
scenarios, and ``headerlock flakes`` (fresh processes per hash seed). Imports
``headerlock.testing.scenario``; the order check for any agent lives in ``wire.order``.
"""
