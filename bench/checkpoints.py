"""Issue 29: what a checkpoint costs per edit (a 100 KB file), what restoring 100 files costs, and the store choice.

In process, with the real registry, recorder and checkpoint service in a temporary workspace and data home: each edit
is a write_file of a 100 KB file whose content changes every time, and the cost is the time the checkpoint adds to it
(saving the content before and after, the fileChange record). The restore is a rewind plan and restore of 100 files
the agent changed in one turn, on disk. For the choice of store, the same 100 KB blobs written with
`git hash-object -w` into a shadow repository outside the workspace (one process per blob, as a shadow-git
checkpoint needs at least).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import msgspec

from bench.common import Row, median, verdict
from sidecar.checkpoints.service import CheckpointService
from sidecar.core.history import text_content
from sidecar.recording.recorder import Recorder
from sidecar.session import Session
from sidecar.tools import ToolRegistry

FILE_BYTES = 100_000
RESTORE_FILES = 100
PER_EDIT_LIMIT_MS = 2.0
RESTORE_LIMIT_MS = 1000.0


def _content(number: int) -> str:
    line = f"line of a source file, edit {number:06d}, padding to make it about one hundred kilobytes long ......\n"
    return (line * (FILE_BYTES // len(line) + 1))[:FILE_BYTES]


class _Timed:
    """The checkpointer, timing its two calls around each edit (what the checkpoint adds to the edit)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.ms: list[float] = []
        self._began = 0.0

    async def before_edit(self, plan: Any, tool: str) -> Any:
        start = time.perf_counter()
        saved = await self.inner.before_edit(plan, tool)
        self._began = (time.perf_counter() - start) * 1000
        return saved

    def edited(self, saved: Any) -> None:
        start = time.perf_counter()
        self.inner.edited(saved)
        self.ms.append(self._began + (time.perf_counter() - start) * 1000)


class _Rig:
    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "ws"
        self.root.mkdir(parents=True)
        self.session = Session(workspace_folders=[str(self.root)])
        self.session.settings = msgspec.structs.replace(self.session.settings, checkpoint_store_mb=100_000)
        self.recorder = Recorder(self.session, lambda _text: None, home=tmp / "home")
        self.recorder.start("0b0b0b0b-0000-4000-8000-000000000029")
        self.registry = ToolRegistry(
            self.session.folders, save_output=lambda text, tool: tmp / "out", output_threshold=lambda: 100_000
        )
        #: The running turn's user message, as the live conversation would name it.
        self.turn: str | None = None
        self.service = CheckpointService(
            self.session,
            self.recorder,
            turn=lambda: self.turn,
            workspace=self.registry.workspace,
            buffers=self.registry.buffers,
        )
        self.timed = _Timed(self.service.checkpointer)

    async def edit(self, path: str, content: str, watched: bool) -> float:
        self.registry.watch = self.timed if watched else None  # type: ignore[assignment]
        plan = self.registry.plan("write_file", {"path": path, "content": content}, trusted=True)
        start = time.perf_counter()
        result = await self.registry.run(plan, apply_edit=None)
        elapsed = (time.perf_counter() - start) * 1000
        assert result.ok, result.response
        return elapsed


async def _per_edit(tmp: Path, repeat: int) -> dict[str, Any]:
    rig = _Rig(tmp)
    (rig.root / "big.txt").write_text(_content(0))
    with_cp, without = [], []
    for number in range(1, repeat + 1):
        rig.turn = rig.recorder.message(text_content("user", f"edit {number}"), "user", f"turn-{number}")
        without.append(await rig.edit("plain.txt", _content(number), watched=False))
        with_cp.append(await rig.edit("big.txt", _content(number), watched=True))
    rig.recorder.close()
    return {"with": with_cp, "without": without, "checkpoint": rig.timed.ms}


async def _restore(tmp: Path) -> dict[str, Any]:
    rig = _Rig(tmp)
    for i in range(RESTORE_FILES):
        (rig.root / f"f{i:03d}.py").write_text(_content(i)[:10_000])
    message = rig.turn = rig.recorder.message(text_content("user", "change them all"), "user", "turn-1")
    for i in range(RESTORE_FILES):
        await rig.edit(f"f{i:03d}.py", _content(i + 1000)[:10_000], watched=True)
    start = time.perf_counter()
    loaded = rig.recorder.reload()
    plan = await rig.service.plan(loaded, message, force=False)
    done = await rig.service.restore(plan, message)
    elapsed = (time.perf_counter() - start) * 1000
    rig.recorder.close()
    assert len(done.restored) == RESTORE_FILES, done
    return {"ms": elapsed, "restored": len(done.restored)}


def _git(tmp: Path, repeat: int) -> list[float]:
    if shutil.which("git") is None:
        return []
    git_dir = tmp / "shadow.git"
    env = {**os.environ, "GIT_DIR": str(git_dir), "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp)}
    subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True, env=env)
    runs = []
    for number in range(repeat):
        data = _content(number).encode()
        start = time.perf_counter()
        subprocess.run(["git", "hash-object", "-w", "--stdin"], input=data, env=env, capture_output=True, check=True)
        runs.append((time.perf_counter() - start) * 1000)
    return runs


def measure(tmp: Path, repeat: int) -> dict[str, Any]:
    edits = asyncio.run(_per_edit(tmp / "edits", repeat))
    restore = asyncio.run(_restore(tmp / "restore"))
    return {"edits": edits, "restore": restore, "git_ms": _git(tmp, repeat)}


def rows(result: dict[str, Any]) -> list[Row]:
    edits = result["edits"]
    added = median(edits["checkpoint"])
    restore = result["restore"]["ms"]
    git = median(result["git_ms"]) if result["git_ms"] else float("nan")
    n = len(edits["with"])
    return [
        Row(
            "issue 29",
            "Checkpoint cost per edit: what saving a 100 KB file's content before and after a write_file and its "
            "fileChange record add to the edit",
            f"{added:.2f} ms added to the edit ({median(edits['without']):.2f} ms without checkpoints); a shadow git "
            f"repository would need {git:.1f} ms per blob (git hash-object -w)",
            f"≤ {PER_EDIT_LIMIT_MS:g} ms",
            verdict(added <= PER_EDIT_LIMIT_MS),
            f"In process (registry, recorder, content-addressed store on the local disk); median of {n} edits.",
        ),
        Row(
            "issue 29",
            f"Rewind restoring {RESTORE_FILES} files (10 KB each) the agent changed in one turn: checking each against "
            "what the agent left, then writing it back",
            f"{restore:.0f} ms",
            f"≤ {RESTORE_LIMIT_MS:g} ms",
            verdict(restore <= RESTORE_LIMIT_MS),
            "In process, disk path (no editor); one run.",
        ),
    ]


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp_dir:
        outcome = measure(Path(tmp_dir), 30)
        for row in rows(outcome):
            print(row.what, "->", row.measured, row.verdict)
