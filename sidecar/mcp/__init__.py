"""MCP servers: their settings, processes, tools for the model and results, with the official `mcp` SDK."""
