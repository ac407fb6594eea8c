"""An embedded Gemini-compatible HTTP server (fake Gemini) for the demo and end-to-end tests."""

from __future__ import annotations

from .fake import FakeGemini
from .faults import (
    Blocked,
    Call,
    Cut,
    Delay,
    Empty,
    Finish,
    FunctionCall,
    Hold,
    MalformedSnapshot,
    MidstreamError,
    Status,
    Step,
    Text,
    Usage,
    error_body,
    parse_steps,
)
from .records import RequestRecord
from .replies import count_tokens, prompt_tokens, split_chunks
from .snapshot import SECTIONS, Facts, build_summary, extract_facts, parse_snapshot, render_snapshot

__all__ = [
    "SECTIONS",
    "Blocked",
    "Call",
    "Cut",
    "Delay",
    "Empty",
    "Facts",
    "FakeGemini",
    "Finish",
    "FunctionCall",
    "Hold",
    "MalformedSnapshot",
    "MidstreamError",
    "RequestRecord",
    "Status",
    "Step",
    "Text",
    "Usage",
    "build_summary",
    "count_tokens",
    "error_body",
    "extract_facts",
    "parse_snapshot",
    "parse_steps",
    "prompt_tokens",
    "render_snapshot",
    "split_chunks",
]
