"""Masking old tool outputs before each request: the reference's rules, exemptions, the batch rule, against the fake."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from sidecar.config.settings import ToolOutputMasking
from sidecar.core.history import Content, FunctionCall, FunctionResponse, Part, text_content
from sidecar.core.masking import MASK_TAG, preview_of, shell_preview
from tests.service.conftest import Rig, conversation, tool_exchange

#: Small thresholds, the reference's rules: 2,000 tokens protected, mask from 1,500 maskable, no cache rule.
SMALL = ToolOutputMasking(protection_tokens=2_000, min_prunable_tokens=1_500, payback_requests=0)


def outputs(n: int, chars: int = 4_000, name: str = "read_file") -> list[Content]:
    """n tool exchanges, each output `chars` characters (about chars/4 tokens), numbered in its text."""
    history: list[Content] = []
    for i in range(n):
        body = f"output-{i}:" + "".join(f"line {k} of output {i}\n" for k in range(chars // 20))
        history += tool_exchange(name, body[:chars], call_id=f"c{i}")
    return history


def chat_requests(rig: Rig) -> list[Any]:
    return [r for r in rig.fake.requests() if not r.summary and r.kind in ("stream", "generate")]


def responses(request: Any) -> list[dict[str, Any]]:
    return [
        p["functionResponse"] for c in request.body["contents"] for p in c.get("parts", []) if "functionResponse" in p
    ]


def is_masked(response: dict[str, Any]) -> bool:
    return f"<{MASK_TAG}>" in str(response["response"].get("output", ""))


async def send(rig: Rig, text: str = "go on") -> None:
    await rig.chat.send_message(text)


async def test_old_outputs_are_masked_and_the_newest_window_is_kept_whole(rig: Rig) -> None:
    rig.set(token_limit=1_000_000, tool_output_masking=SMALL)
    rig.load(outputs(5), prompt_tokens=6_000)
    await send(rig)
    sent = responses(chat_requests(rig)[-1])
    # newest first: output 4 (≈1,005 tokens) is inside the 2,000-token window; output 3 crosses it and is maskable
    assert [is_masked(r) for r in sent] == [True, True, True, True, False]
    snippet = sent[0]["response"]["output"]
    path = snippet.split("Full output available at: ")[1].split("\n")[0]
    assert Path(path).read_text().startswith("output-0:line 0 of output 0\n"), "the full output is saved as text"
    assert "read_file" in snippet
    (notice,) = rig.rec.masked_notices
    assert notice.masked_count == 4 and notice.tokens_saved > 3_000
    assert notice.message.startswith("Masked 4 old tool outputs (") and "can read them back" in notice.message


async def test_nothing_is_masked_below_the_minimum_maskable(rig: Rig) -> None:
    rig.set(
        token_limit=1_000_000,
        tool_output_masking=ToolOutputMasking(protection_tokens=2_000, min_prunable_tokens=5_000, payback_requests=0),
    )
    rig.load(outputs(5), prompt_tokens=6_000)  # ≈3,000 maskable < 5,000
    await send(rig)
    assert not any(is_masked(r) for r in responses(chat_requests(rig)[-1]))
    assert rig.rec.masked_notices == []


async def test_masking_off_sends_every_output_whole(rig: Rig) -> None:
    rig.set(token_limit=1_000_000, tool_output_masking=ToolOutputMasking(enabled=False))
    rig.load(outputs(30), prompt_tokens=40_000)
    await send(rig)
    assert not any(is_masked(r) for r in responses(chat_requests(rig)[-1]))


async def test_an_exempt_tool_and_an_exempt_mcp_server_are_never_masked(rig: Rig) -> None:
    rig.set(
        token_limit=1_000_000,
        tool_output_masking=ToolOutputMasking(
            protection_tokens=2_000,
            min_prunable_tokens=1_500,
            payback_requests=0,
            exempt_tools=["save_memory"],
            exempt_mcp_servers=["notes"],
        ),
    )
    history = outputs(1, name="save_memory") + outputs(1, name="mcp_notes_recall") + outputs(1, name="mcp_other_get")
    rig.load(history + outputs(4), prompt_tokens=8_000)
    await send(rig)
    by_name = {r["name"]: is_masked(r) for r in responses(chat_requests(rig)[-1])[:3]}
    assert by_name == {"save_memory": False, "mcp_notes_recall": False, "mcp_other_get": True}


async def test_a_masking_changes_the_request_prefix_once_not_on_every_request(rig: Rig) -> None:
    rig.set(token_limit=1_000_000, tool_output_masking=SMALL)
    rig.load(outputs(5), prompt_tokens=6_000)
    conv = rig.live.conversation
    for turn in range(6):
        await send(rig, f"turn {turn}")
        for content in outputs(1, chars=400):  # a small tool exchange per turn: far below another batch
            conv.append(content)
    requests = chat_requests(rig)
    kept = [
        later.body["contents"][: len(earlier.body["contents"])] == earlier.body["contents"]
        for earlier, later in itertools.pairwise(requests)
    ]
    assert kept == [True] * 5, "after the first masking the prefix stays byte for byte"
    assert len(rig.rec.masked_notices) == 1


async def test_the_cache_rule_waits_for_a_batch_that_repays_the_rewrite(rig: Rig) -> None:
    # 10,000 tokens of chat among the outputs: masking ≈4,000 tokens (the crossing output included) rewrites ≈11,000
    # (billed 3/4 more once) and saves ≈1,000 a request (a quarter of 4,000): 4 requests do not repay it, 20 do
    rig.set(
        token_limit=1_000_000,
        tool_output_masking=ToolOutputMasking(protection_tokens=2_000, min_prunable_tokens=1_500, payback_requests=4),
    )
    chat = [text_content("user", "x " * 20_000), text_content("model", "ok")]
    rig.load(outputs(3) + chat + outputs(2), prompt_tokens=10_000)
    await send(rig)
    assert not any(is_masked(r) for r in responses(chat_requests(rig)[-1]))
    rig.set(
        token_limit=1_000_000,
        tool_output_masking=ToolOutputMasking(protection_tokens=2_000, min_prunable_tokens=1_500, payback_requests=20),
    )
    await send(rig)
    assert [is_masked(r) for r in responses(chat_requests(rig)[-1])] == [True, True, True, True, False]


def test_the_shell_preview_keeps_the_exit_code_and_the_first_and_last_ten_lines() -> None:
    body = "\n".join(f"build line {i}" for i in range(100))
    ours = f"Command: make\nDirectory: .\nExit code: 2\nOutput:\n{body}"
    preview = shell_preview({"output": ours})
    assert preview.startswith("Command: make\nDirectory: .\nExit code: 2\nOutput:\nbuild line 0\n")
    assert "build line 9\n\n... [80 lines omitted] ...\n\nbuild line 90" in preview
    assert preview.endswith("build line 99") and "build line 50" not in preview
    # the reference's own format (its shell tool's sections): the same rule, the error kept whole
    theirs = f"Output: {body}\nError: boom\nExit Code: 1"
    assert shell_preview({"output": theirs}) == (
        "Output: "
        + "\n".join(f"build line {i}" for i in range(10))
        + "\n\n... [80 lines omitted] ...\n\n"
        + "\n".join(f"build line {i}" for i in range(90, 100))
        + "\nError: boom\nExit Code: 1"
    )
    assert shell_preview({"output": "short", "exitCode": 3, "error": "bad"}) == "short\n[Exit Code: 3]\n[Error: bad]"


def test_other_previews_keep_the_first_and_last_250_characters() -> None:
    response = {"output": "a" * 300 + "b" * 300}
    preview = preview_of("read_file", response)
    head, tail = preview.split("\n... [TRUNCATED] ...\n")
    assert len(head) == len(tail) == 250
    assert head.startswith('{\n  "output": "aaa') and tail.endswith('bbb"\n}')
    assert preview_of("read_file", {"output": "small"}) == '{\n  "output": "small"\n}'


def test_a_masked_output_is_never_masked_again() -> None:
    from sidecar.core.masking import masked_part, masked_snippet, tool_outputs_of

    part = Part(function_response=FunctionResponse(name="read_file", id="c1", response={"output": "x" * 9_000}))
    masked = masked_part(part, masked_snippet("preview", "/tmp/out.txt"))
    assert tool_outputs_of(0, Content(role="user", parts=[part]))[0].tokens > 2_000
    assert tool_outputs_of(0, Content(role="user", parts=[masked])) == ()
    assert masked.function_response is not None and masked.function_response.id == "c1"
    call = Content(role="model", parts=[Part(function_call=FunctionCall(name="read_file", args={}, id="c1"))])
    assert tool_outputs_of(0, call) == ()


async def test_no_masking_while_a_summary_is_prepared_for_the_history_it_would_change(rig: Rig) -> None:
    from tests.service.test_background_compaction import aim, start_preparation

    rig.set(tool_output_masking=ToolOutputMasking(enabled=False))
    rig.load(outputs(5) + conversation(10), prompt_tokens=0, source="estimate")
    aim(rig, 0.88)
    await start_preparation(rig)
    assert rig.live.background.in_flight
    rig.set(tool_output_masking=SMALL)
    await send(rig, "while the summary is prepared")
    assert rig.rec.masked_notices == [] and not any(is_masked(r) for r in responses(chat_requests(rig)[-1]))
    assert rig.live.background.in_flight, "the preparation was not discarded"
    rig.fake.release()
