"""One chat turn with an installed sidecar against its embedded fake Gemini (run by `make release-check`).

    <venv>/bin/python tools/release_turn.py <venv>/bin/sidecar VERSION

Run with the installed package's Python: the JSON-RPC client is the package's own (sidecar.rpc.client), so this
checks the installed wheel, not the checkout. No key and no base URL: the server must answer from the embedded fake
and say so in its usage. Exit 0 when the turn streamed a reply and the usage arrived; else 1, saying what is missing.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from sidecar.rpc.client import RpcClient, poll


async def turn(sidecar: str, version: str, workspace: Path) -> list[str]:
    problems: list[str] = []
    client = RpcClient([sidecar], env={**os.environ})
    await client.start()
    try:
        init: dict[str, Any] = await client.request(
            "initialize", {"processId": os.getpid(), "rootUri": workspace.as_uri(), "capabilities": {}}, timeout=60
        )
        client.notify("initialized", {})
        info = init.get("serverInfo") or {}
        if info.get("version") != version:
            problems.append(f"serverInfo says {info!r}, the release is {version}")
        if not init.get("capabilities", {}).get("experimental", {}).get("sidecar", {}).get("protocolVersion"):
            problems.append(f"initialize reports no protocol version: {init.get('capabilities')!r}")
        result = await client.request("sidecar/sendMessage", {"text": "Hello from the release check."}, timeout=60)
        deltas = "".join(d["text"] for d in client.notes["sidecar/messageDelta"] if d.get("turnId") == result["turnId"])
        if not result.get("text") or deltas != result["text"]:
            problems.append(f"the reply did not stream: {result!r}, deltas {deltas!r}")
        usage = await poll(
            lambda: next((u for u in client.notes["sidecar/tokenUsage"] if u.get("source") == "api"), None),
            30,
            lambda: f"a sidecar/tokenUsage counted by the model; got {client.notes['sidecar/tokenUsage']!r}",
        )
        if "fake" not in usage.get("backend", ""):
            problems.append(f"with no key and no base URL the backend should be the embedded fake: {usage!r}")
        print(
            f"release-check: one turn with {sidecar} ({usage['backend']}): {len(result['text'])} characters back, "
            f"{usage['promptTokenCount']} prompt tokens ({usage['percentUsed']}%)"
        )
    finally:
        await client.stop()
    return problems


def main() -> int:
    sidecar, version = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="sidecar-release-ws-") as ws:
        problems = asyncio.run(turn(sidecar, version, Path(ws)))
    for p in problems:
        print(f"release-check: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
