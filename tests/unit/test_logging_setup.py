"""Where the log goes: with --log-file, records go to the file and only real errors to stderr (the editor's log)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import logging, sys
from sidecar.logging_setup import configure_logging
configure_logging("INFO", sys.argv[1] if len(sys.argv) > 1 else None)
log = logging.getLogger("sidecar.test")
log.info("an info line")
log.warning("a warning line")
log.error("an error line with key AIzaTESTKEY1234", extra={})
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {"GEMINI_API_KEY": "AIzaTESTKEY1234", "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        check=True,
    )


@pytest.mark.process
def test_with_a_log_file_stderr_gets_the_errors_only(tmp_path: Path) -> None:
    log_file = tmp_path / "sidecar.log"
    done = run(str(log_file))
    written = log_file.read_text()
    assert "an info line" in written and "a warning line" in written and "an error line" in written
    assert "an info line" not in done.stderr and "a warning line" not in done.stderr, done.stderr
    assert "an error line" in done.stderr
    assert "AIzaTESTKEY1234" not in done.stderr + written  # both handlers redact keys
    assert done.stdout == ""


@pytest.mark.process
def test_without_a_log_file_everything_goes_to_stderr() -> None:
    done = run()
    assert "an info line" in done.stderr and "an error line" in done.stderr
    assert done.stdout == ""
