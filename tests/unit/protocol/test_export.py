"""The editors' mirrors and docs/protocol.md's tables are what `python -m sidecar.export` writes."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import msgspec
import pytest

from sidecar.config import settings as settings_module
from sidecar.config.settings import Settings
from sidecar.export import layout
from sidecar.export import mirrors as export
from sidecar.export import model as export_model
from sidecar.export import settings as export_settings
from sidecar.protocol import error_info, methods
from sidecar.protocol.types import to_wire

ROOT = export.ROOT


def test_no_generated_file_is_stale() -> None:
    stale = [str(path.relative_to(ROOT)) for path in export.stale()]
    assert stale == [], f"regenerate with `{export.COMMAND}` (or `make protocol`): {stale}"


GENERATED = (
    export.TS_PATH,
    export.LUA_PATH,
    export.DOCS_PATH,
    export.PACKAGE_JSON_PATH,
    export.LUA_SETTINGS_PATH,
    export.SETTINGS_DOCS_PATH,
    export.README_PATH,
)


def test_a_hand_edit_is_caught(tmp_path: Path) -> None:
    for relative in GENERATED:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / relative, tmp_path / relative)
    assert export.stale(tmp_path) == []
    ts = tmp_path / export.TS_PATH
    ts.write_text(ts.read_text().replace("busy: -32003", "alreadyCompressing: -32003"))
    docs = tmp_path / export.DOCS_PATH
    docs.write_text(docs.read_text().replace("| -32004 |", "| -32005 |"))
    assert export.stale(tmp_path) == [ts, docs]


def test_a_settings_list_out_of_step_with_the_struct_is_caught(tmp_path: Path) -> None:
    """The settings' editors lists and docs table are generated too: a stale one fails the check."""
    for relative in GENERATED:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / relative, tmp_path / relative)
    package = tmp_path / export.PACKAGE_JSON_PATH
    package.write_text(package.read_text().replace('"default": 0.5,', '"default": 0.6,'))
    lua = tmp_path / export.LUA_SETTINGS_PATH
    lua.write_text(lua.read_text().replace("  maxToolRounds = 25,\n", ""))
    docs = tmp_path / export.SETTINGS_DOCS_PATH
    docs.write_text(docs.read_text().replace("| `approvedPlanPath` |", "| `approvedPlan` |"))
    assert export.stale(tmp_path) == [package, lua, docs]
    # the rest of package.json (the release metadata, the commands) is kept as written
    package.write_text(package.read_text().replace('"version": "', '"version": "9'))
    regenerated = export_settings.package_json(package.read_text(), Settings)
    assert '"version": "9' in regenerated and '"default": 0.5,' in regenerated


def test_every_setting_is_offered_with_its_default_and_description() -> None:
    package = json.loads((ROOT / export.PACKAGE_JSON_PATH).read_text())
    offered = package["contributes"]["configuration"]["properties"]
    defaults = msgspec.to_builtins(Settings())
    for f in export_settings.setting_fields(Settings):
        if f.name == "apiKey":
            assert "sidecar.apiKey" not in offered  # VS Code keeps it in its secret storage
            continue
        entry = offered[f"sidecar.{f.name}"]
        assert entry["default"] == defaults.get(f.name), f.name
        assert entry["markdownDescription"].startswith(f.description), f.name
    assert offered["sidecar.approvedPlanPath"]["type"] == ["string", "null"]
    assert offered["sidecar.approvalMode"]["enum"] == ["default", "autoEdit", "yolo"]  # in step with enumDescriptions
    lua = (ROOT / export.LUA_SETTINGS_PATH).read_text()
    docs = (ROOT / export.SETTINGS_DOCS_PATH).read_text()
    for f in export_settings.setting_fields(Settings):
        assert f"name = '{f.name}'" in lua and f"---@field {f.name}? " in lua
        assert f"| `{f.name}` |" in docs


def test_the_bounds_editors_show_are_the_ones_the_server_checks() -> None:
    """Settings' `_about(schema=...)` bounds against `_RANGES`: each bound is accepted, one step past it refused."""
    checked = 0
    for f in export_settings.setting_fields(Settings):
        name = next(n for n, wire in settings_module._WIRE_NAMES.items() if wire == f.name)
        check = settings_module._RANGES.get(name)
        if not f.bounds:
            continue
        assert check is not None, f"{f.name} shows bounds the server does not check"
        accepts = check[0]
        step = 1 if isinstance(f.default, int) or f.default is None else 1e-9
        if "minimum" in f.bounds:
            assert accepts(f.bounds["minimum"]) and not accepts(f.bounds["minimum"] - step), f.name
        if "exclusiveMinimum" in f.bounds:
            low = f.bounds["exclusiveMinimum"]
            assert not accepts(low) and accepts(low + step), f.name
        if "maximum" in f.bounds:
            assert accepts(f.bounds["maximum"]) and not accepts(f.bounds["maximum"] + step), f.name
        checked += 1
    assert checked == 10  # the eighth: truncateToolOutputThreshold; then the two checkpoint limits


