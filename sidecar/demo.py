"""`make demo`: a scripted editor session against the real sidecar process (embedded fake, or Gemini with a key)."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from sidecar.rpc_client import RpcClient, RpcError, sidecar_command

FAKE_TOKEN_LIMIT = 2_000
SCRIPT = [
    "I'm working on src/app/parser.py. The goal: make the tokenizer handle unicode identifiers.",
    "Constraint: we must never change the public API of parse_file().",
    "What would you check first?",
]


def human(n: float) -> str:
    """Compact counts for a status bar: 1_048_576 -> '1M', 471_859 -> '471K', 1_500 -> '1.5K'."""
    for unit, size in (("M", 1_000_000), ("K", 1_000)):
        if n >= size:
            value = n / size
            text = f"{value:.1f}".removesuffix(".0") if value < 10 else str(int(value))
            return text + unit
    return str(int(n))


def status_line(usage: dict[str, Any]) -> str:
    """The status-bar line an editor shows, e.g. '▰▰▱▱▱▱▱▱▱▱ 12% · 126K / 1M tokens'."""
    percent = usage["percentUsed"]
    filled = min(10, round(percent / 10))
    bar = "▰" * filled + "▱" * (10 - filled)
    source = "" if usage["source"] == "api" else " (estimate)"
    return (
        f"{bar} {percent:.0f}% · {human(usage['promptTokenCount'])} / {human(usage['tokenLimit'])} tokens{source}"
    )


class Demo:
    def __init__(self, real: bool) -> None:
        self.real = real
        self.fake: Any = None
        self.client = RpcClient(sidecar_command("--log-level", "WARNING"))
        self.usage: dict[str, Any] = {}

    def out(self, text: str = "", end: str = "\n") -> None:
        sys.stdout.write(text + end)
        sys.stdout.flush()

    async def start(self) -> None:
        options: dict[str, Any] = {}
        if not self.real:
            from sidecar.fakegemini import FakeGemini

            self.fake = FakeGemini()
            self.fake.start()
            options = {"baseUrl": self.fake.url, "apiKey": "demo-key", "tokenLimit": FAKE_TOKEN_LIMIT}
        self.client.on("sidecar/messageDelta", lambda p: self.out(p["text"], end=""))
        self.client.on("sidecar/tokenUsage", self._on_usage)
        self.client.on("window/showMessage", lambda p: self.out(f"  [editor message] {p['message']}"))
        self.client.on("window/workDoneProgress/create", lambda p: None)
        await self.client.start()
        result = await self.client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "capabilities": {"window": {"workDoneProgress": True}},
                "initializationOptions": options,
            },
        )
        self.client.notify("initialized", {})
        info = result["serverInfo"]
        where = "real Gemini" if self.real else f"the embedded fake Gemini at {self.fake.url}"
        self.out(f"== {info['name']} {info['version']} started over stdio, talking to {where}")
        if not self.real:
            self.out(f"   (fake mode uses tokenLimit {FAKE_TOKEN_LIMIT:,} so the meter visibly moves)")

    def _on_usage(self, params: dict[str, Any]) -> None:
        self.usage = params

    async def turn(self, text: str) -> None:
        self.out(f"\n> {text}")
        self.out("< ", end="")
        try:
            result = await self.client.request("sidecar/sendMessage", {"text": text})
        except RpcError as exc:
            self.out(f"\n  error: {exc.message}")
            return
        self.out()
        self.out(f"  [status bar] {status_line(result['usage'])}")

    async def run(self) -> int:
        await self.start()
        for text in SCRIPT:
            await self.turn(text)
        code = await self.client.close()
        if self.fake is not None:
            self.fake.stop()
        self.out(f"\n== done (sidecar exited with {code})")
        return 0 if code == 0 else 1


def main() -> int:
    real = bool(os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY"))
    return asyncio.run(Demo(real).run())


if __name__ == "__main__":
    sys.exit(main())
