"""Print a real server's RSS after each round of the fuzz test's repeated workload (memory regressions by hand).

Usage: .venv/bin/python tools/rss_rounds.py [ROUNDS] [NAME=VALUE ...]   (NAME=VALUE: extra server environment,
e.g. MALLOC_ARENA_MAX=1). Identical rounds should leave RSS flat; see sidecar/allocator.py.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sidecar.fakegemini import FakeGemini
from tests.reliability.conftest import make_dirs
from tests.reliability.proc import Sidecar
from tests.reliability.test_fuzz_params import TOKEN_LIMIT, repeated_workload


async def main(rounds: int, env: dict[str, str]) -> None:
    fake = FakeGemini()
    fake.start()
    home, workspace = make_dirs()
    side = Sidecar(home, workspace, fake.url, log_level="INFO", env=env)
    try:
        await side.start(tokenLimit=TOKEN_LIMIT)
        await side.say("warm up")
        print(f"after warm-up: {side.rss_kb() / 1024:.0f} MB", flush=True)
        for n in range(1, rounds + 1):
            await repeated_workload(side)
            print(f"after round {n}: {side.rss_kb() / 1024:.0f} MB", flush=True)
    finally:
        await side.stop()
        fake.stop()
        shutil.rmtree(home.parent, ignore_errors=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    count = int(args.pop(0)) if args and args[0].isdigit() else 6
    asyncio.run(main(count, dict(a.split("=", 1) for a in args)))
