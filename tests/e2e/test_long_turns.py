"""Long agent turns: a check before every model request, tool outputs within budget, loop detection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sidecar.fakegemini import prompt_tokens
from sidecar.protocol import errors
from sidecar.rpc.client import RpcError
from tests.e2e.harness import EditorClient, notes, request
from tests.e2e.test_compaction_and_ide_context import editor

WINDOW = 40_000


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"kind": "function_call", "name": name, "args": args, "match": "chat"}


def chat_requests(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary]  # summaries stream too


def responses_in(record: Any) -> list[dict[str, Any]]:
    last = record.body["contents"][-1]
    return [p["functionResponse"] for p in last["parts"] if "functionResponse" in p]


async def say(client: EditorClient, text: str) -> dict[str, Any]:
    return await request(client, "sidecar/sendMessage", {"text": text}, timeout=120)  # type: ignore[no-any-return]


def write_files(root: Path, count: int, size: int) -> list[str]:
    """`count` files of about `size` characters each, every line naming its file (so the summary has facts)."""
    names = []
    for i in range(1, count + 1):
        name = f"module_{i:02d}.py"
        line = f"# {name}: line with some code-like text to read, value = {i} * 7 + 3\n"
        (root / name).write_text(line * (size // len(line) + 1))
        names.append(name)
    return names


@pytest.mark.parametrize(
    "background",
    [
        pytest.param(True, marks=pytest.mark.settings(tokenLimit=WINDOW, backgroundCompaction=True)),
        pytest.param(False, marks=pytest.mark.settings(tokenLimit=WINDOW, backgroundCompaction=False)),
    ],
    ids=["background", "no-background"],
)
async def test_twelve_large_reads_in_one_turn_stay_inside_the_window(
    client: EditorClient, fake: Any, background: bool
) -> None:
    root = Path(client.workspace_root)
    names = write_files(root, 12, 25_000)
    fake.set_token_limit(WINDOW)  # the fake answers 400 to anything over the window, as the real API does
    fake.script([call("read_file", path=name) for name in names])
    reply = await say(client, "read every module and tell me what they compute")
    assert reply["text"] and reply["finishReason"] == "STOP"
    chats = chat_requests(fake)
    assert len(chats) == 13, "twelve tool rounds and the final reply"
    sizes = [prompt_tokens(r.body) for r in fake.requests() if r.kind in ("stream", "generate")]
    assert max(sizes) <= WINDOW, sizes
    assert all(r.status == 200 for r in fake.requests()), [(r.kind, r.status) for r in fake.requests()]
    assert any(r.summary for r in fake.requests()), "a compaction inside the turn"
    compressed = notes(client, "sidecar/compressed")
    assert any(n["status"] == "COMPRESSED" for n in compressed), compressed
    newest = responses_in(chats[-1])
    assert newest[0]["name"] == "read_file"
    assert (root / names[-1]).read_text().rstrip("\n") in newest[0]["response"]["output"], "the newest result whole"
    first_user = chats[-1].body["contents"]
    assert any("<state_snapshot>" in p.get("text", "") for c in first_user for p in c["parts"])


@pytest.mark.settings(tokenLimit=20_000)
async def test_a_single_tool_result_larger_than_the_window_is_cut_to_fit(client: EditorClient, fake: Any) -> None:
    root = Path(client.workspace_root)
    detail = "with a long tail of details that make every line of this log about one hundred and fifty characters"
    (root / "huge.log").write_text("".join(f"log line {i:06d} {detail} ...\n" for i in range(1_500)))
    fake.set_token_limit(20_000)
    fake.script([call("read_file", path="huge.log"), call("read_file", path="huge.log", start_line=1490)])
    reply = await say(client, "read the huge log")
    assert reply["text"]
    chats = chat_requests(fake)
    assert all(r.status == 200 for r in fake.requests())
    assert max(prompt_tokens(r.body) for r in chats) <= 20_000
    cut = responses_in(chats[1])[0]["response"]["output"]
    assert "Output too large. Showing first" in cut and "read_file" in cut
    saved = cut.split("For full output see: ", 1)[1].split("\n", 1)[0]
    assert Path(saved).read_text().count("log line") == 1_500, "the full output was saved"
    assert "log line 000000" in cut and "log line 001499" in cut, "head and tail kept"


@pytest.mark.settings(tokenLimit=20_000)
async def test_a_user_message_larger_than_the_window_is_refused_with_nothing_sent(
    client: EditorClient, fake: Any
) -> None:
    await say(client, "hello")
    before = len(fake.requests())
    with pytest.raises(RpcError) as caught:
        await say(client, "word " * 30_000)
    assert caught.value.code == errors.CONTEXT_OVERFLOW
    assert "Sending this message (" in caught.value.message and "tokens left" in caught.value.message
    assert len(fake.requests()) == before, "nothing was sent, not even a summary request"


@pytest.mark.settings(tokenLimit=20_000)
async def test_the_ide_context_turn_counts_against_the_window(client: EditorClient, fake: Any) -> None:
    reply = await say(client, "hello")
    left = 20_000 - reply["usage"]["promptTokenCount"]
    fake.set_token_limit(20_000)
    client.notify("sidecar/ideContext", editor(selected="s" * 16_000))  # a context turn of ~4,000 tokens
    before = len(fake.requests())
    with pytest.raises(RpcError) as caught:
        await say(client, "w" * (4 * (left - 1_500)))  # fits alone, not with the context turn
    assert caught.value.code == errors.CONTEXT_OVERFLOW, caught.value.message
    assert len(fake.requests()) == before, "refused before anything was sent"


@pytest.mark.settings(tokenLimit=WINDOW)
async def test_a_history_that_alone_fills_the_window_ends_the_turn_in_words(client: EditorClient, fake: Any) -> None:
    (Path(client.workspace_root) / "notes.txt").write_text("alpha\n")
    fake.set_token_multiplier(100)  # the API reports far more than the window: no continuation can fit
    fake.script([call("read_file", path="notes.txt")])
    with pytest.raises(RpcError) as caught:
        await say(client, "read notes.txt")
    assert caught.value.code == errors.CONTEXT_OVERFLOW and "no longer fits" in caught.value.message
    assert len(chat_requests(fake)) == 1, "nothing over the window was sent"
    fake.set_token_multiplier(1)
    transcript = await request(client, "sidecar/getTranscript", {})
    kinds = [e["kind"] for e in transcript["entries"]]
    # the recorded session context (env) opens it
    assert kinds == ["env", "user", "toolCall", "toolResult", "model", "error"], "the call answered, the round closed"
    assert "For full output see:" in transcript["entries"][3]["text"]


def nudged(record: Any) -> bool:
    return any("Potential loop detected" in p.get("text", "") for c in record.body["contents"] for p in c["parts"])


def shown_warnings(client: EditorClient) -> list[str]:
    return [n["message"] for n in notes(client, "window/showMessage") if n["type"] == 2]


async def test_five_identical_calls_nudge_and_ten_stop_the_turn(client: EditorClient, fake: Any) -> None:
    (Path(client.workspace_root) / "notes.txt").write_text("alpha\n")
    fake.script([{**call("read_file", path="notes.txt"), "times": 12}])
    reply = await say(client, "read notes.txt")
    assert reply["finishReason"] == "LOOP_DETECTED"
    chats = chat_requests(fake)
    assert len(chats) == 10, "the tenth identical call stops the turn: no further request"
    assert [nudged(r) for r in chats] == [False] * 5 + [True] + [False] * 4, "the nudge rides on one request only"
    (warning,) = [w for w in shown_warnings(client) if "loop" in w]
    assert "read_file" in warning and "notes.txt" in warning
    fake.reset_script()
    await say(client, "what happened?")
    contents = chat_requests(fake)[-1].body["contents"]
    answered = [p["functionResponse"] for c in contents for p in c["parts"] if "functionResponse" in p]
    assert len(answered) == 10 and "loop" in answered[-1]["response"]["error"], "the last call was answered"
    assert not any("Potential loop detected" in p.get("text", "") for c in contents for p in c["parts"])


async def test_an_abab_cycle_is_a_loop(client: EditorClient, fake: Any) -> None:
    root = Path(client.workspace_root)
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    fake.script([call("read_file", path="a.txt" if i % 2 == 0 else "b.txt") for i in range(22)])
    reply = await say(client, "compare a and b")
    assert reply["finishReason"] == "LOOP_DETECTED"
    chats = chat_requests(fake)
    assert len(chats) == 20, "a cycle of two: ten calls for the nudge, ten more to stop"
    assert [i for i, r in enumerate(chats) if nudged(r)] == [10]
    (warning,) = [w for w in shown_warnings(client) if "loop" in w]
    assert "cycle of 2 tool calls" in warning and "a.txt" in warning and "b.txt" in warning


@pytest.mark.settings(loopDetection=False)
async def test_loop_detection_can_be_switched_off(client: EditorClient, fake: Any) -> None:
    (Path(client.workspace_root) / "notes.txt").write_text("alpha\n")
    fake.script([{**call("read_file", path="notes.txt"), "times": 6}])
    reply = await say(client, "read notes.txt")
    assert reply["finishReason"] == "STOP" and len(chat_requests(fake)) == 7
    assert not any(nudged(r) for r in chat_requests(fake))


async def test_repeated_text_is_nudged_then_stopped(client: EditorClient, fake: Any) -> None:
    looping = "I will check the configuration file again now. " * 15
    fake.script([{"kind": "text", "text": looping, "match": "chat", "times": 2}])
    reply = await say(client, "check the configuration")
    assert reply["finishReason"] == "LOOP_DETECTED"
    chats = chat_requests(fake)
    assert [nudged(r) for r in chats] == [False, True]
    assert any("Repeating content" in w for w in shown_warnings(client))


async def test_repeated_text_once_gets_a_nudge_and_the_turn_goes_on(client: EditorClient, fake: Any) -> None:
    looping = "I will check the configuration file again now. " * 15
    fake.script([{"kind": "text", "text": looping, "match": "chat"}])
    reply = await say(client, "check the configuration")
    assert reply["finishReason"] == "STOP"
    assert [nudged(r) for r in chat_requests(fake)] == [False, True]


PRINT_LINES = "python3 -c \"print(''.join(f'output line {i:05d}\\\\n' for i in range(4000)))\""


def saved_path(output: str) -> str:
    return output.split("For full output see: ", 1)[1].split("\n", 1)[0]


async def test_a_saved_shell_output_is_read_back_with_read_file(client: EditorClient, fake: Any) -> None:
    fake.script([call("run_shell_command", command=PRINT_LINES)])
    await say(client, "print many lines")
    output = responses_in(chat_requests(fake)[-1])[0]["response"]["output"]
    assert "Output too large. Showing first 8,000 and last 32,000 characters." in output
    saved = saved_path(output)
    assert "tool-outputs" in saved and not saved.startswith(client.workspace_root)
    fake.script([call("read_file", path=saved, start_line=2000, end_line=2002)])
    await say(client, "read the middle of the saved output")
    read = responses_in(chat_requests(fake)[-1])[0]["response"]
    assert "output line 01999" in read["output"] and "output line 02001" in read["output"], read
    session_file = Path(saved).parent.parent.parent / f"{Path(saved).parent.parent.name}.jsonl"
    assert session_file.exists()
    fake.script([call("read_file", path=str(session_file)), call("write_file", path=saved, content="changed")])
    await say(client, "read the recording, then change the saved output")
    chats = chat_requests(fake)
    assert "outside the workspace" in responses_in(chats[-2])[0]["response"]["error"], "only saved outputs"
    assert "error" in responses_in(chats[-1])[0]["response"], "saved outputs are read-only"
    assert "output line 02001" in Path(saved).read_text()


@pytest.mark.settings(truncateToolOutputThreshold=0)
async def test_a_threshold_of_zero_sends_the_whole_shell_output(client: EditorClient, fake: Any) -> None:
    fake.script([call("run_shell_command", command=PRINT_LINES)])
    await say(client, "print many lines")
    output = responses_in(chat_requests(fake)[-1])[0]["response"]["output"]
    assert "Output too large" not in output and output.split("Output:\n", 1)[1].count("output line") == 4000


@pytest.mark.settings(truncateToolOutputThreshold=1_000)
async def test_the_threshold_setting_bounds_the_shell_output(client: EditorClient, fake: Any) -> None:
    fake.script([call("run_shell_command", command=PRINT_LINES)])
    await say(client, "print many lines")
    output = responses_in(chat_requests(fake)[-1])[0]["response"]["output"]
    assert "Output too large. Showing first 200 and last 800 characters." in output


async def test_compaction_keeps_the_failing_test_and_the_users_decision(client: EditorClient, fake: Any) -> None:
    # Neither fact is in the command, nor within what the fake's summary quotes of a message or a tool result: only
    # the sidecar's retention check (the verify pass's list of missing facts) keeps them.
    command = (
        "python3 -c \"print('collected 3 items ' + '.' * 300); print('FAI' + 'LED tests/test_calc.py::test_add')\""
    )
    fake.script([call("run_shell_command", command=command)])
    await say(client, "Run the tests.")
    await say(client, "Some context first: " + "background words " * 30 + ". We'll go with the integer parser.")
    for i in range(4):
        await say(client, f"step {i}: " + "more words about the work " * 40)
    result = await request(
        client, "workspace/executeCommand", {"command": "sidecar.compressConversation", "arguments": []}
    )
    assert result["status"] == "COMPRESSED"
    verify = [r for r in fake.requests() if r.summary][-1]
    asked = str(verify.body["contents"][-1])
    assert "error: FAILED tests/test_calc.py::test_add" in asked
    assert "user decision: We'll go with the integer parser." in asked
    await say(client, "go on")
    snapshot = chat_requests(fake)[-1].body["contents"][1]["parts"][0]["text"]
    assert "FAILED tests/test_calc.py::test_add" in snapshot
    assert "We'll go with the integer parser." in snapshot
