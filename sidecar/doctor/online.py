"""`sidecar doctor --online`: an access token (Vertex AI with ADC) and one countTokens call through the server's own
ModelClient, its HTTP status in words."""

from __future__ import annotations

import asyncio
import dataclasses
import http
from datetime import datetime

from sidecar.core.history import text_content
from sidecar.core.local_time import local_minute_of
from sidecar.doctor.backend import resolved_endpoint
from sidecar.doctor.report import Check, Context
from sidecar.gemini.backend import client_config
from sidecar.gemini.client import ModelClient, ModelError
from sidecar.gemini.credentials import LOGIN_HINT, AdcAuth, CredentialsError

#: The doctor waits at most this long for each request, whatever requestTimeoutMs says.
ONLINE_TIMEOUT_MS = 30_000


def valid_until(expiry: datetime | None) -> str:
    """How long the token lasts, in local time as the product shows times ("" when the credentials do not say)."""
    return f", valid until {local_minute_of(expiry)}" if isinstance(expiry, datetime) else ""


def online_check(ctx: Context) -> list[Check]:
    if not ctx.online:
        return []
    return asyncio.run(_online(ctx))


async def _online(ctx: Context) -> list[Check]:
    endpoint = resolved_endpoint(ctx)
    if endpoint.kind == "fake":
        return [Check("online", True, "nothing to reach: the embedded fake Gemini answers inside the sidecar")]
    if ctx.verdict is not None and not ctx.verdict.ok:
        return [Check("online", False, "not tried: the configuration above cannot work yet", "fix the problems above")]
    checks: list[Check] = []
    if endpoint.uses_adc:
        auth = AdcAuth()  # the token the server would fetch (ModelClient fetches its own for the call below)
        try:
            await auth.headers()
        except CredentialsError as exc:
            return [Check("token", False, exc.message, LOGIN_HINT)]
        expiry = getattr(auth.credentials, "expiry", None)
        until = valid_until(expiry)
        obtained = f"an access token was obtained with the credentials from {auth.source}{until}"
        checks.append(Check("token", True, obtained))
        if endpoint.project is None and auth.project:
            endpoint = endpoint.with_project(auth.project)
    config = client_config(ctx.settings, lambda: "")
    config = dataclasses.replace(config, retry_attempts=0, timeout_ms=min(config.timeout_ms, ONLINE_TIMEOUT_MS))
    model = ctx.settings.model
    url = endpoint.url(model, "countTokens")
    client = ModelClient(config)
    try:
        total = await client.count_tokens(model, [text_content("user", "sidecar doctor")])
    except ModelError as exc:
        checks.append(Check("countTokens", False, f"{url}: {_status(exc.status)}: {exc.message}", _hint(exc, ctx)))
    else:
        checks.append(Check("countTokens", True, f"{url}: HTTP 200 OK ({total} tokens for a test prompt)"))
    finally:
        await client.aclose()
    return checks


def _status(status: int | None) -> str:
    if status is None:
        return "no HTTP answer"
    try:
        return f"HTTP {status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        return f"HTTP {status}"


def _hint(exc: ModelError, ctx: Context) -> str:
    model = ctx.settings.model
    if exc.status in (401, 403):
        if ctx.verdict is not None and ctx.verdict.kind == "vertex" and "express" not in ctx.verdict.label:
            return (
                "give the account the Vertex AI User role in the project and enable the Vertex AI API there, "
                f"or {LOGIN_HINT}"
            )
        return "check the API key (a new one: https://aistudio.google.com/apikey) and that the API is enabled for it"
    if exc.status == 404:
        return f"check the model name ({model!r}, sidecar.model) and, for Vertex AI, the location"
    if exc.status == 400:
        return f"the API refused the request: check the API key and the model name ({model!r})"
    if exc.status == 429:
        return "the quota is used up: wait a minute, or check the project's quota and billing"
    if exc.status is not None and exc.status >= 500:
        return "the service failed: try again in a minute"
    if exc.kind == "credentials":
        return LOGIN_HINT
    return "check the network, a proxy (HTTPS_PROXY) and the base URL"
