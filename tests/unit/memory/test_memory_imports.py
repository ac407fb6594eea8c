"""@path imports in context files: inlined, inside the project root only, depth 5, cycles marked, code skipped."""

from __future__ import annotations

from pathlib import Path

from sidecar.memory.imports import MAX_DEPTH, process_imports, project_root


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _process(top: Path, root: Path) -> str:
    return process_imports(top.read_text(), top, root)


def test_an_import_is_inlined_between_markers(tmp_path: Path) -> None:
    top = _write(tmp_path / "GEMINI.md", "Rules:\n@./docs/style.md\nEnd.")
    _write(tmp_path / "docs" / "style.md", "Use tabs.")
    out = _process(top, tmp_path)
    assert out == (
        "Rules:\n<!-- Imported from: ./docs/style.md -->\nUse tabs.\n<!-- End of import from: ./docs/style.md -->\nEnd."
    )


def test_an_import_outside_the_root_is_refused_also_through_a_symlink(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _write(tmp_path / "secret.md", "SECRET")
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "link.md").symlink_to(tmp_path / "secret.md")
    top = _write(root / "GEMINI.md", "@../secret.md and @docs/link.md and @/etc/hostname")
    out = _process(top, root)
    assert "SECRET" not in out
    assert "<!-- Import failed: ../secret.md - Path traversal attempt" in out
    assert "<!-- Import failed: docs/link.md - Path traversal attempt" in out
    assert "<!-- Import failed: /etc/hostname - Path traversal attempt" in out


def test_a_cycle_is_marked_not_followed(tmp_path: Path) -> None:
    top = _write(tmp_path / "GEMINI.md", "top @a.md")
    _write(tmp_path / "a.md", "A imports @b.md")
    _write(tmp_path / "b.md", "B imports @a.md and @GEMINI.md")
    out = _process(top, tmp_path)
    assert out.count("A imports") == 1
    assert "<!-- File already processed: a.md -->" in out
    assert "<!-- File already processed: GEMINI.md -->" in out


def test_imports_nest_five_levels_and_the_sixth_stays_as_written(tmp_path: Path) -> None:
    assert MAX_DEPTH == 5
    top = _write(tmp_path / "GEMINI.md", "level0 @l1.md")
    for level in range(1, 7):
        _write(tmp_path / f"l{level}.md", f"level{level} @l{level + 1}.md")
    _write(tmp_path / "l7.md", "level7")
    out = _process(top, tmp_path)
    for level in range(1, 6):
        assert f"level{level}" in out
    assert "level6" not in out
    assert "level5 @l6.md" in out  # the file at depth 5 is inlined, its own import is left as written


def test_imports_in_code_are_left_alone(tmp_path: Path) -> None:
    _write(tmp_path / "x.md", "INLINED")
    top = _write(
        tmp_path / "GEMINI.md",
        "```\n@x.md in a fence\n```\n~~~\n@x.md in a tilde fence\n~~~\ninline `@x.md` span\nreal: @x.md\n",
    )
    out = _process(top, tmp_path)
    assert out.count("INLINED") == 1
    assert "```\n@x.md in a fence\n```" in out
    assert "~~~\n@x.md in a tilde fence\n~~~" in out
    assert "inline `@x.md` span" in out


def test_failures_are_comments_naming_the_reason(tmp_path: Path) -> None:
    top = _write(tmp_path / "GEMINI.md", "@missing.md and @http://example.com/x and mail a@b.com")
    out = _process(top, tmp_path)
    assert "<!-- Import failed: missing.md - No such file or directory -->" in out
    assert "<!-- Import failed: http://example.com/x - URLs are not imported -->" in out
    assert "mail a@b.com" in out


def test_project_root_is_the_first_folder_with_a_marker(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "a" / "b").mkdir(parents=True)
    assert project_root(tmp_path / "repo" / "a" / "b", (".git",)) == tmp_path / "repo"
    assert project_root(tmp_path / "repo" / "a" / "b", ("../x", "/abs")) is None
    assert project_root(tmp_path / "repo" / "a", ()) is None
