"""The fake-Gemini notice names each editor's own way to set an API key."""

from __future__ import annotations

from pathlib import Path

from sidecar.gemini.backend import acp_key_hint, key_hint


def test_each_editor_is_told_its_own_way() -> None:
    assert "Sidecar: Set API Key" in key_hint("Visual Studio Code")
    assert "Sidecar: Set API Key" in key_hint("code-server")
    assert key_hint("Neovim").startswith("set GEMINI_API_KEY in the environment Neovim starts from")
    assert "setup({settings={apiKey" not in key_hint("Neovim")  # the health check advises against a key in config
    assert key_hint(None) == "set the apiKey setting or GEMINI_API_KEY"
    hint = acp_key_hint(Path("/home/me/.config/sidecar/settings.json"))
    assert "GEMINI_API_KEY" in hint and "/home/me/.config/sidecar/settings.json" in hint
    assert "sidecar.apiKey" not in hint and "`" not in hint
