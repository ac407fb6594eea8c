"""Checkpoints: the files the agent changed, saved so a rewind can put them back (docs/checkpoints.md)."""
