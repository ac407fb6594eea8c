"""@path imports in context files: inlined, inside the project root only, depth 5, cycles marked, code skipped."""

from __future__ import annotations

from pathlib import Path

from sidecar.memory.imports import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_IMPORT_FILES,
    ImportBudget,
    process_imports,
    project_root,
)


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


# -- bounds: one budget per load, each file inlined once, credential files never, workspace folders only ----------


def test_an_import_bomb_inlines_each_file_once(tmp_path: Path) -> None:
    """Six files of 551 bytes, each importing the next many times, made 100,000 inlined copies (131 s of load).
    Without the budget this one would inline 10**5 copies of the leaf."""
    for level in range(5):  # GEMINI.md and f0..f4: the five levels deep imports reach
        imports = "\n".join(f"@./f{level + 1}.md" for _ in range(10)) if level < 4 else "leaf"
        _write(tmp_path / f"f{level}.md", f"level {level}\n{imports}\n")
    top = _write(tmp_path / "GEMINI.md", "@./f0.md\n" * 10)
    budget = ImportBudget()
    out = process_imports(top.read_text(), top, tmp_path, budget=budget)
    assert out.count("<!-- Imported from: ./f4.md -->") == 1
    assert out.count("level 0") == 1 and out.count("leaf") == 1
    assert "<!-- File already imported above: ./f1.md -->" in out
    assert len(out) < 20_000
    assert budget.files == [str(tmp_path / f"f{level}.md") for level in range(5)]


def test_the_import_budget_stops_at_a_named_file(tmp_path: Path) -> None:
    """Past MAX_IMPORT_FILES distinct files (or MAX_IMPORT_BYTES in all), the file that hit the budget is named and
    nothing more is imported, in this file or the next ones of the same load."""
    names = [f"part{i:03}.md" for i in range(MAX_IMPORT_FILES + 5)]
    for name in names:
        _write(tmp_path / name, f"content of {name}")
    top = _write(tmp_path / "GEMINI.md", "\n".join(f"@./{n}" for n in names))
    budget = ImportBudget()
    out = process_imports(top.read_text(), top, tmp_path, budget=budget)
    hit = names[MAX_IMPORT_FILES]
    assert f"<!-- Import skipped: ./{hit} - the imports' budget ({MAX_IMPORT_FILES} files" in out
    assert f"content of {hit}" not in out and f"content of {names[MAX_IMPORT_FILES - 1]}" in out
    other = _write(tmp_path / "sub" / "AGENTS.md", "@../part000.md @../part100.md")
    again = process_imports(other.read_text(), other, tmp_path, budget=budget)
    assert "<!-- File already imported above: ../part000.md -->" in again
    assert f"the imports' budget is used up (see ./{hit})" in again

    _write(tmp_path / "big.md", "x" * (MAX_FILE_BYTES - 10))
    big = _write(tmp_path / "BIG.md", "\n".join("@./big.md" if i == 0 else f"@./b{i}.md" for i in range(8)))
    for i in range(1, 8):
        _write(tmp_path / f"b{i}.md", "y" * (MAX_FILE_BYTES - 10))
    out = process_imports(big.read_text(), big, tmp_path, budget=ImportBudget())
    assert "<!-- Import skipped: ./b4.md - the imports' budget" in out, "1 MB in all: the fifth 256 KB file"


def test_credential_files_are_never_imported(tmp_path: Path) -> None:
    for name in ("oauth_creds.json", "server.PEM", "id_ed25519", ".env.local", "credentials-prod.json"):
        _write(tmp_path / "keys" / name, "SECRET")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").symlink_to(tmp_path / "keys" / "id_ed25519")
    top = _write(
        tmp_path / "GEMINI.md",
        "@keys/oauth_creds.json @keys/server.PEM @keys/id_ed25519 @keys/.env.local @keys/credentials-prod.json "
        "@docs/notes.md",
    )
    out = _process(top, tmp_path)
    assert "SECRET" not in out
    assert out.count("a credential file (keys, tokens) is never imported") == 6


def test_workspace_memory_stays_inside_the_workspace_folders(tmp_path: Path) -> None:
    """The import root (a git repository at ~) is above the workspace: `@../../.ssh/config` was inside the root."""
    home = tmp_path / "home"
    _write(home / ".ssh" / "config", "Host secret")
    workspace = home / "src" / "proj"
    _write(workspace / "docs" / "style.md", "Use tabs.")
    top = _write(workspace / "GEMINI.md", "@../../.ssh/config\n@docs/style.md")
    out = process_imports(top.read_text(), top, home, folders=[workspace])
    assert "Host secret" not in out
    assert "<!-- Import failed: ../../.ssh/config - outside the workspace folders" in out
    assert "Use tabs." in out
