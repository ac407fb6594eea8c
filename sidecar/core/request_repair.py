"""Request contents made to satisfy every rule the Gemini API enforces (a resumed, imported or edited history).

The repair is for the request only: the recorded history keeps what happened. Each fix is named in words for the
log. `repair_wire` looks at each content's JSON bytes first and decodes only when something may be wrong, so a
healthy history costs a few substring searches per content.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import msgspec

from sidecar.core.content_json import decode_contents, encode_content
from sidecar.core.history import Content, FunctionCall, FunctionResponse, Part

#: What Gemini CLI puts on a current-turn call it holds no signature for (a history from another model or tool);
#: the Gemini API documents it as the value that skips signature validation.
SKIP_SIGNATURE = "skip_thought_signature_validator"
NO_RESULT = "No result was recorded for this tool call; it may or may not have taken effect."
CONTINUE = "Continue."
HISTORY_START = "(The conversation continues from an earlier session.)"
_PREFILL_MODELS = re.compile(r"^(models/)?(gemini-1\.|gemini-2\.|gemini-3-|gemini-3\.1-|gemini-pro-latest)")
_SIGNATURE_FREE_MODELS = re.compile(r"^(models/)?(gemini-1\.|gemini-2\.)")
_MODEL_ROLES = {"model", "assistant", "gemini", "ai"}


def requires_signatures(model: str) -> bool:
    """Gemini 3 (and any model not known to be older) checks the current turn's call signatures."""
    return not _SIGNATURE_FREE_MODELS.match(model.strip())


def refuses_model_turn_last(model: str) -> bool:
    """Newer models refuse a request that ends with a model turn (older ones continue it)."""
    return not _PREFILL_MODELS.match(model.strip())


def _fields(part: Part) -> list[str]:
    names = [
        "function_call",
        "function_response",
        "inline_data",
        "file_data",
        "executable_code",
        "code_execution_result",
    ]
    found = ["text"] if part.text is not None and (part.text != "" or part.thought) else []
    return found + [n for n in names if getattr(part, n) is not None]


def _clean_parts(parts: list[Part], fixes: list[str]) -> list[Part]:
    """Drop parts that carry nothing (an empty text outside thoughts); split a part that sets two data fields."""
    out: list[Part] = []
    for part in parts:
        fields = _fields(part)
        if not fields:
            fixes.append("dropped an empty part")
            continue
        if len(fields) == 1:
            out.append(part)
            continue
        fixes.append("split a part that carried two kinds of data")
        for n, name in enumerate(fields):
            piece = Part(thought_signature=part.thought_signature if n == 0 else None)
            if name == "text":
                piece.text, piece.thought = part.text, part.thought
            else:
                setattr(piece, name, getattr(part, name))
            out.append(piece)
    return out


def _own_parts(role: str | None, parts: list[Part], fixes: list[str]) -> list[Part]:
    """Calls belong to model turns and results to user turns: the other side's are kept as text."""
    out = []
    for p in parts:
        if role == "model" and p.function_response is not None:
            fixes.append("kept a tool result found in a model turn as text")
            out.append(_response_text(p.function_response))
        elif role != "model" and p.function_call is not None:
            fixes.append("kept a tool call found in a user turn as text")
            args = msgspec.json.encode(p.function_call.args or {}).decode()
            out.append(Part(text=f"[Tool call {p.function_call.name or '?'}({args})]"))
        else:
            out.append(p)
    return out


def _calls_last(parts: list[Part]) -> list[Part]:
    return [p for p in parts if p.function_call is None] + [p for p in parts if p.function_call is not None]


def _response_text(r: FunctionResponse) -> Part:
    body = msgspec.json.encode(r.response).decode() if r.response is not None else "null"
    return Part(text=f"[Result of the tool call {r.name or '?'}: {body}]")


def _no_result(call: FunctionCall) -> Part:
    return Part(function_response=FunctionResponse(name=call.name, id=call.id, response={"error": NO_RESULT}))


