"""The context window over ACP: `/context` as a text table, the session's models (the `model` config option, and
Gemini CLI's unstable `models` state with `session/set_model`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from acp import RequestError
from acp.schema import SessionConfigOptionBoolean, SessionConfigOptionSelect, SessionConfigSelectOption

from sidecar.acp.rpc import INVALID_PARAMS, Handler
from sidecar.protocol import edge, errors
from sidecar.protocol.context import ContextBreakdown, ListModelsResult

if TYPE_CHECKING:  # the services are imported after initialize has been answered (sidecar.acp.agent.warm_up)
    from sidecar.app import Services

#: The config option that picks the model (category "model", as ACP names it).
MODEL_OPTION = "model"
#: Gemini CLI's unstable model switch (0.61 advertises it with the session's `models`); the SDK does not route it.
SET_MODEL = "session/set_model"
#: The responses that carry a session's state (modes, config options, and Gemini CLI's unstable `models`).
SESSION_STATE = ("session/new", "session/load", "session/resume", "session/fork")


class OpenSession(Protocol):
    """An ACP session, as far as its model is concerned (sidecar.acp.session.AcpSession)."""

    services: Services


class Sessions(Protocol):
    """What the model wrapper needs of the agent (sidecar.acp.agent.SidecarAgent)."""

    @property
    def sessions(self) -> Mapping[str, OpenSession]:
        """The open sessions by id."""

    def _session(self, session_id: str) -> OpenSession:
        """The open session `session_id` (RESOURCE_NOT_FOUND otherwise)."""


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


def model_options(listed: ListModelsResult) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
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


def session_models(agent: Sessions, handler: Handler) -> Handler:
    """Gemini CLI's unstable model selection, which the SDK does not route: `session/set_model {sessionId, modelId}`,
    and `models {availableModels, currentModelId}` in the answers that open a session."""

    async def wrapped(method: str, params: Any, is_notification: bool) -> Any:
        if method == SET_MODEL and not is_notification and isinstance(params, dict):
            session = agent._session(str(params.get("sessionId")))
            await switch_model(session.services, method, params.get("modelId"))
            return {}
        result = await handler(method, params, is_notification)
        if method in SESSION_STATE and result is not None:
            answer = (
                result if isinstance(result, dict) else result.model_dump(mode="json", by_alias=True, exclude_none=True)
            )
            session_id = answer.get("sessionId") or (params or {}).get("sessionId")
            opened = agent.sessions.get(str(session_id))
            if opened is not None:
                answer["models"] = model_state(opened.services.window.known_models())
            return answer
        return result

    return wrapped
