"""Application Default Credentials files for tests: their token_uri is the fake Gemini's token endpoint."""

from __future__ import annotations

import json
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa


def authorized_user(directory: Path, fake_url: str, name: str = "adc-user.json") -> Path:
    """What `gcloud auth application-default login` writes (refresh-token grant)."""
    path = directory / name
    path.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "fake-client.apps.googleusercontent.com",
                "client_secret": "fake-client-secret",
                "refresh_token": "fake-refresh-token",
                "token_uri": f"{fake_url}/token",
            }
        )
    )
    return path


def service_account(directory: Path, fake_url: str, project: str = "sa-project", name: str = "adc-sa.json") -> Path:
    """A service-account key file (JWT-bearer grant), with a key made for this test run."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    path = directory / name
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": project,
                "private_key_id": "fake-key-id",
                "private_key": pem,
                "client_email": f"sidecar-test@{project}.iam.gserviceaccount.com",
                "client_id": "1234567890",
                "token_uri": f"{fake_url}/token",
            }
        )
    )
    return path


def authorized_user_with_token(directory: Path, token: str, expiry: str, name: str = "adc-token.json") -> Path:
    """An authorized-user file carrying a current access token (google-auth always refreshes this type at Google's
    own endpoint, so an offline test can only exercise it with a token that is still valid)."""
    path = directory / name
    path.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "fake-client.apps.googleusercontent.com",
                "client_secret": "fake-client-secret",
                "refresh_token": "fake-refresh-token",
                "token": token,
                "expiry": expiry,
            }
        )
    )
    return path


def external_authorized_user(directory: Path, fake_url: str, name: str = "adc-external.json") -> Path:
    """An authorized-user file with a configurable token endpoint (`gcloud auth application-default login
    --login-config`, workforce identity): the refresh-token grant goes to the fake."""
    path = directory / name
    path.write_text(
        json.dumps(
            {
                "type": "external_account_authorized_user",
                "audience": "//iam.googleapis.com/locations/global/workforcePools/pool/providers/provider",
                "refresh_token": "fake-refresh-token",
                "token_url": f"{fake_url}/token",
                "token_info_url": f"{fake_url}/tokeninfo",
                "client_id": "fake-client",
                "client_secret": "fake-client-secret",
            }
        )
    )
    return path
