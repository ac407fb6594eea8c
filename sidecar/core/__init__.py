"""Pure conversation logic: content model, tokens, compaction, IDE context, recording model (stdlib + msgspec only)."""
