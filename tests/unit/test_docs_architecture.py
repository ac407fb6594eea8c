"""docs/architecture.md stays true: every package of sidecar/ has its row, every test and file it names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
NAMED_TEST = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?`")
NAMED_FILE = re.compile(r"`((?:sidecar|editors|docs|tests)/[\w/.-]+\.(?:py|ts|lua|md|txt|json))`")


def _code_map_rows(text: str) -> set[str]:
    section = text.split("## Code map", 1)[1].split("\n## ", 1)[0]
    rows = [row.split("|")[1] for row in section.splitlines() if row.startswith("| `")]
    return {name for first in rows for name in re.findall(r"`([\w.]+/?)`", first)}


def test_every_package_and_top_level_module_has_a_row() -> None:
    package = ROOT / "sidecar"
    expected = {f"{p.name}/" for p in package.iterdir() if (p / "__init__.py").exists()}
    expected |= {p.name for p in package.glob("*.py") if p.name != "__init__.py"}
    expected -= {"allocator.py", "logging_setup.py", "private_files.py"}  # helpers of the bottom layer, no invariant
    assert sorted(expected - _code_map_rows(DOC.read_text())) == []


def test_every_test_and_file_it_names_exists() -> None:
    text = DOC.read_text()
    missing = []
    for path, name in NAMED_TEST.findall(text):
        file = ROOT / path
        if not file.exists():
            missing.append(path)
        elif name:
            tree = ast.parse(file.read_text())
            if name not in {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}:
                missing.append(f"{path}::{name}")
    missing += [path for path in NAMED_FILE.findall(text) if not (ROOT / path).exists()]
    assert missing == []


def test_the_drift_checks_would_see_a_missing_row_and_a_renamed_test() -> None:
    assert "checkpoints/" not in _code_map_rows("## Code map\n| `chat/` | x | y |\n")
    assert NAMED_TEST.findall("`tests/unit/x.py::test_y`") == [("tests/unit/x.py", "test_y")]
