"""What a hook said: its stdout JSON (or exit code 2) read into block / reason / additionalContext / systemMessage."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sidecar.hooks.process import HookRun

BLOCKING_DECISIONS = frozenset({"block", "deny"})
NO_REASON = "no reason given"


@dataclass(frozen=True)
class HookOutput:
    """The effective output of one hook, or of all hooks of one event (combine)."""

    blocked: bool = False
    reason: str = ""
    additional_context: str = ""
    system_message: str = ""


def _json_object(text: str) -> dict[str, Any] | None:
    """A JSON object, also when it arrives JSON-encoded as a string (the reference parses twice)."""
    try:
        value: Any = json.loads(text)
        if isinstance(value, str):
            value = json.loads(value)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def read_output(run: HookRun) -> HookOutput:
    """The output of a hook that ran (exit 0 or 2; a failed run has none).

    Exit 0: stdout is a JSON object — `decision: "block"` (or "deny") with `reason`, or `continue: false` with
    `stopReason`, blocks; `additionalContext` (top level or in `hookSpecificOutput`) adds context; `systemMessage`
    is shown to the user. Plain text on stdout is shown to the user as a message. Exit 2 blocks: the reason is the
    JSON `reason`, else stderr, else stdout."""
    if run.failure() is not None:
        return HookOutput()
    stdout = run.stdout.strip()
    data = _json_object(stdout) if stdout else None
    if run.exit_code == 2:
        reason = _text((data or {}).get("reason")) or run.stderr.strip() or (stdout if data is None else "")
        return HookOutput(blocked=True, reason=reason or NO_REASON)
    if data is None:
        return HookOutput(system_message=stdout)
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    decision = _text(data.get("decision")).lower()
    stopped = data.get("continue") is False
    blocked = decision in BLOCKING_DECISIONS or stopped
    reason = _text(data.get("reason")) or (_text(data.get("stopReason")) if stopped else "")
    context = _text(data.get("additionalContext")) or _text(specific.get("additionalContext"))
    return HookOutput(
        blocked=blocked,
        reason=(reason or NO_REASON) if blocked else "",
        additional_context=context,
        system_message=_text(data.get("systemMessage")),
    )


def combine(outputs: Iterable[HookOutput]) -> HookOutput:
    """All hooks of one event: any block wins; reasons, contexts and messages joined by newlines, in run order."""
    outputs = list(outputs)

    def joined(values: Iterable[str]) -> str:
        return "\n".join(value for value in values if value)

    return HookOutput(
        blocked=any(o.blocked for o in outputs),
        reason=joined(o.reason for o in outputs if o.blocked),
        additional_context=joined(o.additional_context for o in outputs),
        system_message=joined(o.system_message for o in outputs),
    )


def hook_context_text(context: str) -> str:
    """additionalContext as the model gets it: `<` and `>` escaped (so it cannot close or open tags), wrapped in
    <hook_context>, as the reference does."""
    escaped = context.replace("<", "&lt;").replace(">", "&gt;")
    return f"<hook_context>{escaped}</hook_context>"
