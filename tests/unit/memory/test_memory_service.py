"""The memory service over real files: discovery order, trust, subfolder files once, changes on disk, addMemory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sidecar.memory.service import MemoryService
from sidecar.protocol import errors
from sidecar.protocol.memory import MemoryInfo
from sidecar.session import Session
from sidecar.tools import protected


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """home/.gemini/GEMINI.md; repo/.git, repo/GEMINI.md, repo/Api/AGENTS.md (a subfolder sorting before
    GEMINI.md), workspace folder repo/Api."""
    home, repo = tmp_path / "home", tmp_path / "repo"
    _write(home / ".gemini" / "GEMINI.md", "global rule")
    (repo / ".git").mkdir(parents=True)
    _write(repo / "GEMINI.md", "root rule")
    _write(repo / "Api" / "AGENTS.md", "api rule")
    _write(repo / "Api" / "sub" / "GEMINI.md", "sub rule")
    _write(repo / "Api" / "sub" / "code.py", "x = 1")
    return home, repo


Made = tuple[MemoryService, list[MemoryInfo], list[str]]


def _service(home: Path, folder: Path, trusted: bool | None = None) -> Made:
    session = Session(workspace_folders=[str(folder)])
    session.ide.trusted = trusted
    infos: list[MemoryInfo] = []
    warnings: list[str] = []
    return MemoryService(session, infos.append, warnings.append, home=home), infos, warnings


async def test_global_then_project_files_ancestor_first(layout: tuple[Path, Path]) -> None:
    home, repo = layout
    memory, infos, warnings = _service(home, repo / "Api")
    info = await memory.load()
    assert [(f.path, f.scope) for f in info.files] == [
        (str(home / ".gemini" / "GEMINI.md"), "global"),
        (str(repo / "GEMINI.md"), "project"),
        (str(repo / "Api" / "AGENTS.md"), "project"),
    ]
    assert info.tokens == sum(f.tokens for f in info.files) > 0
    assert infos == [info] and warnings == []
    section = memory.system_section()
    assert section is not None and "global rule" in section and "root rule" not in section
    project = memory.project_section()
    assert project.index("root rule") < project.index("api rule") and "global rule" not in project


async def test_an_untrusted_workspace_loads_only_global_and_says_why(layout: tuple[Path, Path]) -> None:
    home, repo = layout
    memory, _infos, warnings = _service(home, repo / "Api", trusted=False)
    info = await memory.load()
    assert [f.scope for f in info.files] == ["global"]
    assert info.skipped_project_files == 2 and info.skipped_reason and "not trusted" in info.skipped_reason
    assert len(warnings) == 1 and warnings[0].startswith("2 project context files were not loaded")
    assert memory.project_section() == ""
    assert await memory.just_in_time([str(repo / "Api" / "sub" / "code.py")]) == ""


async def test_a_subfolder_file_is_delivered_once_per_load(layout: tuple[Path, Path]) -> None:
    home, repo = layout
    memory, infos, _ = _service(home, repo / "Api")
    await memory.load()
    block = await memory.just_in_time([str(repo / "Api" / "sub" / "code.py")])
    assert "--- Newly Discovered Project Context ---" in block and "sub rule" in block
    assert "api rule" not in block  # already in the session context
    assert await memory.just_in_time([str(repo / "Api" / "sub")]) == ""
    assert infos[-1].files[-1].scope == "subdirectory"
    await memory.refresh()
    assert "sub rule" in await memory.just_in_time([str(repo / "Api" / "sub" / "new.py")])


async def test_a_changed_file_becomes_a_context_turn(layout: tuple[Path, Path]) -> None:
    home, repo = layout
    memory, _, _ = _service(home, repo / "Api")
    await memory.load()
    assert await memory.check() is False and memory.take_changes() is None
    _write(repo / "GEMINI.md", "root rule, version 2")
    _write(home / ".gemini" / "GEMINI.md", "global rule, version 2")
    os.remove(repo / "Api" / "AGENTS.md")
    assert await memory.check() is True
    turn = memory.take_changes()
    assert turn is not None
    assert "root rule, version 2" in turn and f"{repo / 'Api' / 'AGENTS.md'}: no longer loaded" in turn
    assert f"{home / '.gemini' / 'GEMINI.md'} (global)" in turn and "global rule, version 2" not in turn
    assert "global rule, version 2" in (memory.system_section() or "")
    assert memory.take_changes() is None


async def test_add_memory_in_both_scopes(layout: tuple[Path, Path]) -> None:
    home, repo = layout
    memory, _, _ = _service(home, repo / "Api")
    info = await memory.add("prefers tabs\n## not a heading", "global")
    assert (home / ".gemini" / "GEMINI.md").read_text() == (
        "global rule\n\n## Gemini Added Memories\n- prefers tabs ## not a heading\n"
    )
    assert "prefers tabs" in info.text
    os.remove(repo / "GEMINI.md")
    info = await memory.add("run make test", "project")
    assert (repo / "GEMINI.md").read_text() == "## Gemini Added Memories\n- run make test\n"
    assert str(repo / "GEMINI.md") in [f.path for f in info.files]
    with pytest.raises(errors.SidecarError, match="empty"):
        await memory.add(" \n ", "global")


async def test_add_memory_to_the_project_is_refused_when_untrusted(layout: tuple[Path, Path]) -> None:
    home, repo = layout
    memory, _, _ = _service(home, repo / "Api", trusted=False)
    with pytest.raises(errors.SidecarError, match="not trusted"):
        await memory.add("x", "project")


async def test_the_configured_names_are_protected(layout: tuple[Path, Path]) -> None:
    home, repo = layout
    memory, _, _ = _service(home, repo / "Api")
    memory._session.settings.context_file_names = ["CLAUDE.md", "docs/RULES.md", "RULES.md", "id_rsa"]
    try:
        await memory.load()
        assert protected.context_file_names() == ("CLAUDE.md", "RULES.md", "GEMINI.md", "AGENTS.md")
        assert protected.why_protected([str(repo / "Api" / "CLAUDE.md")], [repo]) is not None
    finally:
        protected.set_context_file_names(())


def test_a_workspace_file_cannot_choose_the_context_files_or_the_project_root(tmp_path: Path) -> None:
    from sidecar.config.workspace_file import read_workspace_settings

    settings = tmp_path / ".sidecar" / "settings.json"
    _write(settings, '{"contextFileNames": ["oauth_creds.json"], "memoryBoundaryMarkers": ["etc"], "model": "m"}')
    merged, problems = read_workspace_settings([str(tmp_path)], trusted=True)
    assert merged == {"model": "m"}
    assert len(problems) == 2 and all("cannot be set from a workspace file" in p for p in problems)


async def test_a_trust_withdrawn_while_the_files_are_read_is_honoured(
    layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The editor's notice that the workspace is not trusted arrives while the context files are being read (an
    editor that said nothing about trust before: unknown counts as trusted): that read is discarded and done again,
    so no project file reaches the model. The notice is delivered from inside the read, so the overlap is certain."""
    import sidecar.memory.service as service_module

    home, repo = layout
    memory, _, _ = _service(home, repo / "Api")
    real_load = service_module._load
    notices: list[str] = []

    def load_then_distrust(found: object, *args: object) -> object:
        if memory._session.ide.trusted is None and str(getattr(found, "path", "")).startswith(str(repo)):
            memory._session.ide.trusted = False  # sidecar/ideContext {isTrusted: false}, mid-read
            notices.append(str(found.path))  # type: ignore[attr-defined]
        return real_load(found, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(service_module, "_load", load_then_distrust)
    info = await memory.load()
    assert notices, "the trust changed while a project file was read"
    assert [f.scope for f in info.files] == ["global"] and info.skipped_project_files == 2
    section = memory.system_section() or ""
    assert "root rule" not in section and "api rule" not in section
