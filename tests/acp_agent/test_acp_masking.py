"""ACP: masked old tool outputs are said to the client once per masking, as an agent message."""

from __future__ import annotations

import os
from typing import Any

from tests.acp_agent.harness import Agent

MASKING = {"protectionTokens": 2_000, "minPrunableTokens": 1_500, "paybackRequests": 0}


async def test_the_masking_notice_reaches_the_client(fake: Any, home: str, workspace: str) -> None:
    agent = await Agent(fake.url, home, settings={"toolOutputMasking": MASKING, "tokenLimit": 1_000_000}).start()
    try:
        await agent.initialize()
        sid = await agent.new_session(workspace)
        for i in range(5):  # about 1,000 tokens each
            with open(os.path.join(workspace, f"f{i}.txt"), "w") as handle:
                handle.write("".join(f"file {i} line {k}\n" for k in range(280)))
        fake.script(
            [
                {"kind": "function_call", "match": "chat", "name": "read_file", "args": {"path": f"f{i}.txt"}}
                for i in range(5)
            ]
        )
        agent.client.decisions = ["allow"] * 5
        assert await agent.prompt(sid, "read the five files") == "end_turn"
        said = agent.client.text()
        assert said.count("Masked 2 old tool outputs (") == 1, said
        assert "the model can read them back" in said
        sent = [r for r in fake.requests() if r.kind == "stream"][-1].body["contents"]
        assert "<tool_output_masked>" in str(sent), "the request itself is masked"
    finally:
        await agent.close()
