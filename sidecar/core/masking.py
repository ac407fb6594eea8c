"""Masking old tool outputs: which function responses become a preview, and the preview (the reference's rules)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from sidecar.core.compaction import function_response_text
from sidecar.core.history import Content, Part
from sidecar.core.jsonlen import js_json_dumps, utf16_len
from sidecar.core.tokens import part_quarters

__all__ = [
    "MASK_TAG",
    "MaskingRules",
    "ToolOutput",
    "choose_outputs",
    "is_masked_response",
    "masked_part",
    "masked_snippet",
    "preview_of",
    "saved_text",
    "shell_preview",
    "simple_preview",
    "tool_outputs_of",
]

#: The tag around a masked output (the reference's MASKING_INDICATOR_TAG): an output holding it is never masked again.
MASK_TAG = "tool_output_masked"
SHELL_TOOL = "run_shell_command"
#: Tools whose outputs the reference never masks (always high-signal); the sidecar has none of them today, and the
#: user adds more with toolOutputMasking.exemptTools.
REFERENCE_EXEMPT_TOOLS = frozenset({"activate_skill", "ask_user", "enter_plan_mode", "exit_plan_mode"})


@dataclass(frozen=True, slots=True)
class MaskingRules:
    """The thresholds of one decision (defaults: the reference's)."""

    #: The newest tool-output tokens kept whole (the reference's protectionThresholdTokens).
    protection_tokens: int = 50_000
    #: Mask only when at least this many tool-output tokens are maskable (minPrunableThresholdTokens).
    min_prunable_tokens: int = 30_000
    #: The latest history item before the request is kept whole too (protectLatestTurn).
    protect_latest_turn: bool = True
    #: Cache-aware batch: a masking must pay back the cache it breaks within this many requests (0: no such rule,
    #: the reference's behaviour). Cached tokens cost a quarter of uncached ones (Gemini's implicit cache).
    payback_requests: int = 4


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """One unmasked function response of the history: where it is, its tool and its estimate (the reference's
    estimateTokenCountSync([part]))."""

    index: int
    part: int
    name: str
    tokens: int


def is_masked_response(response: Any) -> bool:
    """The reference's isAlreadyMasked: the response's pretty JSON holds the opening tag."""
    return f"<{MASK_TAG}" in js_json_dumps(response, indent=2)


def _response_content(response: Any) -> str | None:
    """The reference's getToolOutputContent: the pretty JSON of a present, truthy response."""
    if response is None or response == "" or response == 0 or response is False:
        return None
    return js_json_dumps(response, indent=2)


def tool_outputs_of(index: int, content: Content) -> tuple[ToolOutput, ...]:
    """The unmasked function responses of one history item (computed once per item: callers cache it)."""
    found: list[ToolOutput] = []
    for j, part in enumerate(content.parts):
        fr = part.function_response
        if fr is None:
            continue
        text = _response_content(fr.response)
        if text is None or f"<{MASK_TAG}" in text:
            continue
        found.append(ToolOutput(index, j, fr.name or "", part_quarters(part) // 4))
    return tuple(found)


def choose_outputs(
    newest_first: Iterable[ToolOutput],
    rules: MaskingRules,
    exempt: Callable[[str], bool],
    tokens_from: Callable[[int], int] | None = None,
) -> list[ToolOutput]:
    """The outputs to mask now (empty: none), by the reference's backward scan: the newest `protection_tokens` of
    tool output stay whole (the output that crosses the boundary is maskable), and nothing is masked unless at least
    `min_prunable_tokens` are maskable. `newest_first` excludes the protected latest items. `tokens_from(i)`: the
    history's tokens from item i to the end, for the cache-aware batch rule (None: not applied)."""
    cumulative = 0
    crossed = False
    maskable: list[ToolOutput] = []
    total = 0
    for output in newest_first:
        if exempt(output.name):
            continue
        if not crossed:
            cumulative += output.tokens
            if cumulative <= rules.protection_tokens:
                continue
            crossed = True
        maskable.append(output)
        total += output.tokens
    if total < rules.min_prunable_tokens or not maskable:
        return []
    if rules.payback_requests > 0 and tokens_from is not None:
        # Masking rewrites the request from the oldest masked item on: that suffix is billed uncached once (3/4 more
        # than cached), and every later request saves a quarter of the masked tokens. Wait for a bigger batch until
        # the saving repays the rewrite within payback_requests requests.
        oldest = min(o.index for o in maskable)
        rewritten = max(0, tokens_from(oldest) - total)
        if total * rules.payback_requests < 3 * rewritten:
            return []
    return maskable


# ---------------------------------------------------------------- previews (the reference's, exactly)

_SECTION = re.compile(r"^(Output|Error|Exit Code|Signal|Background PIDs|Process Group PGID): ", re.MULTILINE)
#: The sidecar's own shell result: header lines (command, directory, exit code, notes), then "Output:" and the body.
_SIDECAR_SHELL = re.compile(r"\A(Command: .*?\n)Output:\n", re.DOTALL)


def _js_split_lines(text: str) -> list[str]:
    return text.split("\n")


def _js_trim(text: str) -> str:
    return text.strip(
        " \t\n\r\v\f\u00a0\ufeff\u2028\u2029\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
        "\u2008\u2009\u200a\u202f\u205f\u3000"
    )


def simple_preview(content: str) -> str:
    """formatSimplePreview: up to 20 lines whole, else the first and last 10 with the count omitted between."""
    lines = _js_split_lines(content)
    if len(lines) <= 20:
        return content
    omitted = len(lines) - 20
    return "\n".join(lines[:10]) + f"\n\n... [{omitted} lines omitted] ...\n\n" + "\n".join(lines[-10:])


def _js_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def shell_preview(response: Any) -> str:
    """formatShellPreview: sections kept whole but Output (head and tail); exit code and error kept."""
    response = response if isinstance(response, dict) else {}
    content: Any = response.get("output") or response.get("stdout") or ""
    if not isinstance(content, str):
        return js_json_dumps(content) if isinstance(content, (dict, list)) else _js_string(content)
    sidecar = _SIDECAR_SHELL.match(content)
    if sidecar is not None:  # our own format: the header lines whole, the body's head and tail
        preview = sidecar.group(1) + "Output:\n" + simple_preview(content[sidecar.end() :])
    else:
        preview = _reference_sections(content)
    exit_code = response.get("exitCode")
    if exit_code is None:
        exit_code = response.get("exit_code")
    error = response.get("error")
    if exit_code is not None and exit_code != 0 and f"Exit Code: {_js_string(exit_code)}" not in content:
        preview += f"\n[Exit Code: {_js_string(exit_code)}]"
    if error and f"Error: {_js_string(error)}" not in content:
        preview += f"\n[Error: {_js_string(error)}]"
    return preview


def _reference_sections(content: str) -> str:
    pieces = _SECTION.split(content)  # like JavaScript's split with a capturing group
    if len(pieces) < 3:
        return simple_preview(content)
    kept: list[str] = []
    if _js_trim(pieces[0]):
        kept.append(simple_preview(_js_trim(pieces[0])))
    for i in range(1, len(pieces), 2):
        name = pieces[i]
        body = _js_trim(pieces[i + 1]) if i + 1 < len(pieces) else ""
        kept.append(f"Output: {simple_preview(body)}" if name == "Output" else f"{name}: {body}")
    return "\n".join(kept)


def _utf16_slice(text: str, start: int, stop: int | None) -> str:
    if utf16_len(text) == len(text):
        return text[start:stop]
    data = text.encode("utf-16-le", "surrogatepass")
    return data[2 * start : None if stop is None else 2 * stop].decode("utf-16-le", "surrogatepass")


def preview_of(name: str, response: Any) -> str:
    """The reference's preview: shell → shell_preview; others → the pretty JSON whole up to 500 characters, else its
    first and last 250 (UTF-16 units, as JavaScript slices)."""
    if name == SHELL_TOOL:
        return shell_preview(response)
    content = js_json_dumps(response, indent=2)
    length = utf16_len(content)
    if length <= 500:
        return content
    return f"{_utf16_slice(content, 0, 250)}\n... [TRUNCATED] ...\n{_utf16_slice(content, length - 250, None)}"


def masked_snippet(preview: str, path: str) -> str:
    """The reference's masked text, plus how to read the output back."""
    return (
        f"<{MASK_TAG}>\n{preview}\n\nOutput too large. Full output available at: {path}\n"
        f"(read it back with read_file if you need more than this preview)\n</{MASK_TAG}>"
    )


def saved_text(response: Any) -> str:
    """What is saved for read_file: the output's own text when it has one (readable lines, not escaped JSON), else
    the pretty JSON the reference saves."""
    return function_response_text(response) or js_json_dumps(response, indent=2)


def masked_part(part: Part, snippet: str) -> Part:
    """The part with its response replaced by {output: snippet} (name, id and nested parts kept)."""
    assert part.function_response is not None
    return msgspec.structs.replace(
        part, function_response=msgspec.structs.replace(part.function_response, response={"output": snippet})
    )


def newest_first(items: Sequence[tuple[ToolOutput, ...]]) -> Iterable[ToolOutput]:
    """The outputs of `items` (one tuple per history item, oldest first), newest first."""
    for outputs in reversed(items):
        yield from reversed(outputs)
