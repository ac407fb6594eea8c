"""Compaction quality, measured: planted facts through rounds of compaction (`make eval`, docs/compaction.md)."""
