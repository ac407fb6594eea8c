"""Wire types of the memory methods: sidecar/getMemory, refreshMemory, addMemory and the memoryChanged notification."""

from __future__ import annotations

from typing import Literal

import msgspec

#: Where a loaded context file comes from: ~/.gemini, the project (workspace folder up to its root), or a subfolder
#: delivered just in time with a tool result.
MemoryScope = Literal["global", "project", "subdirectory"]
#: Where sidecar/addMemory writes: ~/.gemini/GEMINI.md or the project root's GEMINI.md.
AddMemoryScope = Literal["global", "project"]


class MemoryFile(msgspec.Struct, rename="camel", kw_only=True):
    """One context file the model has: its absolute path, where it comes from, its size in (estimated) tokens."""

    path: str
    scope: MemoryScope
    tokens: int


class MemoryInfo(msgspec.Struct, rename="camel", kw_only=True, omit_defaults=True):
    """Every context file loaded, in the order the model sees them, and their wrapped text.

    `tokens` is the sum of the files' tokens (the tooltip's "Memory: N files (X tokens)"). `skippedProjectFiles` counts
    the project files not loaded, `skippedReason` says why (an untrusted workspace)."""

    files: list[MemoryFile]
    text: str
    tokens: int
    skipped_project_files: int
    skipped_reason: str | None = None


class AddMemoryParams(msgspec.Struct, rename="camel", kw_only=True):
    """Params of sidecar/addMemory: one fact, appended as `- <text>` under `## Gemini Added Memories`."""

    text: str
    scope: AddMemoryScope = "global"