def _answer(calls: list[FunctionCall], reply: Content | None, fixes: list[str]) -> Content:
    """The user content that answers `calls`, in their order: the recorded response with the call's id, else one
    without an id with the call's name; a 'no result' response for a call without one; responses to no call
    become text."""
    responses = [p for p in (reply.parts if reply else []) if p.function_response is not None]
    others = [p for p in (reply.parts if reply else []) if p.function_response is None]
    chosen: list[Part | None] = []
    for call in calls:  # by id first: an id names its call whatever the order
        match = next(
            (
                p
                for p in responses
                if call.id
                and p.function_response
                and p.function_response.id == call.id
                and p.function_response.name == call.name
            ),
            None,
        )
        if match is not None:
            responses.remove(match)
        chosen.append(match)
    answered: list[Part] = []
    for call, match in zip(calls, chosen, strict=True):
        if match is None:
            match = next(
                (
                    p
                    for p in responses
                    if p.function_response and p.function_response.id is None and p.function_response.name == call.name
                ),
                None,
            )
            if match is not None:
                responses.remove(match)
        if match is None:
            fixes.append(f"answered the call {call.name} that had no recorded result")
            match = _no_result(call)
        answered.append(match)
    for extra in responses:
        if extra.function_response is not None:
            fixes.append("kept a tool result that answers no call as text")
            others.append(_response_text(extra.function_response))
    return Content(role="user", parts=answered + others)


def repair_contents(contents: Sequence[Content], model: str) -> tuple[list[Content], list[str]]:
    """Contents that satisfy the API's rules for `model`, and the fixes made (empty when none were needed)."""
    fixes: list[str] = []
    merged: list[Content] = []
    for c in contents:
        role = c.role
        if role not in (None, "user", "model"):
            role = "model" if role in _MODEL_ROLES else "user"
            fixes.append(f"sent the role {c.role!r} as {role}")
        parts = _own_parts(role, _clean_parts(list(c.parts), fixes), fixes)
        if not parts:
            fixes.append("dropped a content with no parts")
            continue
        if (
            role == "model"
            and merged
            and merged[-1].role == "model"
            and not any(p.function_call is not None for p in merged[-1].parts)
        ):
            fixes.append("merged consecutive model turns into one")
            merged[-1] = Content(role="model", parts=_calls_last([*merged[-1].parts, *parts]))
            continue
        merged.append(Content(role=role, parts=parts))
    out: list[Content] = []
    i = 0
    while i < len(merged):
        c = merged[i]
        calls = [p.function_call for p in c.parts if p.function_call is not None]
        if c.role == "model" and calls:
            if not out or out[-1].role == "model":
                fixes.append("put a user turn before a tool call turn that followed no user turn")
                out.append(Content(role="user", parts=[Part(text=HISTORY_START)]))
            out.append(c)
            nxt = merged[i + 1] if i + 1 < len(merged) else None
            has_reply = (
                nxt is not None and nxt.role != "model" and any(p.function_response is not None for p in nxt.parts)
            )
            out.append(_answer(calls, nxt if has_reply else None, fixes))
            i += 2 if has_reply else 1
            continue
        if c.role != "model" and any(p.function_response is not None for p in c.parts):
            fixes.append("kept tool results that follow no call as text")
            c = Content(
                role=c.role,
                parts=[_response_text(p.function_response) if p.function_response is not None else p for p in c.parts],
            )
        out.append(c)
        i += 1
    if out and out[-1].role == "model" and refuses_model_turn_last(model):
        fixes.append("ended the request with a user turn")
        out.append(Content(role="user", parts=[Part(text=CONTINUE)]))
    if requires_signatures(model):
        _sign_current_turn(out, fixes)
    return out, fixes


def current_turn_start(contents: Sequence[Content]) -> int:
    """Index after the last user content that is not only function responses."""
    for i in range(len(contents) - 1, -1, -1):
        c = contents[i]
        if c.role != "model" and any(p.function_response is None for p in c.parts):
            return i + 1
    return 0


def _sign_current_turn(contents: list[Content], fixes: list[str]) -> None:
    for i in range(current_turn_start(contents), len(contents)):
        c = contents[i]
        if c.role != "model":
            continue
        first = next((p for p in c.parts if p.function_call is not None), None)
        if first is not None and not first.thought_signature:
            first.thought_signature = SKIP_SIGNATURE
            fixes.append("marked a current-turn tool call without a thought signature as not signed")


