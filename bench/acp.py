"""Issue 18: the first chunk's overhead over ACP (`sidecar acp`) vs the editor protocol, in the same run."""

# Both servers run side by side against one timed fake, turns alternating between them. Per turn, on one clock:
#   out  = (the fake has read the whole streamGenerateContent request) - (the client wrote the prompt request)
#   back = (the client received the first chunk) - (the fake wrote and flushed the first SSE event)
#   overhead to the first chunk = out + back (the fake's own time in between is left out).
# Editor protocol: sidecar/sendMessage -> sidecar/messageDelta. ACP: session/prompt -> agent_message_chunk.
# The ACP client here is a minimal newline-JSON reader (like the editor side's RpcClient), so that the figure is
# the server's cost, not the SDK client's parsing.

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import Row, fake_options, init_params, judge, median, pid_of, server_env, sidecar_client, spread
from bench.timedfake import TimedFake

LIMIT_MS = 5.0
FRESH_EVERY = 5


class _AcpClient:
    """`sidecar acp` over stdio with a bare newline-delimited JSON-RPC client."""

    def __init__(self, home: Path, fake_url: str) -> None:
        self.env = server_env(home)
        settings = str(home / "s.json")
        self.env.update(GEMINI_API_KEY="bench-key", GOOGLE_GEMINI_BASE_URL=fake_url, SIDECAR_SETTINGS=settings)
        (home / "s.json").write_text(json.dumps({"retryAttempts": 0, "requestTimeoutMs": 600_000}))
        self.proc: asyncio.subprocess.Process | None = None
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.next_id = 0
        self.first_chunk: float | None = None
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "sidecar",
            "--log-level",
            "WARNING",
            "acp",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=self.env,
            limit=64 * 1024 * 1024,
        )
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            message = json.loads(line)
            if message.get("method") == "session/update":
                update = message["params"]["update"]
                if update["sessionUpdate"] == "agent_message_chunk" and self.first_chunk is None:
                    self.first_chunk = time.perf_counter()
            elif "id" in message and message["id"] in self.pending:
                future = self.pending.pop(message["id"])
                if "error" in message:
                    future.set_exception(RuntimeError(message["error"]["message"]))
                else:
                    future.set_result(message.get("result"))

    def send(self, method: str, params: Any) -> asyncio.Future[Any]:
        assert self.proc is not None and self.proc.stdin is not None
        self.next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.proc.stdin.write(line.encode() + b"\n")
        return future

    async def close(self) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.close()
        await asyncio.wait_for(self.proc.wait(), 30)
        if self._reader is not None:
            self._reader.cancel()


async def _turn(send: Any, first: Any, fake: TimedFake, text: str) -> tuple[float, float]:
    fake.take()
    start = time.perf_counter()
    await send(text)
    got = first()
    streams = [s for s in fake.take() if "streamGenerateContent" in s.path]
    if len(streams) != 1 or got is None:
        raise RuntimeError(f"expected one model request and a first chunk per turn, got {len(streams)}")
    stamps = streams[0]
    return (stamps.body - start) * 1000, (got - stamps.first_event) * 1000


async def measure(tmp: Path, repeat: int) -> dict[str, Any]:
    root = tmp / "ws"
    root.mkdir(parents=True, exist_ok=True)
    (tmp / "home-editor").mkdir(exist_ok=True)
    (tmp / "home-acp").mkdir(exist_ok=True)
    fake = TimedFake().start()
    editor = sidecar_client(tmp / "home-editor")
    first_delta: list[float] = []
    editor.on("sidecar/messageDelta", lambda _p: first_delta.append(time.perf_counter()))
    editor.on("window/showMessage", lambda _p: None)
    agent = _AcpClient(tmp / "home-acp", fake.url)
    out: dict[str, list[float]] = {"editor_out": [], "editor_back": [], "acp_out": [], "acp_back": [],
                                   "editor_wait": [], "acp_wait": []}  # fmt: skip
    try:
        await editor.start()
        await editor.request("initialize", init_params(str(root), fake_options(fake.url)))
        editor.notify("initialized", {})
        await agent.start()
        await agent.send("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = ""

        async def editor_send(text: str) -> None:
            first_delta.clear()
            await editor.request("sidecar/sendMessage", {"text": text})

        async def acp_send(text: str) -> None:
            agent.first_chunk = None
            await agent.send("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": text}]})

        for number in range(2 + repeat):
            if number % FRESH_EVERY == 0:
                await editor.request("sidecar/newSession", {})
                session = (await agent.send("session/new", {"cwd": str(root), "mcpServers": []}))["sessionId"]
            text = f"Turn {number}: please check src/app.py again."
            for name, send, first, pid in (
                ("editor", editor_send, lambda: first_delta[0] if first_delta else None, pid_of(editor)),
                ("acp", acp_send, lambda: agent.first_chunk, agent.proc.pid if agent.proc else None),
            ):
                fake.watch_pid = pid
                before = fake.sched()
                sent, back = await _turn(send, first, fake, text)
                if number >= 2:
                    out[f"{name}_out"].append(sent)
                    out[f"{name}_back"].append(back)
                    out[f"{name}_wait"].append(fake.sched()[1] - before[1])
    finally:
        await editor.close()
        await agent.close()
        fake.stop()
    return out


def run(tmp: Path, repeat: int) -> dict[str, Any]:
    return asyncio.run(measure(tmp, repeat))


def rows(result: dict[str, Any]) -> list[Row]:
    editor = [a + b for a, b in zip(result["editor_out"], result["editor_back"], strict=True)]
    acp = [a + b for a, b in zip(result["acp_out"], result["acp_back"], strict=True)]
    delta = median([a - e for a, e in zip(acp, editor, strict=True)])
    return [
        Row(
            "issue 18",
            "First-chunk overhead, ACP vs the editor protocol (prompt written → request at the fake, plus first SSE "
            "event → first chunk at the client; tiny history, same run, turns alternating)",
            f"ACP {median(acp):.1f} ms, editor protocol {median(editor):.1f} ms (ACP − editor, per turn pair: "
            f"{delta:+.1f} ms)",
            f"≤ {LIMIT_MS:.0f} ms",
            judge(median(acp), LIMIT_MS, median(result["acp_wait"])),
            f"ACP: {spread(acp)} (out {median(result['acp_out']):.1f} ms, back {median(result['acp_back']):.1f} ms); "
            f"editor protocol: {spread(editor)} (out {median(result['editor_out']):.1f} ms, back "
            f"{median(result['editor_back']):.1f} ms). A new session every {FRESH_EVERY} turns.",
            result,
        )
    ]
