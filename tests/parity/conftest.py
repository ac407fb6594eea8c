"""The reference implementation under node: installed on demand, run once per batch of inputs."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
HARNESS = Path(__file__).with_name("reference.mjs")

RunReference = Callable[[dict[str, Any]], dict[str, Any]]


@pytest.fixture(scope="session")
def reference_package() -> Path:
    """The installed @google/gemini-cli-core (tools/fetch-reference.sh; cached under .cache/reference)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("parity tests need node and npm on PATH to run the reference implementation")
    proc = subprocess.run([str(REPO / "tools" / "fetch-reference.sh")], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"could not install the reference package (tools/fetch-reference.sh):\n{proc.stderr}")
    return Path(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def reference(reference_package: Path, tmp_path_factory: pytest.TempPathFactory) -> RunReference:
    """Evaluate a request (see reference.mjs) with the reference implementation and return its results."""

    def run(request: dict[str, Any]) -> dict[str, Any]:
        path = tmp_path_factory.mktemp("reference") / "request.json"
        path.write_text(json.dumps(request, allow_nan=False), encoding="ascii")  # lone surrogates travel as \\udxxx
        proc = subprocess.run(
            ["node", str(HARNESS), str(reference_package), str(path)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if proc.returncode != 0:
            err = proc.stderr if len(proc.stderr) < 3000 else f"{proc.stderr[:1500]}\n...\n{proc.stderr[-1500:]}"
            pytest.fail(f"the reference harness failed:\n{err}")
        result: dict[str, Any] = json.loads(proc.stdout)
        return result

    return run
