"""Hooks: the user's commands run at points of a session (PreCompress, BeforeAgent, SessionStart; docs/hooks.md)."""
