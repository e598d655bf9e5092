"""Demo apps that embed the spine: a stdio chat and an ACP server."""
