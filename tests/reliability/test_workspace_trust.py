"""Nothing from the workspace reaches the model before its trust is known, and a trust withdrawn while the context
files are being read is honoured: that read is discarded (docs/security.md, docs/memory.md)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from watchdog.events import FileOpenedEvent, FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from tests.reliability.checks import chat_requests
from tests.reliability.conftest import Spawn
from tests.waiting import until

PLANTED = "PLANTED-PROJECT-INSTRUCTION"


def slow_project_memory(workspace: Path, fan_out: int = 8, depth: int = 5) -> None:
    """A GEMINI.md whose imports fan out (`fan_out` imports per level, `depth` levels): slow enough to read that
    an editor's trust notice arrives while it is being read."""
    (workspace / ".git").mkdir()
    for level in range(1, depth + 1):
        body = "leaf text\n" if level == depth else " ".join([f"@level{level + 1}.md"] * fan_out) + "\n"
        (workspace / f"level{level}.md").write_text(body)
    (workspace / "GEMINI.md").write_text(f"{PLANTED}\n" + " ".join(["@level1.md"] * fan_out) + "\n")


@asynccontextmanager
async def opened(path: Path) -> AsyncIterator[asyncio.Event]:
    """An event set once some process opens `path` (inotify): here, the sidecar starting to read an import."""
    loop = asyncio.get_running_loop()
    seen = asyncio.Event()

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            if isinstance(event, FileOpenedEvent) and Path(str(event.src_path)) == path:
                loop.call_soon_threadsafe(seen.set)

    observer = Observer()
    observer.schedule(Handler(), str(path.parent))
    observer.start()
    try:
        yield seen
    finally:
        observer.stop()
        observer.join()


def sent_to_model(fake: Any) -> str:
    return json.dumps([r.body for r in chat_requests(fake)])


async def test_project_memory_read_while_trust_is_withdrawn_never_reaches_the_model(
    spawn: Spawn, fake: Any, dirs: tuple[Path, Path]
) -> None:
    """The first message waits for the context files; the editor's notice that the workspace is not trusted arrives
    while they are being read (the editor has not said anything about trust before: unknown counts as trusted)."""
    _, workspace = dirs
    slow_project_memory(workspace)
    side = await spawn(initialize=False)
    await side.client.request("initialize", {
        "processId": None, "capabilities": {}, "rootUri": f"file://{workspace}",
        "workspaceFolders": [{"uri": f"file://{workspace}", "name": "ws"}],
        "initializationOptions": {"baseUrl": fake.url, "apiKey": "test-key", "retryInitialDelayMs": 10},
    }, timeout=30)  # no `initialized` yet: the only load is the one the message starts
    async with opened(workspace / "level1.md") as reading:
        turn = side.request_now("sidecar/sendMessage", {"text": "hello"})
        # the first import is read once the project's GEMINI.md was found and judged trusted; the fan-out keeps
        # the read going while the editor's notice arrives
        await asyncio.wait_for(reading.wait(), timeout=60)
        side.notify("sidecar/ideContext", {"openFiles": [], "isTrusted": False})
    await asyncio.wait_for(turn, timeout=60)
    memory = await side.request("sidecar/getMemory", {})
    assert memory["skippedProjectFiles"] == 1 and not any(f["scope"] == "project" for f in memory["files"])
    assert PLANTED not in sent_to_model(fake), "context files read before the trust was withdrawn reached the model"


async def test_a_trust_sent_with_initialize_holds_before_any_other_message(
    spawn: Spawn, fake: Any, dirs: tuple[Path, Path]
) -> None:
    _, workspace = dirs
    slow_project_memory(workspace, fan_out=1)
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
