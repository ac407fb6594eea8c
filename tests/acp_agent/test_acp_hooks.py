"""Hooks in `sidecar acp` (docs/hooks.md): the user file's BeforeAgent hooks, through the editors' service."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.acp_agent.harness import Agent


def chats(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary]


GATE = """import json, sys
event = json.load(sys.stdin)
if "prod" in event["prompt"]:
    print(json.dumps({"decision": "block", "reason": "no deploys on Friday"}))
else:
    print(json.dumps({"additionalContext": "on call: Ada"}))
"""


async def test_a_user_file_before_agent_hook_adds_context_or_ends_the_prompt_in_words(
    fake: Any, home: str, workspace: str, tmp_path: Path
) -> None:
    folder = tmp_path
    (folder / "gate.py").write_text(GATE)
    ran = Path(workspace) / "workspace-hook-ran"
    # a workspace file's hooks never run in ACP (no trust to ask for): this one must not
    os.makedirs(os.path.join(workspace, ".sidecar"))
    with open(os.path.join(workspace, ".sidecar", "settings.json"), "w") as handle:
        json.dump({"hooks": {"BeforeAgent": [{"command": f"touch {ran}"}]}}, handle)
    hooks = {"BeforeAgent": [{"command": f"{sys.executable} {folder / 'gate.py'}"}]}
    agent = await Agent(fake.url, home, settings={"hooks": hooks}).start()
    try:
        await agent.initialize()
        sid = await agent.new_session(workspace)
        assert await agent.prompt(sid, "who is on call?") == "end_turn"
        parts = chats(fake)[-1].body["contents"][-1]["parts"]
        assert parts == [{"text": "who is on call?"}, {"text": "<hook_context>on call: Ada</hook_context>"}]

        sent = len(chats(fake))
        start = len(agent.client.updates(sid))
        assert await agent.prompt(sid, "deploy to prod") == "end_turn"
        assert len(chats(fake)) == sent, "a blocked prompt never reaches the model"
        said = "".join(
            u["content"].get("text", "")
            for u in agent.client.updates(sid)[start:]
            if u["sessionUpdate"] == "agent_message_chunk"
        )
        assert "Your message was not sent: a BeforeAgent hook blocked it: no deploys on Friday" in said
        assert not ran.exists()
    finally:
        await agent.close()
