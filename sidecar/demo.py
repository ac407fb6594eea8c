"""`make demo`: a scripted editor session against the real sidecar process (embedded fake, or Gemini / Vertex AI)."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from typing import Any

from sidecar.protocol import methods
from sidecar.protocol.ide import Cursor, IdeContextParams, OpenFile
from sidecar.protocol.types import CompressParams, SendMessageParams, to_wire
from sidecar.rpc.client import RpcClient, RpcError, sidecar_command

FAKE_TOKEN_LIMIT = 8_000
#: Fake mode: each summary call takes this long, and the user reads each reply this long before typing the next
#: message — so the demo shows a summary prepared in the background while the user chats.
FAKE_SUMMARY_SECONDS = 0.6
FAKE_READING_SECONDS = 0.8
PREPARATION = {"preparing": "preparing summary", "ready": "summary ready"}
TRACEBACK = "\n".join(
    f'  File "src/app/tokenizer.py", line {100 + i}, in scan_identifier\n    ch = source[pos + {i}]' for i in range(24)
)
SCRIPT = [
    "I'm working on src/app/parser.py. The goal: make the tokenizer handle unicode identifiers.",
    "Constraint: we must never change the public API of parse_file().",
    f"The test run fails like this:\nTraceback (most recent call last):\n{TRACEBACK}\nIndexError: out of range",
    f"And with a longer input it fails the same way:\n{TRACEBACK}\nUnicodeDecodeError: invalid start byte",
    "Let's also look at tests/test_parser.py and the fixtures under tests/data/ for non-ASCII names.",
    "Good. Next, how should the error messages mention the offending character?",
    "Please summarise the plan so far in three steps.",
]
FULL = "Here is the user's editor context as a JSON object."
DELTA = "Here is a summary of changes in the user's editor context"


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
    preparation = PREPARATION.get(usage.get("summaryPreparation", "none"))
    return (
        f"{bar} {percent:.0f}% · {human(usage['promptTokenCount'])} / {human(usage['tokenLimit'])} tokens{source}"
        + (f" · {preparation}" if preparation else "")
    )


class Demo:
    def __init__(self, real: bool) -> None:
        self.real = real
        self.fake: Any = None
        # The demo's session goes to a temporary folder, not into the user's list of sessions
        # (unless SIDECAR_HOME says where to keep it).
        self.home = os.environ.get("SIDECAR_HOME") or tempfile.mkdtemp(prefix="sidecar-demo-")
        env = {**os.environ, "SIDECAR_HOME": self.home}
        self.client = RpcClient(sidecar_command("--log-level", "WARNING"), env=env)
        self.usage: dict[str, Any] = {}
        self.replying = False
        #: What happened in the background since the last turn's output (printed after it, not mid-reply).
        self.background: list[str] = []
        self.compacted_in_turn = False

    def out(self, text: str = "", end: str = "\n") -> None:
        sys.stdout.write(text + end)
        sys.stdout.flush()

    async def start(self) -> None:
        options: dict[str, Any] = {}
        if not self.real:
            from sidecar.fakegemini import FakeGemini

            self.fake = FakeGemini()
            self.fake.start()
            self.fake.script([{"kind": "delay", "seconds": FAKE_SUMMARY_SECONDS, "match": "summary", "times": -1}])
            options = {
                "backend": "gemini",
                "baseUrl": self.fake.url,
                "apiKey": "demo-key",
                "tokenLimit": FAKE_TOKEN_LIMIT,
            }
        self.client.on(methods.MESSAGE_DELTA.name, self._on_delta)
        self.client.on(methods.TOKEN_USAGE.name, self._on_usage)
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

    def _on_delta(self, params: dict[str, Any]) -> None:
        if not self.replying:
            self.replying = True
            self.out("< ", end="")
        self.out(params["text"], end="")

    def _on_usage(self, params: dict[str, Any]) -> None:
        before = self.usage.get("summaryPreparation", "none")
        self.usage = params
        state = params.get("summaryPreparation", "none")
        if state == before:
            return
        if state == "preparing":
            self.background.append(
                f"[background] usage passed {params['compressionThreshold'] * 80:.0f}% of the window (0.8 × the "
                "compaction threshold): the summary is being prepared while you keep chatting — status bar: "
                "'preparing summary'"
            )
        elif state == "ready":
            self.background.append("[background] summary ready — it will be applied at the threshold, without waiting")

    def _on_compressed(self, params: dict[str, Any]) -> None:
        self.compacted_in_turn = True
        self.out(
            f"  [compaction · {params['trigger']}] {params['status']}: "
            f"{params['originalTokenCount']:,} → {params['newTokenCount']:,} tokens — {params['message']}"
        )

    def editor(self, line: int, selected: str | None = None) -> None:
        """What an editor sends when the user moves around: the open files, cursor and selection."""
        root = os.getcwd()
        active = OpenFile(
            path=f"{root}/src/app/parser.py",
            timestamp=2_000 + line,
            is_active=True,
            cursor=Cursor(line, 1),
            selected_text=selected or None,
        )
        files = [active, OpenFile(path=f"{root}/tests/test_parser.py", timestamp=1_000)]
        self.client.notify(methods.IDE_CONTEXT.name, to_wire(IdeContextParams(open_files=files, is_trusted=True)))

    def context_sent(self) -> str:
        """Which IDE context the last chat request carried, read from the fake's request log."""
        if self.fake is None:
            return "sent to Gemini"
        chats = [r for r in self.fake.requests() if r.kind == "stream" and not r.summary]
        if not chats:
            return "none"
        contents = chats[-1].body["contents"]
        text = contents[-2]["parts"][0].get("text", "") if len(contents) > 1 else ""
        if text.startswith(FULL):
            return "FULL (active file, cursor, selection, other open files)"
        if text.startswith(DELTA):
            changes = text.split("```json", 1)[1]
            keys = [k for k in ("activeFileChanged", "cursorMoved", "selectionChanged", "filesOpened") if k in changes]
            return "DELTA (" + ", ".join(keys) + ")"
        return "none (nothing changed)"

    async def turn(self, text: str) -> None:
        first_line = text.splitlines()[0]
        pasted = f" … [{len(text):,} characters pasted]" if "\n" in text else ""
        self.out(f"\n> {first_line}{pasted}")
        self.replying = False
        self.compacted_in_turn = False
        started = time.perf_counter()
        try:
            result = await self.client.request(methods.SEND_MESSAGE.name, to_wire(SendMessageParams(text=text)))
        except RpcError as exc:
            self.out(f"\n  error: {exc.message}")
            return
        took = time.perf_counter() - started
        self.out()
        if self.compacted_in_turn:
            self.out(
                f"  [time] this turn compacted the conversation and took {took:.2f} s — the summary had been "
                "prepared in the background, so the message went on without waiting for the model to summarise"
            )
        self.out(f"  [ide context] {self.context_sent()}")
        self.out(f"  [status bar] {status_line(result['usage'])}")
        if not self.real:
            await asyncio.sleep(FAKE_READING_SECONDS)  # the user reads the reply before typing the next message
            await self._preparation_settled()
        for line in self.background:
            self.out(f"  {line}")
        self.background.clear()

    async def _preparation_settled(self, limit: float = 60.0) -> None:
        """Fake mode: the scripted user reads on while a summary is being prepared, so that the demo shows it applied
        at the threshold without waiting on any machine (a loaded one can take longer than the reading time)."""
        deadline = time.perf_counter() + limit
        while self.usage.get("summaryPreparation") == "preparing" and time.perf_counter() < deadline:
            await asyncio.sleep(0.02)

    async def compress(self, instructions: str) -> None:
        self.out(f'\n> (user runs "Compress conversation" with focus: {instructions!r})')
        before = self.usage
        result = await self.client.request(methods.COMPRESS.name, to_wire(CompressParams(instructions=instructions)))
        self.out(f"  {result['status']}: {result['message']}")
        if before:
            self.out(f"  [status bar] before {status_line(before)}")
        self.out(f"  [status bar] after  {status_line(self.usage)}")

    async def run(self) -> int:
        self.client.on(methods.COMPRESSED.name, self._on_compressed)
        await self.start()
        self.editor(line=12, selected="def parse_identifier(")
        for index, text in enumerate(SCRIPT):
            if index == 1:
                self.editor(line=40)  # the cursor moved: only a delta goes to the model
            await self.turn(text)
        await self.compress("the tokenizer changes and the public API constraint")
        self.editor(line=41, selected="IDENT_RE")
        await self.turn("After compressing: what were we doing?")
        code = await self.client.close()
        if self.fake is not None:
            self.fake.stop()
        self.out(f"\n== done (sidecar exited with {code}); the session was recorded under {self.home}")
        return 0 if code == 0 else 1


def main() -> int:
    vertex = os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("true", "1")
    real = bool(os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY") or vertex)
    return asyncio.run(Demo(real).run())


if __name__ == "__main__":
    sys.exit(main())
