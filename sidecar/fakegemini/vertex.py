"""The fake's routes (Gemini API, Vertex AI, Vertex express mode), its OAuth token endpoint and bearer-token checks."""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl

from . import models_list

_OPS = "generateContent|streamGenerateContent|countTokens"
GEMINI_PATH = re.compile(rf"^/v1beta/models/([^/:]+):({_OPS})$")
VERTEX_PATH = re.compile(rf"^/v1beta1/projects/([^/]+)/locations/([^/]+)/publishers/([^/]+)/models/([^/:]+):({_OPS})$")
EXPRESS_PATH = re.compile(rf"^/v1beta1/publishers/([^/]+)/models/([^/:]+):({_OPS})$")
TOKEN_PATH = "/token"

Api = Literal["gemini", "vertex", "express", "token", ""]

#: The real Vertex AI's answers to requests without a usable OAuth token.
NO_CREDENTIALS = (
    "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other "
    "valid authentication credential."
)
BAD_TOKEN = (
    "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid "
    "authentication credential."
)
KEY_NOT_SUPPORTED = (
    "API keys are not supported by this API. Expected OAuth2 access token or other authentication credentials that "
    "assert a principal."
)
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@dataclass(frozen=True)
class Route:
    api: Api
    model: str | None = None
    op: str | None = None
    project: str | None = None
    location: str | None = None


def route(path: str) -> Route:
    """Which API a path belongs to, with the model, the operation, and for Vertex AI the project and location."""
    if path == TOKEN_PATH:
        return Route("token")
    if models_list.GEMINI_LIST.match(path):
        return Route("gemini", None, "list")
    m = models_list.VERTEX_LIST.match(path)
    if m:
        return Route("vertex" if m.group(1) else "express", None, "list", m.group(1), m.group(2))
    m = GEMINI_PATH.match(path)
    if m:
        return Route("gemini", m.group(1), m.group(2))
    m = VERTEX_PATH.match(path)
    if m:
        return Route("vertex", m.group(4), m.group(5), m.group(1), m.group(2))
    m = EXPRESS_PATH.match(path)
    if m:
        return Route("express", m.group(2), m.group(3))
    return Route("")


class TokenIssuer:
    """Issues access tokens to the refresh-token (authorized user) and JWT-bearer (service account) grants, and
    checks the bearer tokens Vertex AI requests carry. Not locked itself (FakeGemini holds its lock)."""

    def __init__(self, lifetime: int = 3600) -> None:
        self.default_lifetime = lifetime
        self.lifetime = lifetime
        self._expiry: dict[str, float] = {}

    def reset(self) -> None:
        self.lifetime = self.default_lifetime
        self.revoke()

    def revoke(self) -> None:
        self._expiry.clear()

    def grant(self, raw: bytes) -> tuple[int, dict[str, Any], dict[str, str]]:
        """(HTTP status, JSON answer, what to log of the form: grant_type and the client, never a secret)."""
        form = dict(parse_qsl(raw.decode("utf-8", "replace")))
        grant = form.get("grant_type", "")
        logged = {"grant_type": grant}
        if grant == "refresh_token":  # authorized user (client id/secret in the form or in Basic auth)
            missing = [] if form.get("refresh_token") else ["refresh_token"]
        elif grant == JWT_BEARER:
            missing = [] if form.get("assertion", "").count(".") == 2 else ["assertion (a signed JWT)"]
        else:
            return 400, oauth_error("unsupported_grant_type", f"Invalid grant_type: {grant}"), logged
        if missing:
            return 400, oauth_error("invalid_request", f"Missing required parameter: {', '.join(missing)}"), logged
        token = self.new_token()
        answer: dict[str, Any] = {"access_token": token, "expires_in": self.lifetime, "token_type": "Bearer"}
        if grant == JWT_BEARER:
            answer["scope"] = "https://www.googleapis.com/auth/cloud-platform"
        return 200, answer, logged

    def new_token(self) -> str:
        """A token valid for `lifetime` seconds from now."""
        token = f"fake-access-token-{secrets.token_hex(6)}"
        self._expiry[token] = time.time() + self.lifetime
        return token

    def problem(self, bearer: str | None, api_key: str | None) -> str | None:
        """None when `bearer` is a live token this fake issued, else the real API's 401 message."""
        if bearer is None:
            return KEY_NOT_SUPPORTED if api_key else NO_CREDENTIALS
        expiry = self._expiry.get(bearer)
        if expiry is None or expiry <= time.time():
            return BAD_TOKEN
        return None


def oauth_error(error: str, description: str) -> dict[str, str]:
    """An OAuth 2 token endpoint error body (RFC 6749 §5.2), as Google's token endpoint sends it."""
    return {"error": error, "error_description": description}


def grant_type_of(raw: bytes) -> str:
    return dict(parse_qsl(raw.decode("utf-8", "replace"))).get("grant_type", "")


def bearer_of(authorization: str | None) -> str | None:
    if authorization and authorization[:7].lower() == "bearer ":
        return authorization[7:].strip() or None
    return None
