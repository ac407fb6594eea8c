"""`python -m sidecar.prefix_share`: how much of each summary request is the preceding chat request's prefix.

Drives the real sidecar process over stdio against the embedded fake Gemini: a working session that reads workspace
files (tools offered, as in an editor), a compaction, then the share of each summary pass's prompt (system
instruction, tools, contents, in the order the model reads them) that is a byte-identical prefix of the request
before it (pass 1: the last chat request; pass 2: pass 1).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from sidecar.core.request_prefix import prefix_share, prompt_bytes
from sidecar.protocol import methods
from sidecar.rpc.client import RpcClient, sidecar_command

FILES = 6
LINES = 300
PADDING = " ".join(f"word{i}" for i in range(150))


async def measure(turns: int = FILES) -> list[tuple[str, float, int]]:
    """(which request, share, its prompt bytes) for each summary request of one compaction."""
    from sidecar.fakegemini import FakeGemini

    root = Path(os.path.realpath(tempfile.mkdtemp(prefix="sidecar-prefix-ws-")))
    home = tempfile.mkdtemp(prefix="sidecar-prefix-home-")
    fake = FakeGemini().start()
    client = RpcClient(sidecar_command("--log-level", "WARNING"), env={**os.environ, "SIDECAR_HOME": home})
    client.on(methods.CONFIRM_TOOL_CALL.name, lambda _params: {"decision": "allow"})
    client.on("window/workDoneProgress/create", lambda _params: None)
    try:
        await client.start()
        options = {"baseUrl": fake.url, "apiKey": "measure-key", "tokenLimit": 1_000_000, "backgroundCompaction": False}
        await client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "capabilities": {},
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
                "initializationOptions": options,
            },
        )
        client.notify("initialized", {})
        for i in range(turns):
            (root / f"mod_{i}.py").write_text("".join(f"def f{i}_{n}():\n    return {n}\n" for n in range(LINES)))
            call = {"path": f"mod_{i}.py"}
            fake.script([{"kind": "function_call", "name": "read_file", "args": call, "id": f"r{i}", "match": "chat"}])
            await client.request(methods.SEND_MESSAGE.name, {"text": f"Look at mod_{i}.py please. {PADDING}"})
        await client.request(methods.COMPRESS.name, {})
    finally:
        await client.stop()
        fake.stop()
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
    requests: list[Any] = [r for r in fake.requests() if r.kind in ("stream", "generate")]
    found = []
    for index, record in enumerate(requests):
        if record.summary and index > 0:
            previous = requests[index - 1]
            label = "pass 2 vs pass 1" if previous.summary else "pass 1 vs the last chat request"
            found.append((label, prefix_share(record.body, previous.body), len(prompt_bytes(record.body))))
    return found


def main() -> int:
    """Print each summary request's share; 1 when no compaction asked for a summary."""
    shares = asyncio.run(measure())
    if not shares:
        print("no summary request was made", file=sys.stderr)
        return 1
    for label, share, size in shares:
        print(f"{label}: {share:.1%} of {size:,} prompt bytes is a byte-identical prefix")
    return 0


if __name__ == "__main__":
    sys.exit(main())
