"""`make demo` keeps working: the scripted session runs end to end against the embedded fake."""

from __future__ import annotations

import os
import subprocess
import sys


def test_demo_shows_streaming_usage_context_and_both_compactions_one_prepared_in_the_background() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    done = subprocess.run(
        [sys.executable, "-m", "sidecar.demo"], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Fake Gemini reply #1" in out
    assert "[status bar] ▱" in out or "[status bar] ▰" in out
    assert "[ide context] FULL" in out and "[ide context] DELTA (cursorMoved" in out
    assert "[compaction · auto] COMPRESSED" in out
    assert "[compaction · manual] COMPRESSED" in out
    after_auto = out.split("[compaction · auto] COMPRESSED", 1)[1]
    assert after_auto.split("[ide context]", 1)[1].startswith(" FULL"), "full context right after compaction"
    assert "sidecar exited with 0" in out
    # The automatic compaction applied a summary prepared in the background while the user chatted.
    before_auto = out.split("[compaction · auto] COMPRESSED", 1)[0]
    assert "[background] usage passed 40%" in before_auto
    assert "[background] summary ready" in before_auto
    assert "· preparing summary" in before_auto or "· summary ready" in before_auto
    assert after_auto.split("[ide context]", 1)[0].rstrip().endswith("without waiting for the model to summarise")
