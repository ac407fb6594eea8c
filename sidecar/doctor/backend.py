"""Which Gemini the server would talk to and whether the first message would work, from the server's own resolution
(gemini/backend.py, gemini/routes.py, gemini/credentials.py): backend, key, Vertex AI project, location and ADC."""

from __future__ import annotations

from typing import Any

from sidecar.doctor.report import Check, Context, Verdict
from sidecar.gemini.backend import client_config
from sidecar.gemini.credentials import (
    LOGIN_HINT,
    CredentialsError,
    credentials_source,
    load_credentials,
    missing_project_message,
)
from sidecar.gemini.routes import Endpoint

ONLINE_HINT = f"{LOGIN_HINT}; then `sidecar doctor --online` checks that a token is issued"

#: The kinds of Application Default Credentials by google-auth module, in words.
ADC_KINDS = {
    "google.oauth2.service_account": "a service-account key",
    "google.oauth2.credentials": "a user's login (gcloud auth application-default login)",
    "google.auth.compute_engine.credentials": "the metadata server's service account",
    "google.auth.external_account_authorized_user": "an external account's login (workforce identity)",
    "google.auth.identity_pool": "workload identity federation",
    "google.auth.aws": "workload identity federation (AWS)",
    "google.auth.impersonated_credentials": "an impersonated service account",
}


def resolved_endpoint(ctx: Context) -> Endpoint:
    """The endpoint the server's Backend builds for these settings (the embedded fake when nothing is configured)."""
    endpoint = client_config(ctx.settings, lambda: "").endpoint
    assert endpoint is not None
    return endpoint


def backend_check(ctx: Context) -> list[Check]:
    """Fills ctx.verdict: what the server would do with the first message."""
    endpoint = resolved_endpoint(ctx)
    say = _Origins(ctx)
    if endpoint.kind == "fake":
        ctx.verdict = Verdict("fake", endpoint.label(), True)
        return [
            Check(
                "backend",
                True,
                "embedded fake Gemini: no backend is configured, so replies come from the offline fake",
                _configure_hint(ctx),
            )
        ]
    checks = [Check("backend", True, f"{_service(endpoint)} ({_chosen(endpoint, say)})")]
    if endpoint.problem is not None:
        ctx.verdict = Verdict(endpoint.kind, endpoint.label(), False, "config", endpoint.problem)
        return [Check("backend", False, endpoint.problem, _configure_hint(ctx))]
    if endpoint.custom_url:
        checks.append(Check("baseUrl", True, f"{endpoint.base_url} ({say(endpoint.origin('url'))})"))
    if endpoint.kind == "gemini" or endpoint.express:
        key_from = endpoint.origin("key")
        if key_from is None:
            checks.append(
                Check(
                    "credentials",
                    True,
                    f"no API key: requests to {endpoint.base_url} carry a placeholder key",
                    "fine for a keyless proxy; a proxy that needs a key gets it from sidecar.apiKey or GEMINI_API_KEY",
                )
            )
        else:
            express = " (Vertex AI express mode: no project or location)" if endpoint.express else ""
            checks.append(Check("credentials", True, f"an API key ({say(key_from)}){express}"))
        ctx.verdict = Verdict(endpoint.kind, endpoint.label(), True)
        return checks
    return checks + _vertex_adc(ctx, endpoint, say)


def _vertex_adc(ctx: Context, endpoint: Endpoint, say: _Origins) -> list[Check]:
    checks: list[Check] = []
    try:
        credentials, adc_project = load_credentials()
    except CredentialsError as exc:
        ctx.verdict = Verdict("vertex", endpoint.label(), False, "credentials", exc.message)
        if endpoint.project is not None:
            checks.append(Check("project", True, f"{endpoint.project} ({say(endpoint.origin('project'))})"))
        checks.append(_location(endpoint, say))
        return [*checks, Check("adc", False, exc.message, ONLINE_HINT)]
    source = credentials_source()
    if endpoint.project is not None:
        checks.append(Check("project", True, f"{endpoint.project} ({say(endpoint.origin('project'))})"))
    elif adc_project:
        endpoint = endpoint.with_project(adc_project)
        checks.append(Check("project", True, f"{adc_project} (from the credentials, {source})"))
    else:
        message = missing_project_message(source)  # as ModelClient raises it (a `config` error)
        ctx.verdict = Verdict("vertex", endpoint.label(), False, "config", message)
        checks.append(
            Check(
                "project",
                False,
                message,
                "set GOOGLE_CLOUD_PROJECT (or sidecar.vertexProject) to your Google Cloud project id",
            )
        )
    checks.append(_location(endpoint, say))
    checks.append(Check("adc", True, f"{describe_credentials(credentials)} from {source}; no API key is sent"))
    if ctx.verdict is None:
        ctx.verdict = Verdict("vertex", endpoint.label(), True)
    return checks


def _location(endpoint: Endpoint, say: _Origins) -> Check:
    return Check("location", True, f"{endpoint.location} ({say(endpoint.origin('location'))})")


def describe_credentials(credentials: Any) -> str:
    """The kind of credentials and the account, in words (never a token or key)."""
    module = type(credentials).__module__
    kind = ADC_KINDS.get(module, "credentials")
    account = getattr(credentials, "service_account_email", None)
    who = f", account {account}" if isinstance(account, str) and "@" in account else ""
    return f"{kind} ({module}.{type(credentials).__name__}{who})"


def _chosen(endpoint: Endpoint, say: _Origins) -> str:
    origin = endpoint.origin("backend")
    if origin in (None, "default"):
        return "Vertex AI is not chosen and an API key or base URL is set"
    return "chosen " + say(origin)


def _service(endpoint: Endpoint) -> str:
    if endpoint.kind == "gemini":
        return "Gemini API"
    return "Vertex AI, express mode (API key)" if endpoint.express else "Vertex AI with Application Default Credentials"


def _configure_hint(ctx: Context) -> str:
    if ctx.front_end == "editor":
        key = (
            "for the Gemini API: GEMINI_API_KEY in the environment the editor starts in, or VS Code’s "
            "“Sidecar: Set API Key” (not an apiKey in a Neovim config: config files get shared)"
        )
    else:
        key = (
            f'for the Gemini API: GEMINI_API_KEY in the environment `sidecar acp` starts in, or "apiKey" in '
            f"{ctx.user_file}"
        )
    return (
        f'{key}; for Vertex AI: GOOGLE_GENAI_USE_VERTEXAI=true (or sidecar.backend "vertex") with '
        "GOOGLE_CLOUD_PROJECT and `gcloud auth application-default login`"
    )


class _Origins:
    """An origin from gemini/routes.py (`sidecar.x`, an environment variable, "default") in words."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    def __call__(self, origin: str | None) -> str:
        if origin is None or origin == "default":
            return "the default"
        if origin.startswith("sidecar."):
            if self._ctx.front_end == "editor":
                return f"from {origin} in the editor's settings"
            return f'from "{origin.removeprefix("sidecar.")}" in {self._ctx.user_file}'
        return f"from the environment variable {origin}"
