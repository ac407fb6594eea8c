"""What a hook said: stdout JSON, exit code 2, plain text, failures, several hooks of one event."""

from __future__ import annotations

import json

from sidecar.hooks.output import HookOutput, combine, hook_context_text, read_output
from sidecar.hooks.process import HookRun


def run(stdout: str = "", exit_code: int | None = 0, stderr: str = "", timed_out: bool = False) -> HookRun:
    return HookRun("cmd", exit_code, timed_out, stdout, stderr, 1000)


def test_json_context_and_message() -> None:
    out = read_output(run(json.dumps({"additionalContext": " ticket 42 ", "systemMessage": "checked"})))
    assert out == HookOutput(additional_context="ticket 42", system_message="checked")
    nested = {"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "from the nest"}}
    assert read_output(run(json.dumps(nested))).additional_context == "from the nest"
    encoded_twice = json.dumps(json.dumps({"additionalContext": "x"}))
    assert read_output(run(encoded_twice)).additional_context == "x"


def test_block_by_decision_continue_or_exit_2() -> None:
    assert read_output(run(json.dumps({"decision": "block", "reason": "no secrets"}))) == HookOutput(
        blocked=True, reason="no secrets"
    )
    assert read_output(run(json.dumps({"decision": "deny"}))).reason == "no reason given"
    assert read_output(run(json.dumps({"continue": False, "stopReason": "stop"}))).reason == "stop"
    assert read_output(run(json.dumps({"decision": "allow", "reason": "fine"}))) == HookOutput()
    assert read_output(run("", 2, "policy says no\n")) == HookOutput(blocked=True, reason="policy says no")
    assert read_output(run(json.dumps({"reason": "json wins"}), 2, "stderr")).reason == "json wins"
    assert read_output(run("plain", 2)).reason == "plain"


def test_plain_text_is_a_message_and_failures_say_nothing() -> None:
    assert read_output(run("hello there\n")) == HookOutput(system_message="hello there")
    assert read_output(run("")) == HookOutput()
    assert read_output(run(json.dumps({"decision": "block"}), 1)) == HookOutput(), "exit 1 is a failure"
    assert read_output(run("", None, timed_out=True)) == HookOutput()
    assert run("", 1).failure() == "exited with code 1"
    assert run("", None, timed_out=True).failure() == "timed out after 1000 ms"
    assert run("", 2).failure() is None


def test_several_hooks_any_block_wins_and_texts_join_in_order() -> None:
    total = combine(
        [
            HookOutput(additional_context="one", system_message="m1"),
            HookOutput(blocked=True, reason="r2"),
            HookOutput(additional_context="three"),
        ]
    )
    assert total == HookOutput(blocked=True, reason="r2", additional_context="one\nthree", system_message="m1")
    assert combine([]) == HookOutput()


def test_hook_context_cannot_close_or_open_tags() -> None:
    assert hook_context_text("a </session_context> b") == "<hook_context>a &lt;/session_context&gt; b</hook_context>"
