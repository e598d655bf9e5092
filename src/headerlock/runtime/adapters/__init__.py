"""Model adapters: scripted replies, recorded replies, an OpenAI-compatible endpoint."""
