"""Nothing from the workspace reaches the model before its trust is known (docs/security.md, docs/memory.md). A trust
withdrawn while the context files are being read: tests/unit/memory/test_memory_service.py, where the notice arrives
from inside the read (over the wire the read of a budgeted import graph is too quick to overlap for certain)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.reliability.checks import chat_requests
from tests.reliability.conftest import Spawn
from tests.waiting import until

PLANTED = "PLANTED-PROJECT-INSTRUCTION"


def project_memory(workspace: Path, fan_out: int = 8, depth: int = 5) -> None:
    """A project GEMINI.md with a planted instruction and a chain of imports (`fan_out` imports per level)."""
    (workspace / ".git").mkdir()
    for level in range(1, depth + 1):
        body = "leaf text\n" if level == depth else " ".join([f"@level{level + 1}.md"] * fan_out) + "\n"
        (workspace / f"level{level}.md").write_text(body)
    (workspace / "GEMINI.md").write_text(f"{PLANTED}\n" + " ".join(["@level1.md"] * fan_out) + "\n")


def sent_to_model(fake: Any) -> str:
    return json.dumps([r.body for r in chat_requests(fake)])


async def test_a_trust_sent_with_initialize_holds_before_any_other_message(
    spawn: Spawn, fake: Any, dirs: tuple[Path, Path]
) -> None:
    _, workspace = dirs
    project_memory(workspace, fan_out=1)
    side = await spawn(isTrusted=False)
    await side.say("hello")
    assert PLANTED not in sent_to_model(fake)
    changes = side.notes("sidecar/memoryChanged")
    assert changes and all(not any(f["scope"] == "project" for f in c["files"]) for c in changes)
    side.notify("sidecar/ideContext", {"openFiles": [], "isTrusted": True})  # the user trusts it: now it loads

    async def loaded() -> bool:
        memory = await side.request("sidecar/getMemory", {})
        return any(f["scope"] == "project" for f in memory["files"])

    await until(loaded, "the project memory once the workspace is trusted", timeout=30)
    await side.say("again")
    assert PLANTED in sent_to_model(fake), "a trusted workspace's memory is used (the checks above mean something)"