# -- the fast look at JSON bytes ---------------------------------------------------------------------------------
_CALL, _RESPONSE = b'"functionCall":', b'"functionResponse":'
_SUSPECT = (b'"parts":[]', b'"parts":[{}', b",{}]", b",{},")
_EMPTY_TEXT, _EMPTY_THOUGHT = b'"text":""', b'"text":"","thought":true'  # the field order of history.Part


_DATA_KEYS = (
    b'"text":',
    _CALL,
    _RESPONSE,
    b'"inlineData":',
    b'"fileData":',
    b'"executableCode":',
    b'"codeExecutionResult":',
)


@lru_cache(maxsize=4096)
def _parts_single(item: bytes) -> bool:
    """Whether each part of the content sets exactly one data field (decoded once per content: bytes cache their
    hash, so a content already seen costs a dictionary look-up)."""
    return all(len(_fields(p)) == 1 for p in decode_contents([item])[0].parts)


def _suspect(item: bytes) -> bool:
    if not (b'"role":"user"' in item or b'"role":"model"' in item) or b'"parts":[' not in item:
        return True
    if any(s in item for s in _SUSPECT) or item.count(_EMPTY_TEXT) > item.count(_EMPTY_THOUGHT):
        return True
    return sum(key in item for key in _DATA_KEYS) > 1 and not _parts_single(item)


def may_break_rules(wire: Sequence[bytes], model: str) -> bool:
    """Whether the contents' JSON may break a rule (False: certainly fine; True: decode and look). Keys inside a
    tool's arguments or result can only make it answer True more often, never hide a problem from the counts."""
    prev_model, prev_calls = False, 0
    for index, item in enumerate(wire):
        if _suspect(item):
            return True
        is_model = b'"role":"model"' in item
        calls, responses = item.count(_CALL), item.count(_RESPONSE)
        if prev_calls and (is_model or responses != prev_calls):
            return True  # calls not answered one for one by the next content
        if responses and not prev_calls:
            return True  # results that follow no call
        if is_model and (prev_model or (calls and index == 0)):
            return True  # two model turns in a row, or a history that starts with a call
        prev_model, prev_calls = is_model, calls if is_model else 0
    if prev_calls or (prev_model and refuses_model_turn_last(model)):
        return True
    if requires_signatures(model):
        for index in range(len(wire) - 1, -1, -1):
            item = wire[index]
            if b'"role":"model"' in item:
                if _CALL in item and b'"thoughtSignature":' not in item:
                    return True
                continue
            if _RESPONSE not in item or any(p.function_response is None for p in decode_contents([item])[0].parts):
                break  # the user's own message: the current turn starts after it
    return False


def repair_wire(wire: Sequence[bytes], model: str) -> tuple[Sequence[bytes], list[str]]:
    """The request contents (JSON bytes) repaired for `model`: `wire` itself when nothing needed fixing."""
    if not may_break_rules(wire, model):
        return wire, []
    repaired, fixes = repair_contents(decode_contents(wire), model)
    if not fixes:
        return wire, []
    return [encode_content(c) for c in repaired], fixes


_HINTS = (
    (
        ("function call turn comes", "function response turn comes", "number of function response parts"),
        "The conversation's tool calls and their results are out of order. Rewind to before the last tool call "
        "(or compress the conversation), then send again.",
    ),
    (
        ("thought_signature",),
        "A tool call in the current turn lacks the thought signature Gemini 3 requires (a history made by another "
        "model or tool). Send a new message to start a new turn, or switch to a Gemini 2.5 model for this turn.",
    ),
    (
        ("required oneof field 'data'", "empty text parameter", "parts must not be empty", "at least one parts field"),
        "The conversation holds an empty message part. Rewind past the empty message (or compress the "
        "conversation), then send again.",
    ),
    (
        ("ending with a model turn", "ends with a user role"),
        "The request ended with Gemini's own turn. Send a new message to continue.",
    ),
    (
        ("payload size exceeds",),
        "The request is over Gemini's 20 MB limit. Remove large attachments (images, PDFs) from the conversation "
        "or start a new session.",
    ),
)


def shape_hint(message: str) -> str | None:
    """For a 400 that names a request-shape problem: the fix, in words; None for any other message."""
    low = message.lower()
    for needles, hint in _HINTS:
        if any(n.lower() in low for n in needles):
            return hint
    return None
