"""The context window over ACP: `/context` as a text table, the session's models (the `model` config option, and
Gemini CLI's unstable `models` state with `session/set_model`)."""

from __future__ import annotations

from typing import Any

from acp import RequestError
from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

from sidecar.acp.rpc import INVALID_PARAMS
from sidecar.app import Services
from sidecar.protocol import edge, errors
from sidecar.protocol.context import ContextBreakdown, ListModelsResult

#: The config option that picks the model (category "model", as ACP names it).
MODEL_OPTION = "model"


def render_context(breakdown: ContextBreakdown) -> str:
    """The breakdown as a Markdown table: category, tokens, share of the window, and where each number comes from."""
    limit = max(breakdown.token_limit, 1)
    how = "counted by the API" if breakdown.source == "api" else "estimated"
    lines = [
        f"**Context window** — {breakdown.prompt_tokens:,} of {breakdown.token_limit:,} tokens "
        f"({100 * breakdown.prompt_tokens / limit:.1f}%, {how}); "
        f"model `{breakdown.model}`, summaries by `{breakdown.compression_model}`; compaction at "
        f"{breakdown.threshold_tokens:,} tokens.",
        "",
        "| what | tokens | % of window | source |",
        "|---|---:|---:|---|",
    ]
    for row in breakdown.rows:
        label = row.label.replace("|", "\\|")
        lines.append(f"| {label} | {row.tokens:,} | {100 * row.tokens / limit:.1f}% | {row.source} |")
    if breakdown.compacts_at_next_message:
        lines += ["", "The next message compacts the conversation first (`/compress` now, or `/compress <focus>`)."]
    elif breakdown.compaction_postponed:
        lines += ["", "The automatic compaction is postponed for the next message."]
    return "\n".join(lines)


def model_options(listed: ListModelsResult) -> list[SessionConfigOptionSelect]:
    """The session's config options: the model, from the backend's list (or the known table)."""
    options = [
        SessionConfigSelectOption(value=m.id, name=m.name, description=f"{m.token_limit:,}-token window")
        for m in listed.models
    ]
    return [
        SessionConfigOptionSelect(
            id=MODEL_OPTION,
            name="Model",
            description="The Gemini model of this session; the context window follows it.",
            category="model",
            type="select",
            current_value=listed.current,
            options=options,
        )
    ]


def model_state(listed: ListModelsResult) -> dict[str, Any]:
    """Gemini CLI's unstable SessionModelState: `{availableModels: [{modelId, name, description}], currentModelId}`."""
    return {
        "availableModels": [
            {"modelId": m.id, "name": m.name, "description": f"{m.token_limit:,}-token window"} for m in listed.models
        ],
        "currentModelId": listed.current,
    }


async def switch_model(services: Services, method: str, model: Any) -> ListModelsResult:
    """Switch the session's model (session/set_config_option, session/set_model); the models with the new current
    one. A value that is not a model name is an InvalidParams error naming the method."""
    if not isinstance(model, str):
        raise RequestError(INVALID_PARAMS, edge.bad_params(method, f"the model must be a string, got {model!r}."))
    try:
        switched = await services.window.set_model(model)
    except errors.SidecarError as exc:
        raise RequestError(INVALID_PARAMS, edge.bad_params(method, exc.message)) from None
    services.front_end.inform(switched.message)
    return services.window.known_models()
