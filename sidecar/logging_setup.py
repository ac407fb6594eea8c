"""Log hygiene: a filter that removes any configured or environment API key from every log record."""

from __future__ import annotations

import logging
import os
import re

_KNOWN_SECRETS: set[str] = set()
#: `apiKey` values in logged JSON or Python reprs ("apiKey": "…", 'apiKey': '…', api_key='…'), before any key is known.
_KEY_FIELD = re.compile(r"""((?:["']apiKey["']|\bapi_?[kK]ey)\s*[:=]\s*["'])([^"'\\]{4,})(["'])""")


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
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        text = record.exc_text or ""
        cleaned, cleaned_text = redact(message, secrets), redact(text, secrets)
        if cleaned != message or cleaned_text != text:
            record.msg, record.args = cleaned, None
            record.exc_text = cleaned_text or None
            record.exc_info = None if cleaned_text else record.exc_info
        return True


def redact(text: str, secrets: set[str]) -> str:
    """`text` without the given secrets and without the value of any `apiKey` field."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, "<redacted>")
    if "apiKey" in text or "api_key" in text or "apikey" in text:
        text = _KEY_FIELD.sub(r"\1<redacted>\3", text)
    return text
