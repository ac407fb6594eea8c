"""Application Default Credentials for Vertex AI through google-auth: found once, refreshed before they expire."""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

log = logging.getLogger(__name__)

SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
LOGIN_HINT = (
    "run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a service-account key "
    "file (or use an API key: Vertex AI express mode)"
)


def missing_project_message(source: str) -> str:
    """Vertex AI with ADC and no project in the settings, the environment or the credentials (a config error)."""
    return (
        "Vertex AI needs a Google Cloud project: set sidecar.vertexProject or GOOGLE_CLOUD_PROJECT "
        f"(the credentials from {source} do not name one)."
    )


class CredentialsError(Exception):
    """Credentials that are missing or do not work, with what to do about it. `retryable`: a network failure."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable


def credentials_source() -> str:
    """Where google-auth looks: the GOOGLE_APPLICATION_CREDENTIALS file, gcloud's ADC file, the metadata server."""
    explicit = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    if explicit:
        return f"GOOGLE_APPLICATION_CREDENTIALS={explicit}"
    config = os.environ.get("CLOUDSDK_CONFIG") or os.path.join(os.path.expanduser("~"), ".config", "gcloud")
    path = os.path.join(config, "application_default_credentials.json")
    return path if os.path.exists(path) else "the GCE metadata server"


def load_credentials() -> tuple[Any, str | None]:
    """Application Default Credentials as google-auth finds them, and the project they name (no token is fetched,
    except from the metadata server). Blocking. Raises CredentialsError saying what to do."""
    import google.auth
    from google.auth import exceptions

    try:
        creds, project = google.auth.default(scopes=list(SCOPES))
    except exceptions.DefaultCredentialsError as exc:
        raise CredentialsError(
            f"Vertex AI needs Application Default Credentials and none could be loaded ({_one_line(exc)}). "
            f"To fix it, {LOGIN_HINT}."
        ) from None
    except (ValueError, OSError) as exc:
        raise CredentialsError(
            f"The Application Default Credentials ({credentials_source()}) cannot be read: {_one_line(exc)}. "
            f"To fix it, {LOGIN_HINT}."
        ) from None
    return creds, project or None


class AdcAuth:
    """One set of Application Default Credentials shared by every call path (streams, generate, countTokens).

    `headers()` loads them on first use and refreshes the token whenever google-auth no longer counts it as valid,
    which happens a few minutes before it expires (google-auth's refresh threshold), so no request carries a token
    about to lapse. Loading and refreshing block on I/O, so they run in a worker thread, one at a time.
    """

    def __init__(self) -> None:
        self.credentials: Any = None
        self.project: str | None = None
        self.source = ""
        self._lock = asyncio.Lock()
        self._request: Any = None

    async def load(self) -> Any:
        """The credentials (loaded on first use). Raises CredentialsError naming what to do."""
        if self.credentials is None:
            async with self._lock:
                if self.credentials is None:
                    await asyncio.to_thread(self._load)
        return self.credentials

    async def headers(self) -> dict[str, str]:
        """Authorization (and quota project) headers with a token that is valid now."""
        creds = await self.load()
        if not creds.valid:
            async with self._lock:
                if not creds.valid:
                    await asyncio.to_thread(self._refresh)
        headers = {"authorization": f"Bearer {creds.token}"}
        quota = getattr(creds, "quota_project_id", None)
        if quota:
            headers["x-goog-user-project"] = str(quota)
        return headers

    def invalidate(self) -> None:
        """The API refused the token (401): fetch a new one before the next request."""
        if self.credentials is not None:
            self.credentials.token = None

    # -- in a worker thread ---------------------------------------------------------------------------
    def _load(self) -> None:
        self.source = credentials_source()
        self.credentials, self.project = load_credentials()
        log.info("Vertex AI: credentials from %s (%s)", self.source, type(self.credentials).__name__)

    def _refresh(self) -> None:
        from google.auth import exceptions

        if self._request is None:
            from google.auth.transport.requests import Request

            self._request = Request()
        try:
            self.credentials.refresh(self._request)
        except exceptions.TransportError as exc:
            raise CredentialsError(
                f"Cannot reach the token endpoint to refresh the Vertex AI access token ({self.source}): "
                f"{_one_line(exc)}",
                retryable=True,
            ) from None
        except exceptions.GoogleAuthError as exc:  # RefreshError, OAuthError (an STS / token endpoint refusal)
            raise CredentialsError(
                f"The Application Default Credentials ({self.source}) were refused when fetching an access token: "
                f"{_one_line(exc)}. To fix it, {LOGIN_HINT}."
            ) from None
        except (ValueError, OSError) as exc:  # e.g. a key file whose private key cannot sign
            raise CredentialsError(
                f"The Application Default Credentials ({self.source}) cannot sign a token request: "
                f"{_one_line(exc)}. To fix it, {LOGIN_HINT}."
            ) from None
        log.debug("Vertex AI: access token refreshed (expires %s)", getattr(self.credentials, "expiry", None))


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:500] or type(exc).__name__
