"""Model adapters: scripted, replay and OpenAI-compatible (live)."""
