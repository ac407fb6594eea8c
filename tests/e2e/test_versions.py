"""One version everywhere: the package, `sidecar --version`, the server's initialize result and the vsix manifest agree.

The version is defined once, in sidecar/__init__.py (hatch reads it for the wheel and the sdist). The extension's
package.json carries a copy for vsce, written by editors/vscode/scripts/sync-metadata.js; these tests fail when the
copy differs. The Neovim plugin reads sidecar/__init__.py itself (editors/nvim/tests/test_layout.lua checks it), and
`make release-check` checks the built wheel and vsix.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from sidecar import __version__
from sidecar.protocol.version import EXPERIMENTAL_KEY, PROTOCOL_VERSION
from tests.e2e.harness import EditorClient

ROOT = Path(__file__).resolve().parents[2]
VSCODE = ROOT / "editors" / "vscode"


def test_the_version_is_a_release_number() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__), __version__


async def test_initialize_reports_the_protocol_version(client: EditorClient) -> None:
    assert client.init_result["capabilities"]["experimental"][EXPERIMENTAL_KEY] == {"protocolVersion": PROTOCOL_VERSION}
    assert client.init_result["serverInfo"]["version"] == __version__


def test_sidecar_version_prints_the_package_version() -> None:
    run = subprocess.run([sys.executable, "-m", "sidecar", "--version"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"sidecar {__version__}\n"


def test_the_extension_manifest_carries_the_same_version() -> None:
    hint = "copy it with `node editors/vscode/scripts/sync-metadata.js` (make release does)"
    manifest = json.loads((VSCODE / "package.json").read_text())
    assert manifest["version"] == __version__, f"editors/vscode/package.json says {manifest['version']}: {hint}"
    lock = json.loads((VSCODE / "package-lock.json").read_text())
    assert (lock["version"], lock["packages"][""]["version"]) == (__version__, __version__), hint


def test_the_repository_address_is_written_once() -> None:
    url = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
    manifest = json.loads((VSCODE / "package.json").read_text())
    assert manifest["repository"] == {"type": "git", "url": url}, "node editors/vscode/scripts/sync-metadata.js"


def test_the_sync_script_finds_a_difference(tmp_path: Path) -> None:
    """--check names a manifest that differs (so `make release` cannot ship a stale copy)."""
    (tmp_path / "sidecar").mkdir()
    (tmp_path / "sidecar" / "__init__.py").write_text('__version__ = "9.8.7"\n')
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    ext = tmp_path / "editors" / "vscode"
    ext.mkdir(parents=True)
    for name in ("package.json", "package-lock.json"):
        (ext / name).write_text((VSCODE / name).read_text())
    script = str(VSCODE / "scripts" / "sync-metadata.js")
    check = subprocess.run(["node", script, "--check", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 1 and f"version {__version__} (sidecar/__init__.py says 9.8.7)" in check.stderr
    fix = subprocess.run(["node", script, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert fix.returncode == 0, fix.stderr
    assert json.loads((ext / "package.json").read_text())["version"] == "9.8.7"
    assert json.loads((ext / "package-lock.json").read_text())["packages"][""]["version"] == "9.8.7"
    assert subprocess.run(["node", script, "--check", str(tmp_path)], timeout=60).returncode == 0
