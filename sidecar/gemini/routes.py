"""Where Gemini requests go (Gemini API, Vertex AI with ADC or express mode, a proxy, the fake), read from settings."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from sidecar.config.settings import Settings

GEMINI_URL = "https://generativelanguage.googleapis.com"
VERTEX_GLOBAL_URL = "https://aiplatform.googleapis.com"
DEFAULT_VERTEX_LOCATION = "us-central1"
GEMINI_API_VERSION = "v1beta"
VERTEX_API_VERSION = "v1beta1"
#: Sent to a keyless proxy (baseUrl without a key): the API client needs some key.
PLACEHOLDER_KEY = "sidecar-no-key"

Kind = Literal["gemini", "vertex", "fake"]


@dataclass(frozen=True)
class Endpoint:
    """One backend: its base URL and API version, and how requests are authorised (key, or ADC when none)."""

    kind: Kind
    base_url: str
    api_version: str
    api_key: str | None = None
    project: str | None = None
    location: str | None = None
    custom_url: bool = False
    #: A configuration that cannot work (e.g. the Gemini API chosen without a key): raised on the first call.
    problem: str | None = None
    #: Where each value came from, for `sidecar doctor`: ("backend" | "key" | "url" | "project" | "location", the
    #: setting `sidecar.x` or the environment variable, or "default"). Not part of the endpoint's identity.
    origins: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def origin(self, what: str) -> str | None:
        return dict(self.origins).get(what)

    @property
    def uses_adc(self) -> bool:
        """Vertex AI with Application Default Credentials (no API key is ever sent then)."""
        return self.kind == "vertex" and self.api_key is None

    @property
    def express(self) -> bool:
        return self.kind == "vertex" and self.api_key is not None

    def with_project(self, project: str) -> Endpoint:
        return replace(self, project=project)

    def model_path(self, model: str) -> str:
        """The model's resource name as google-genai builds it for this backend."""
        if not model or ".." in model or "?" in model or "&" in model or "#" in model:
            raise ValueError(f"invalid model name {model!r}")
        if self.kind != "vertex":
            return model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"
        if model.startswith(("projects/", "models/", "publishers/")):
            name = model
        elif "/" in model:
            publisher, model_id = model.split("/", 1)
            name = f"publishers/{publisher}/models/{model_id}"
        else:
            name = f"publishers/google/models/{model}"
        if self.uses_adc and not name.startswith("projects/"):
            name = f"projects/{self.project}/locations/{self.location}/{name}"
        return name

    def url(self, model: str, method: str) -> str:
        return f"{self.base_url.rstrip('/')}/{self.api_version}/{self.model_path(model)}:{method}"

    def label(self) -> str:
        """What the status bar tooltip and :checkhealth say the sidecar talks to."""
        if self.kind == "fake":
            return "embedded fake Gemini"
        where = f" at {self.base_url}" if self.custom_url else ""
        if self.kind == "gemini":
            return f"Gemini API{where}"
        if self.express:
            return f"Vertex AI (express mode, API key){where}"
        project = self.project or "project from the credentials"
        return f"Vertex AI ({project}, {self.location}){where}"


def _env_flag(value: str | None) -> bool:
    return value is not None and value.strip().lower() in ("true", "1")


def resolve(settings: Settings, env: Mapping[str, str] | None = None) -> Endpoint | None:
    """The configured backend, or None when none is configured at all (then the embedded fake answers).

    Settings win over the environment; the environment is read as google-genai and Gemini CLI read it.
    """
    env = os.environ if env is None else env
    if settings.backend is not None:
        vertex = settings.backend == "vertex"
        chosen = "sidecar.backend"
    else:
        vertex = _env_flag(env.get("GOOGLE_GENAI_USE_VERTEXAI"))
        chosen = "GOOGLE_GENAI_USE_VERTEXAI" if vertex else "default"
    if vertex:
        return _vertex(settings, env, chosen)
    key = settings.effective_api_key()
    base = settings.effective_base_url()
    if key is None and base is None:
        if settings.backend == "gemini":
            return Endpoint(
                "gemini",
                GEMINI_URL,
                GEMINI_API_VERSION,
                problem="The Gemini API is selected (sidecar.backend) but no API key is set: set sidecar.apiKey or "
                'GEMINI_API_KEY (https://aistudio.google.com/apikey), or choose "vertex" for Vertex AI.',
                origins=(("backend", chosen),),
            )
        return None
    origins = [("backend", chosen)]
    if key is not None:
        origins.append(("key", _first_set("sidecar.apiKey", settings.api_key, env, "GEMINI_API_KEY", "GOOGLE_API_KEY")))
    if base is not None:
        origins.append(("url", _first_set("sidecar.baseUrl", settings.base_url, env, "GOOGLE_GEMINI_BASE_URL")))
    return Endpoint(
        "gemini",
        base or GEMINI_URL,
        GEMINI_API_VERSION,
        api_key=key or PLACEHOLDER_KEY,
        custom_url=base is not None,
        origins=tuple(origins),
    )


def _first_set(setting: str, value: str | None, env: Mapping[str, str], *names: str) -> str:
    """Which source a resolved value came from: the setting when set, else the first environment variable set."""
    if value:
        return setting
    return next((name for name in names if env.get(name)), "default")


def _vertex(settings: Settings, env: Mapping[str, str], chosen: str) -> Endpoint:
    env_project = env.get("GOOGLE_CLOUD_PROJECT") or None
    env_key = env.get("GOOGLE_API_KEY") or env.get("GEMINI_API_KEY") or None
    base = settings.base_url or env.get("GOOGLE_VERTEX_BASE_URL") or None
    origins = [("backend", chosen)]
    if base is not None:
        origins.append(("url", _first_set("sidecar.baseUrl", settings.base_url, env, "GOOGLE_VERTEX_BASE_URL")))
    # As google-genai decides: what is set explicitly (here: settings) wins over what the environment implies, and
    # between two implicit values a project wins over a key.
    if settings.vertex_project:
        project, key = settings.vertex_project, None
        origins.append(("project", "sidecar.vertexProject"))
    elif settings.api_key:
        project, key = None, settings.api_key
        origins.append(("key", "sidecar.apiKey"))
    elif env_project:
        project, key = env_project, None
        origins.append(("project", "GOOGLE_CLOUD_PROJECT"))
    else:
        project, key = None, env_key
        if key is not None:
            origins.append(("key", _first_set("", None, env, "GOOGLE_API_KEY", "GEMINI_API_KEY")))
    if key is not None:  # express mode: no project or location in the path
        return Endpoint(
            "vertex",
            base or VERTEX_GLOBAL_URL,
            VERTEX_API_VERSION,
            api_key=key,
            custom_url=base is not None,
            origins=tuple(origins),
        )
    location = settings.vertex_location or env.get("GOOGLE_CLOUD_LOCATION") or DEFAULT_VERTEX_LOCATION
    location_from = _first_set("sidecar.vertexLocation", settings.vertex_location, env, "GOOGLE_CLOUD_LOCATION")
    origins.append(("location", location_from))
    if base is None:
        base = VERTEX_GLOBAL_URL if location == "global" else f"https://{location}-aiplatform.googleapis.com"
        custom = False
    else:
        custom = True
    return Endpoint(
        "vertex",
        base,
        VERTEX_API_VERSION,
        project=project,
        location=location,
        custom_url=custom,
        origins=tuple(origins),
    )
