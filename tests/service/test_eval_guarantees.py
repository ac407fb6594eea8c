"""A small compaction eval on the real services and the fake Gemini: what is ours to guarantee survives every round."""

from __future__ import annotations

from typing import Any

from eval.facts import GUARANTEED
from eval.runner import EvalClient, run_session
from eval.strategies import STRATEGIES
from sidecar.fakegemini import FakeGemini
from sidecar.gemini.client import ClientConfig, ModelClient


async def test_pins_memory_instructions_and_the_todo_list_reach_the_model_after_rounds_1_and_3(
    fake: FakeGemini,
) -> None:
    client = ModelClient(
        ClientConfig(
            api_key="test-key", base_url=fake.url, timeout_ms=120_000, retry_attempts=0, retry_initial_delay_ms=1
        )
    )

    async def source() -> ModelClient:
        return client

    def at_the_fake(_client: EvalClient) -> dict[str, Any]:
        body: dict[str, Any] = [r for r in fake.requests() if r.kind == "stream" and not r.summary][-1].body
        return body

    try:
        result = await run_session(1, STRATEGIES[0], 3, source, at_the_fake)
    finally:
        await client.aclose()
    assert [r.status for r in result.rounds] == ["COMPRESSED"] * 3
    ours = [f for f in result.facts if f.type in GUARANTEED]
    assert {f.type for f in ours} == {"pin", "memory_instruction", "todo"}
    for number in (1, 3):
        verdicts = result.rounds[number - 1].verdicts
        assert {f.id: verdicts[f.id] for f in ours} == {f.id: "verbatim" for f in ours}, f"round {number}"
    # The summaries really were made and probed: some summarised fact was lost by round 3 on the fake.
    assert "lost" in result.rounds[2].verdicts.values()
    assert len([r for r in fake.requests() if r.summary]) == 6  # two passes per compaction
