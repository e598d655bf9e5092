"""Bundled demo: tool plugins and scenarios."""
