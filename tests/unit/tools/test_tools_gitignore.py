"""The .gitignore matcher and the glob translation: git's documented pattern rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sidecar.tools.gitignore import Ignorer, IgnoreRules, expand_braces, glob_regex, parse_gitignore


def _ignored(patterns: str, rel: str, is_dir: bool = False) -> bool:
    rules = IgnoreRules("/base", tuple(parse_gitignore(patterns)))
    return rules.verdict("/base/" + rel, is_dir) is True


@pytest.mark.parametrize(
    ("patterns", "rel", "is_dir", "expected"),
    [
        ("*.log", "a.log", False, True),
        ("*.log", "deep/er/a.log", False, True),  # no slash: any depth
        ("*.log", "a.log.txt", False, False),
        ("/build", "build", True, True),  # leading slash anchors
        ("/build", "src/build", True, False),
        ("doc/frotz", "doc/frotz", True, True),  # a middle slash anchors too
        ("doc/frotz", "a/doc/frotz", True, False),
        ("out/", "out", True, True),  # trailing slash: directories only
        ("out/", "out", False, False),
        ("out/", "x/out", True, True),
        ("**/logs", "a/b/logs", True, True),
        ("logs/**", "logs/a/b.txt", False, True),
        ("logs/**", "logs", True, False),
        ("a/**/b", "a/b", False, True),
        ("a/**/b", "a/x/y/b", False, True),
        ("a?c", "abc", False, True),
        ("a?c", "a/c", False, False),
        ("[ab].txt", "b.txt", False, True),
        ("[!ab].txt", "c.txt", False, True),
        ("[!ab].txt", "a.txt", False, False),
        ("a[!-~]b", "a/b", False, False),  # no bracket expression matches "/"
        ("a[--0]b", "a/b", False, False),
        ("*.log\n!keep.log", "keep.log", False, False),  # negation re-includes
        ("!keep.log\n*.log", "keep.log", False, True),  # the last matching rule wins
        ("\\#hash", "#hash", False, True),
        ("# comment\n\n", "# comment", False, False),
        ("\\!bang", "!bang", False, True),
        ("trail   ", "trail", False, True),  # trailing spaces are dropped
        ("sp\\ ", "sp ", False, True),  # unless escaped
        ("*", "anything/at/all", False, True),
    ],
)
def test_pattern_rules(patterns: str, rel: str, is_dir: bool, expected: bool) -> None:
    assert _ignored(patterns, rel, is_dir) is expected


def test_nested_gitignore_overrides_parent_and_applies_to_its_subtree(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.tmp\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / ".gitignore").write_text("!keep.tmp\n/local\n")
    root = Ignorer.for_directory(tmp_path)
    child = root.child(sub)
    assert root.ignored(str(tmp_path / "x.tmp"), False)
    assert child.ignored(str(sub / "x.tmp"), False)
    assert not child.ignored(str(sub / "keep.tmp"), False)
    assert child.ignored(str(sub / "local"), True)
    assert not root.ignored(str(tmp_path / "local"), True)  # anchored to sub/


def test_rules_of_the_repository_above_a_workspace_subfolder_apply(tmp_path: Path) -> None:
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("*.excluded\n")
    (tmp_path / ".gitignore").write_text("*.log\n")
    workspace = tmp_path / "packages" / "app"
    workspace.mkdir(parents=True)
    ignorer = Ignorer.for_directory(workspace)
    assert ignorer.ignored(str(workspace / "debug.log"), False)
    assert ignorer.ignored(str(workspace / "a.excluded"), False)
    assert not ignorer.ignored(str(workspace / "main.py"), False)


def test_without_a_repository_only_the_folders_own_gitignore_counts(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.log\n")
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / ".gitignore").write_text("*.tmp\n")
    ignorer = Ignorer.for_directory(inner)
    assert ignorer.ignored(str(inner / "a.tmp"), False)
    assert not any((p / ".git").exists() for p in (tmp_path, *tmp_path.parents))
    assert not ignorer.ignored(str(inner / "a.log"), False)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "a/b/c.py", True),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/sub/a.py", False),
        ("src/**", "src/a/b", True),
        ("*.py", "a.py", True),
        ("*.py", "a/b.py", False),  # glob_regex itself is anchored; the tool adds **/ for bare names
    ],
)
def test_glob_regex(pattern: str, path: str, expected: bool) -> None:
    assert (re.fullmatch(glob_regex(pattern), path) is not None) is expected


def test_brace_expansion() -> None:
    assert expand_braces("*.{ts,tsx}") == ["*.ts", "*.tsx"]
    assert expand_braces("{a,b{c,d}}.x") == ["a.x", "bc.x", "bd.x"]
    assert expand_braces("{single}.x") == ["{single}.x"]
    assert expand_braces("unbalanced{a,b") == ["unbalanced{a,b"]
