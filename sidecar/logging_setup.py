"""Log hygiene: a filter that removes any configured or environment API key from every log record."""

from __future__ import annotations

import logging
import os

_KNOWN_SECRETS: set[str] = set()


def register_secret(value: str | None) -> None:
    """Remember a secret so that no log line ever shows it."""
    if value and len(value) >= 4:
        _KNOWN_SECRETS.add(value)


class KeyRedactingFilter(logging.Filter):
    """Replaces API keys (from settings or GEMINI_API_KEY/GOOGLE_API_KEY) in formatted records."""

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = set(_KNOWN_SECRETS)
        for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
            value = os.environ.get(name)
            if value and len(value) >= 4:
                secrets.add(value)
        if not secrets:
            return True
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        text = record.exc_text or ""
        if any(s in message or s in text for s in secrets):
            for secret in secrets:
                message = message.replace(secret, "<redacted>")
                text = text.replace(secret, "<redacted>")
            record.msg, record.args = message, None
            record.exc_text = text or None
            record.exc_info = None if text else record.exc_info
        return True
