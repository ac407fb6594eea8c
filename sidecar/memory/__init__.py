"""Context-file memory (GEMINI.md, AGENTS.md): discovery, @path imports, the service, the session context turn."""
