"""Settings decoding: field-by-field fallback, layering, key handling."""

from __future__ import annotations

import pytest

from sidecar.config.settings import Settings, decode_settings


def test_defaults() -> None:
    settings, problems = decode_settings(None)
    assert problems == []
    assert settings.model == "gemini-2.5-flash"
    assert settings.compression_threshold == 0.5
    assert settings.retry_attempts == 3
    assert settings.effective_token_limit() == 1_048_576


def test_section_may_be_nested_under_sidecar() -> None:
    settings, _ = decode_settings({"sidecar": {"model": "gemini-2.5-pro", "tokenLimit": 5000}})
    assert (settings.model, settings.effective_token_limit()) == ("gemini-2.5-pro", 5000)


def test_a_bad_field_falls_back_alone_and_names_field_and_default() -> None:
    settings, problems = decode_settings({"compressionThreshold": "lots", "retryAttempts": 99, "model": "m"})
    assert settings.compression_threshold == 0.5
    assert settings.retry_attempts == 3
    assert settings.model == "m"
    by_field = {p.field: p.message() for p in problems}
    assert set(by_field) == {"compressionThreshold", "retryAttempts"}
    assert "sidecar.compressionThreshold" in by_field["compressionThreshold"]
    assert "0.5" in by_field["compressionThreshold"]
    assert "default 3" in by_field["retryAttempts"]


@pytest.mark.parametrize("value", [0, -0.1, 1.5, True, None, [0.5]])
def test_threshold_range(value: object) -> None:
    settings, problems = decode_settings({"compressionThreshold": value})
    assert settings.compression_threshold == 0.5
    assert [p.field for p in problems] == ["compressionThreshold"]


def test_layering_keeps_values_not_mentioned_again() -> None:
    base, _ = decode_settings({"apiKey": "k-123456", "model": "a"})
    layered, _ = decode_settings({"sidecar": {"model": "b"}}, base=base)
    assert (layered.api_key, layered.model) == ("k-123456", "b")


def test_unknown_keys_and_non_objects() -> None:
    settings, problems = decode_settings({"whatever": 1})
    assert problems == [] and settings == Settings()
    settings, problems = decode_settings("nonsense")
    assert settings == Settings() and len(problems) == 1


def test_repr_never_shows_the_key() -> None:
    settings, _ = decode_settings({"apiKey": "AIza-secret-value"})
    assert "AIza-secret-value" not in repr(settings)
    assert "<redacted>" in repr(settings)


def test_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "env-key-1234")
    assert Settings().effective_api_key() == "env-key-1234"
    assert Settings(api_key="explicit").effective_api_key() == "explicit"
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:1")
    assert Settings().effective_base_url() == "http://127.0.0.1:1"


def test_backend_settings_decode_and_bad_values_fall_back() -> None:
    from sidecar.config.settings import decode_settings

    ok, problems = decode_settings({"backend": "vertex", "vertexProject": "my-proj-1", "vertexLocation": "global"})
    assert problems == [] and (ok.backend, ok.vertex_project, ok.vertex_location) == ("vertex", "my-proj-1", "global")
    bad, problems = decode_settings({"backend": "openai", "vertexProject": "My Project!", "vertexLocation": "x y"})
    assert (bad.backend, bad.vertex_project, bad.vertex_location) == (None, None, None)
    assert sorted(p.field for p in problems) == ["backend", "vertexLocation", "vertexProject"]
    assert any("a Google Cloud project id" in p.reason for p in problems)


@pytest.mark.parametrize("raw", [[], {"sidecar": []}, {"sidecar": {}}, {}])
def test_an_empty_list_means_no_settings(raw: object) -> None:
    """Neovim encodes an empty Lua table as `[]`: `setup({})` must not warn that the section is invalid."""
    settings, problems = decode_settings(raw)
    assert problems == [] and settings == Settings()


def test_a_non_empty_list_is_still_invalid() -> None:
    settings, problems = decode_settings({"sidecar": [1]})
    assert settings == Settings() and [p.field for p in problems] == ["(section)"]
