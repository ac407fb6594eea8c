"""One prompt through acpx, a third-party headless ACP client (npm; `make acpx-install` puts it in .cache/acpx)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.e2e.harness import CANARY_KEY, server_env

REPO = Path(__file__).resolve().parents[2]
ACPX = os.environ.get("SIDECAR_ACPX") or str(REPO / ".cache" / "acpx" / "bin" / "acpx")


async def test_one_prompt_with_a_tool_call_through_acpx(fake: Any, home: str, workspace: str) -> None:
    assert os.access(ACPX, os.X_OK), f"acpx is not installed at {ACPX}: run `make acpx-install`"
    fake.script(
        [
            {
                "kind": "function_call",
                "match": "chat",
                "name": "write_file",
                "args": {"path": "from-acpx.txt", "content": "written through acpx\n"},
            }
        ]
    )
    with tempfile.TemporaryDirectory(prefix="acpx-home-") as acpx_home:
        env = server_env(
            HOME=acpx_home,
            SIDECAR_HOME=home,
            GEMINI_API_KEY=CANARY_KEY,
            GOOGLE_GEMINI_BASE_URL=fake.url,
            SIDECAR_SETTINGS=os.path.join(acpx_home, "none.json"),
        )
        agent = f"{sys.executable} -m sidecar acp"
        proc = await asyncio.create_subprocess_exec(
            ACPX,
            "--agent",
            agent,
            "--cwd",
            workspace,
            "--format",
            "json",
            "--approve-all",
            "--timeout",
            "60",
            "exec",
            "please write the file",
            cwd=workspace,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode(errors="replace")[-2000:]
    messages = [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
    updates = [m["params"]["update"] for m in messages if m.get("method") == "session/update"]
    kinds = [u["sessionUpdate"] for u in updates]
    assert "tool_call" in kinds and "usage_update" in kinds
    said = "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")
    assert said.startswith("Fake Gemini reply #1: thanks, I received the tool result: write_file")
    assert any(m.get("result") == {"stopReason": "end_turn"} for m in messages)
    assert any(m.get("method") == "fs/write_text_file" for m in messages), "acpx offers fs/*: the edit goes through it"
    with open(os.path.join(workspace, "from-acpx.txt")) as handle:
        assert handle.read() == "written through acpx\n"
