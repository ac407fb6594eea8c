"""Every request whose usage the API reports is recorded with what the sidecar had estimated for that request."""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.core.recording import UsageRecord
from sidecar.core.request_overhead import request_overhead_tokens
from sidecar.core.tokens import estimate_history_tokens
from sidecar.recording.stats import read_session
from tests.service.conftest import Rig


def _usage_records(rig: Rig) -> list[UsageRecord]:
    path = rig.live.recorder.path
    assert path is not None
    decoder = msgspec.json.Decoder(UsageRecord)
    return [decoder.decode(line) for line in path.read_bytes().splitlines() if b'"type":"usage"' in line]


def _estimate_of(body: dict[str, Any]) -> int:
    """The reference's estimate of a request as the fake received it: contents + system instruction + tools."""
    system = body.get("systemInstruction")
    text = "".join(p.get("text", "") for p in system["parts"]) if system else None
    return estimate_history_tokens(body["contents"]) + request_overhead_tokens(text or None, body.get("tools"))


async def test_each_turn_records_its_estimate_next_to_the_api_count(rig: Rig) -> None:
    await rig.chat.send_message("first message, about src/app.py")
    await rig.chat.send_message("second message " + "词" * 200)  # non-ASCII: the estimate and the count part ways
    rig.live.recorder.sync()
    chats = [r for r in rig.fake.requests() if r.kind == "stream"]
    api = [u for u in _usage_records(rig) if u.source == "api"]
    assert len(api) == len(chats) == 2
    for usage, request in zip(api, chats, strict=True):
        assert usage.estimated_token_count == _estimate_of(request.body)
        assert usage.prompt_token_count > 0 and usage.estimated_token_count > 0
    pairs = read_session(rig.live.recorder.path).pairs  # type: ignore[arg-type]
    assert [(p.api, p.estimated) for p in pairs] == [(u.prompt_token_count, u.estimated_token_count) for u in api]
