"""The compaction flow around the pure rules in sidecar.core: summarize, verify, hooks, saved tool outputs."""
