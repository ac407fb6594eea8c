"""Over ACP: the summary request is the chat's own request plus one turn, and the files the summarised part worked on
come back after the compaction (the same compactor as the editor protocol)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sidecar.core.request_prefix import prefix_share
from sidecar.core.working_set import reattached_files
from tests.acp_agent.harness import Agent

PADDING = " ".join(f"word{i}" for i in range(150))


def chats(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary]


async def test_compress_asks_in_the_chat_request_and_brings_the_files_back(
    agent: Agent, fake: Any, workspace: str
) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    for name in ("alpha.py", "beta.py"):
        (Path(workspace) / name).write_text("".join(f"{name[:4].upper()}_{n} = {n}\n" for n in range(200)))
        fake.script([{"kind": "function_call", "name": "read_file", "args": {"path": name}, "match": "chat"}])
        assert await agent.prompt(sid, f"Read {name}. {PADDING}") == "end_turn"
    # enough talk that the compaction frees more than twice the files' size (they take at most half of what it frees)
    for i in range(12):
        assert await agent.prompt(sid, f"Go on {i}. {PADDING}") == "end_turn"
    chat = chats(fake)[-1]
    assert await agent.prompt(sid, "/compress") == "end_turn"
    first = next(r for r in fake.requests() if r.summary)
    assert first.body["systemInstruction"] == chat.body["systemInstruction"]
    assert first.body["tools"] == chat.body["tools"]
    shared = min(len(first.body["contents"]) - 1, len(chat.body["contents"]))
    assert first.body["contents"][:shared] == chat.body["contents"][:shared]
    assert prefix_share(first.body, chat.body) > 0.8  # the appended compression prompt is large for so short a chat
    assert await agent.prompt(sid, "what next?") == "end_turn"
    snapshot_turn = next(c for c in chats(fake)[-1].body["contents"] if "<state_snapshot>" in str(c["parts"][0]))
    attached = snapshot_turn["parts"][1]["text"]
    assert reattached_files(attached) == ["beta.py", "alpha.py"]
    assert "BETA_199 = 199" in attached and "ALPH_0 = 0" in attached