def test_a_setting_without_a_description_is_an_error() -> None:
    class Bare(msgspec.Struct, rename="camel"):
        model: str = "m"

    with pytest.raises(ValueError, match="no description"):
        export_settings.setting_fields(Bare)


def test_protocol_lua_has_a_luacats_class_for_every_type() -> None:
    lua = (ROOT / export.LUA_PATH).read_text()
    for cls in export_model.structs(export_model.contract_roots()):
        assert f"---@class sidecar.{cls.__name__}\n" in lua
    assert "---@alias sidecar.TranscriptEntry sidecar.TranscriptMessage|" in lua
    assert "---@class sidecar.TokenUsage\n---@field seq integer\n" in lua
    assert "---@field estimateReason? sidecar.EstimateReason\n" in lua  # optional: `?` once
    assert "---@field finishReason string?\n" in lua  # always sent, may be null


def test_check_mode_passes_on_this_tree() -> None:
    said: list[str] = []
    assert export.main(["--check"], out=said.append) == 0 and said == []


def test_a_missing_docs_section_is_an_error() -> None:
    with pytest.raises(ValueError, match="no generated section"):
        export.docs("# protocol\n")


def test_generated_files_say_so() -> None:
    for relative in (export.TS_PATH, export.LUA_PATH, export.LUA_SETTINGS_PATH):
        head = (ROOT / relative).read_text().splitlines()[:5]
        marker = "GENERATED by `python -m sidecar.export`"
        assert any(marker in line and "do not edit" in line for line in head)
    docs = (ROOT / export.DOCS_PATH).read_text()
    for what in export.docs_sections():
        assert export.BEGIN.format(command=export.COMMAND, what=what) in docs


def test_every_method_is_in_every_mirror() -> None:
    ts = (ROOT / export.TS_PATH).read_text()
    lua = (ROOT / export.LUA_PATH).read_text()
    docs = (ROOT / export.DOCS_PATH).read_text()
    for method in methods.ALL:
        assert f"{method.key}: '{method.name}'" in ts
        assert f"{method.key} = '{method.name}'" in lua
        assert f"| `{method.name}` |" in docs
        assert f"### `{method.name}`" in docs, f"docs/protocol.md describes {method.name} in prose too"
    for code in error_info.CODES:
        assert f"{code.key}: {code.code}" in ts and f"{code.key} = {code.code}" in lua


def test_method_names_are_unique_and_prefixed() -> None:
    names = [m.name for m in methods.ALL]
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"sidecar/[a-z][A-Za-z]+", n) for n in names)
    assert len({c.code for c in error_info.CODES}) == len(error_info.CODES)


def test_typescript_fields_follow_the_structs() -> None:
    """Optional (`?`) exactly where a field may be left out; names as msgspec encodes them."""
    ts = export.typescript()
    assert "export interface TranscriptMessage {\n  type: 'message';" in ts
    assert "  turnId?: string;" in ts  # omitted when unset
    assert "  finishReason: string | null;" in ts  # always sent, may be null
    assert "  openFiles: OpenFile[];" in ts  # decoded leniently, documented as what it holds
    assert "export type ListSessionsResult = SessionSummary[] | ListSessionsPage;" in ts  # bare list without params


def test_the_structs_encode_as_documented() -> None:
    from sidecar.protocol.sessions import TranscriptMessage

    entry = TranscriptMessage(id="m1", time="t", role="user", kind="user", text="hi")
    assert to_wire(entry) == {"type": "message", "id": "m1", "time": "t", "role": "user", "kind": "user", "text": "hi"}
    assert msgspec.json.decode(msgspec.json.encode(entry), type=TranscriptMessage) == entry


def test_the_readme_map_follows_the_packages_docstrings_and_the_layers(tmp_path: Path) -> None:
    """The README's layout and layer line are generated: a hand edit, or a package whose docstring changed, is
    stale; a test folder nobody described cannot be generated at all."""
    for relative in GENERATED:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / relative, tmp_path / relative)
    readme = tmp_path / export.README_PATH
    text = readme.read_text()
    assert "  checkpoints/" in text and "tests/mcp_client/" in text and "`app` → `rpc`, `acp`" in text
    readme.write_text(text.replace("  checkpoints/", "  checkpoint/"))
    assert export.stale(tmp_path) == [readme]
    package = tmp_path / "tree" / "sidecar" / "newfeature"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""A new feature: what it does."""\n')
    (tmp_path / "tree" / "tests" / "newsuite").mkdir(parents=True)
    (tmp_path / "tree" / "tests" / "newsuite" / "test_x.py").write_text("")
    with pytest.raises(ValueError, match="tests/newsuite/"):
        layout.code_map(tmp_path / "tree")
    (tmp_path / "tree" / "tests" / "newsuite" / "test_x.py").unlink()
    assert "  newfeature/  A new feature: what it does." in layout.code_map(tmp_path / "tree")
