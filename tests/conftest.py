"""Shared test setup: the Hypothesis profile for CI and small helpers."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis._settings import is_in_ci

# Extend Hypothesis's built-in "ci" profile (derandomized, no database) with a
# bound that keeps the suite fast; it loads automatically when CI is set.
settings.register_profile(
    "ci",
    settings.get_profile("ci"),
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if is_in_ci() else "dev"))
