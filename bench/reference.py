"""The reference (@google/gemini-cli-core under node), installed by tools/fetch-reference.sh, run on input files."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from bench.common import REPO

RUNNER = Path(__file__).with_name("reference.mjs")


class ReferenceUnavailable(RuntimeError):
    """node/npm missing or the package could not be installed: the side-by-side rows are skipped."""


@lru_cache(maxsize=1)
def package_dir() -> Path:
    """The installed package (cached in .cache/reference; the first run downloads it from npm)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise ReferenceUnavailable("node and npm are needed to run the reference side by side")
    proc = subprocess.run(
        [str(REPO / "tools" / "fetch-reference.sh")], capture_output=True, text=True, timeout=900, check=False
    )
    if proc.returncode != 0:
        raise ReferenceUnavailable(f"tools/fetch-reference.sh failed:\n{proc.stderr[-2000:]}")
    return Path(proc.stdout.strip().splitlines()[-1])


def run(request: dict[str, Any], timeout: float = 600) -> dict[str, Any]:
    """Run bench/reference.mjs on one request (see its header) and return its JSON answer."""
    package = package_dir()
    with tempfile.TemporaryDirectory(prefix="bench-ref-") as tmp:
        path = Path(tmp) / "request.json"
        if "truncate" in request:
            request = {**request, "truncate": {**request["truncate"], "dir": str(Path(tmp) / "outputs")}}
        path.write_text(json.dumps(request))
        proc = subprocess.run(
            ["node", str(RUNNER), str(package), str(path)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"bench/reference.mjs failed:\n{proc.stderr[-3000:]}")
    answer: dict[str, Any] = json.loads(proc.stdout)
    return answer
