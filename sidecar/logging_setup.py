"""Where the log goes (a private file, or stderr) and log hygiene: no API key in any record."""

from __future__ import annotations

import logging
import os
import re
import sys
from typing import TextIO

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

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


def configure_logging(level: str, log_file: str | None) -> None:
    """Records at `level` to `log_file`, else to stderr. With a log file, stderr still gets the ERROR records:
    an editor shows a server's stderr as errors (Neovim's LSP log marks every stderr line `[ERROR]`), so only
    real errors belong there. Never stdout: it carries JSON-RPC."""
    handlers: list[logging.Handler] = [logging.StreamHandler(_private_log(log_file) if log_file else sys.stderr)]
    if log_file:
        errors = logging.StreamHandler(sys.stderr)
        errors.setLevel(logging.ERROR)
        handlers.append(errors)
    for handler in handlers:
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        handler.addFilter(KeyRedactingFilter())
    root = logging.getLogger()
    root.handlers[:] = handlers
    root.setLevel(level)
    # pygls logs every message body at INFO; keep that for DEBUG runs only.
    if level != "DEBUG":
        logging.getLogger("pygls").setLevel(logging.WARNING)


def _private_log(path: str) -> TextIO:
    """The log file, appended to; it holds conversations at DEBUG, so only its owner may read it (0600)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, 0o600)  # also when the file existed with looser permissions
    return open(fd, "a", encoding="utf-8", buffering=1)
