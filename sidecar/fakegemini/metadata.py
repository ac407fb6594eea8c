"""A fake GCE metadata server (GCE_METADATA_HOST / GCE_METADATA_IP point here): google-auth's third ADC source."""

from __future__ import annotations

from typing import Any, Protocol

import msgspec

ROOT = "/computeMetadata/v1/"
PROJECT = "metadata-project"
EMAIL = f"sidecar-test@{PROJECT}.iam.gserviceaccount.com"
SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]


class TokenSource(Protocol):
    def metadata_token(self, path: str) -> dict[str, Any]: ...


def is_metadata_path(path: str) -> bool:
    return path == "/" or path.startswith(ROOT)


def answer(fake: TokenSource, path: str, flavor: str | None) -> tuple[int, bytes, str]:
    """(status, body, content type) for a metadata request; like the real server, it needs Metadata-Flavor: Google."""
    if flavor != "Google":
        return 403, b"Missing Metadata-Flavor:Google header.", "text/plain"
    if path == "/":
        return 200, b"computeMetadata/\n", "text/plain"
    name = path.removeprefix(ROOT)
    if name == "project/project-id":
        return 200, PROJECT.encode(), "text/plain"
    if name == "universe/universe-domain":
        return 200, b"googleapis.com", "text/plain"
    if name == "instance/service-accounts/default/":
        info: dict[str, Any] = {"email": EMAIL, "scopes": SCOPES, "aliases": ["default"]}
        return 200, msgspec.json.encode(info), "application/json"
    if name == "instance/service-accounts/default/token":
        return 200, msgspec.json.encode(fake.metadata_token(path)), "application/json"
    return 404, b"Not Found", "text/plain"
