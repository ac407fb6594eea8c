"""`sidecar acp`: the subcommand's help text and options (the server itself is imported only when it runs)."""

from __future__ import annotations

import argparse
from typing import Any

DESCRIPTION = """\
Serve the Agent Client Protocol (ACP v1: newline-delimited JSON-RPC on stdin/stdout) for editors that speak it:
Zed, JetBrains IDEs, Emacs agent-shell, Neovim CodeCompanion and avante.nvim, acpx. The editor starts this
command; each session/new gets a recorded conversation for its cwd (the same store as the editor protocol, so a
session started in VS Code can be loaded here and the other way round).

Supported: initialize, session/new, session/prompt (streamed replies, tool calls with diffs, permission requests,
stop reasons), session/cancel, session/load (replays the whole conversation), session/resume, session/list,
session/close, session/set_mode (approval modes default / autoEdit / yolo), usage_update after every turn and
compaction, slash commands /compress [focus], /undo-compaction, /transcript, /new, /context (what fills the
context window), the model as a config option (and Gemini CLI's session/set_model), and compaction_update for
clients that advertise session.compaction. fs/read_text_file and fs/write_text_file are used when the client
offers them; otherwise the sidecar's own confined file tools read and write the files.

Settings (ACP has no settings channel), later ones win:
  1. the user settings file: --settings FILE, else $SIDECAR_SETTINGS, else $XDG_CONFIG_HOME/sidecar/settings.json
     (default ~/.config/sidecar/settings.json); same keys as the editors' `sidecar` section (docs/settings.md)
  2. <cwd>/.sidecar/settings.json (it cannot set apiKey, baseUrl or approvalMode; its hooks stay off)
  GEMINI_API_KEY / GOOGLE_API_KEY and GOOGLE_GEMINI_BASE_URL apply when no file sets apiKey / baseUrl. Without
  a key the replies come from the embedded offline fake Gemini, and the first reply says so.
Recordings go to $SIDECAR_HOME (default ~/.local/share/sidecar). The log goes to stderr or --log-file.
See docs/acp.md for editor configuration snippets."""


def add_parser(subparsers: Any) -> None:
    """Add `sidecar acp [--settings FILE]` to the command line."""
    parser = subparsers.add_parser(
        "acp",
        help="serve the Agent Client Protocol on stdio (Zed, JetBrains, Emacs, CodeCompanion, avante.nvim)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--settings", metavar="FILE", help="the user settings file (see above)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import gc

    from sidecar.allocator import return_big_buffers_to_the_os

    return_big_buffers_to_the_os()
    gc.disable()  # the SDK's ~300 pydantic models: collecting while they are built only costs start-up time
    from sidecar.acp.agent import run
    from sidecar.config.user_file import user_settings_path

    gc.enable()
    return run(user_settings_path(args.settings))
