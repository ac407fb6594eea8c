"""The settings in effect, layered by the server's own code for the front-end checked, and every problem in them."""

from __future__ import annotations

import os

from sidecar.config.layers import SettingsLayers, acp_layers
from sidecar.config.settings import decode_settings
from sidecar.config.workspace_file import read_workspace_settings, settings_path
from sidecar.doctor.report import Check, Context

EDITOR_ONLY = (
    "VS Code and Neovim pass their own settings: “Sidecar: Run Doctor” and “:checkhealth sidecar” include them"
)


def settings_check(ctx: Context) -> list[Check]:
    """Fills ctx.settings exactly as the server would (SettingsLayers for the editors, acp_layers for ACP)."""
    workspace_file = settings_path(ctx.project)
    found = os.path.exists(workspace_file)
    checks: list[Check] = []
    if ctx.front_end == "editor":
        if ctx.editor_settings_error is not None:
            checks.append(
                Check(
                    "settings",
                    False,
                    ctx.editor_settings_error,
                    "pass the editor's `sidecar` settings as one JSON object (the editors do this themselves)",
                )
            )
        layers = SettingsLayers()
        layers.init_options = ctx.editor_settings
        ctx.settings, problems = layers.resolve([ctx.project], ctx.trusted)
        trust = "trusted" if ctx.trusted else "not trusted: its hooks stay off"
        where = (
            f"the editor's settings, then {workspace_file} ({trust})"
            if found
            else (f"the editor's settings ({workspace_file} does not exist)")
        )
        checks.append(Check("settings", True, f"read from {where}"))
    else:
        ctx.settings, problems = acp_layers(ctx.user_file).resolve([ctx.project], trusted=False)
        user = str(ctx.user_file) if ctx.user_file.exists() else f"{ctx.user_file} (does not exist)"
        workspace = (
            f"{workspace_file} (as untrusted: its hooks stay off)" if found else (f"{workspace_file} (does not exist)")
        )
        checks.append(Check("settings", True, f"read from the user file {user}, then {workspace}", EDITOR_ONLY))
    sources = _problem_sources(ctx)
    checks += [Check("settings", False, message, _hint(message, sources.get(message))) for message in problems]
    untrusted_hooks = _untrusted_hooks(ctx)
    if untrusted_hooks:
        checks.append(
            Check(
                "hooks",
                True,
                untrusted_hooks,
                (
                    "trust the workspace in the editor to let them run"
                    if ctx.front_end == "editor"
                    else "`sidecar acp` never runs a workspace file's hooks: put them in your user settings file"
                ),
            )
        )
    return checks


def _problem_sources(ctx: Context) -> dict[str, str]:
    """Which source each invalid-value message comes from, by decoding each source on its own with the same decoder."""
    sources: dict[str, str] = {}
    section, _ = read_workspace_settings([ctx.project], ctx.trusted if ctx.front_end == "editor" else False)
    for problem in decode_settings(section)[1]:
        sources[problem.message()] = settings_path(ctx.project)
    if ctx.front_end == "editor":
        for problem in decode_settings(ctx.editor_settings)[1]:
            sources[problem.message()] = "the editor's settings"
    return sources


def _hint(message: str, source: str | None) -> str:
    if "cannot be set from a workspace file" in message:
        return (
            "set it in your own settings (the editor's settings, or the user settings file for `sidecar acp`) "
            "and remove it from the workspace file"
        )
    if "is not valid JSON" in message:
        return "fix the JSON syntax at the line and column named, or delete the file"
    if message.startswith("Setting sidecar."):
        where = f" in {source}" if source else ""
        return f"correct the value{where} (docs/settings.md lists each setting's type and range)"
    if "Cannot read" in message:
        return "make the file readable by you, or remove it"
    return "fix or remove the file named"


def _untrusted_hooks(ctx: Context) -> str | None:
    """Hooks the workspace file defines that stay off because the workspace is not trusted."""
    trusted = ctx.trusted if ctx.front_end == "editor" else False
    if trusted:
        return None
    with_hooks, _ = read_workspace_settings([ctx.project], True)
    without, _ = read_workspace_settings([ctx.project], False)
    if "hooks" in with_hooks and "hooks" not in without:
        return f"{settings_path(ctx.project)} defines hooks; they stay off because the workspace is not trusted"
    return None
