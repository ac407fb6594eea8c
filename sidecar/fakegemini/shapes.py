"""Response shapes a friendly fake never sends on its own: blocked prompts, odd finish reasons, empty or thoughts-only
replies, streams without a finish reason, and the extra fields real responses carry."""

from __future__ import annotations

from typing import Any

from . import faults, replies

SAFETY_RATINGS = [
    {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
]


def usage_extras(step: faults.Usage) -> dict[str, int]:
    """The usage step's extra counts, under their usageMetadata names."""
    extras = {
        "cachedContentTokenCount": step.cached_content_token_count,
        "thoughtsTokenCount": step.thoughts_token_count,
        "toolUsePromptTokenCount": step.tool_use_prompt_token_count,
    }
    return {name: value for name, value in extras.items() if value is not None}


def _candidate_extras(text: str) -> dict[str, Any]:
    end = max(1, len(text.encode()))
    return {
        "safetyRatings": SAFETY_RATINGS,
        "citationMetadata": {"citations": [{"startIndex": 0, "endIndex": end, "uri": "https://example.com/source"}]},
        "groundingMetadata": {
            "webSearchQueries": ["fake gemini grounding"],
            "groundingChunks": [{"web": {"uri": "https://example.com/page", "title": "example.com"}}],
            "groundingSupports": [
                {
                    "segment": {"startIndex": 0, "endIndex": end, "text": text[:40]},
                    "groundingChunkIndices": [0],
                    "confidenceScores": [0.9],
                }
            ],
        },
        "avgLogprobs": -0.125,
    }


def plan(
    step: faults.Blocked | faults.Finish, kind: str, prompt: int, *, model: str, response_id: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the generateContent body, the streamGenerateContent events) for a blocked or finish step."""
    head = {"modelVersion": model, "responseId": response_id}
    if isinstance(step, faults.Blocked):
        feedback: dict[str, Any] = {"blockReason": step.block_reason, "safetyRatings": SAFETY_RATINGS}
        if step.block_reason_message is not None:
            feedback["blockReasonMessage"] = step.block_reason_message
        body = {
            "promptFeedback": feedback,
            "usageMetadata": {"promptTokenCount": prompt, "totalTokenCount": prompt},
            **head,
        }
        return body, [body]

    thought: list[dict[str, Any]] = [{"text": step.thought, "thought": True}] if step.thought is not None else []
    text = step.text or ""
    pieces = replies.split_chunks(text) if text else ([""] if step.text is not None else [])
    parts_of_chunks: list[list[dict[str, Any]]] = [[*thought, {"text": p}] for p in pieces[:1]]
    parts_of_chunks += [[{"text": p}] for p in pieces[1:]]
    if not parts_of_chunks:
        parts_of_chunks = [thought]
    all_parts = [part for chunk in parts_of_chunks for part in chunk]
    candidates_tokens = replies.count_tokens(all_parts)
    usage: dict[str, Any] = replies.usage(prompt, candidates_tokens)
    if step.thought is not None:
        usage["thoughtsTokenCount"] = replies.count_tokens(thought)
    if step.extras:
        usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
        usage["candidatesTokensDetails"] = [{"modality": "TEXT", "tokenCount": candidates_tokens}]

    def candidate(parts: list[dict[str, Any]], last: bool) -> dict[str, Any]:
        content: dict[str, Any] = {"role": "model"}
        if step.parts == "given":
            content["parts"] = parts
        elif step.parts == "empty":
            content["parts"] = []
        cand: dict[str, Any] = {"content": content, "index": 0}
        if last and step.finish_reason is not None:
            cand["finishReason"] = step.finish_reason
            if step.finish_message is not None:
                cand["finishMessage"] = step.finish_message
        if last and step.extras:
            cand.update(_candidate_extras(text))
        return cand

    def event(parts: list[dict[str, Any]], last: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"candidates": [candidate(parts, last)]}
        if last and step.finish_reason is not None:  # a cut stream has no usage either
            out["usageMetadata"] = usage
        out.update(head)
        return out

    body = event(all_parts, True)
    if kind != "stream" or step.parts != "given":
        return body, [body]
    events = [event(parts, i == len(parts_of_chunks) - 1) for i, parts in enumerate(parts_of_chunks)]
    return body, events
