"""A small real MCP server for the tests, written with the SDK's server side: `python server.py MODE [DIR]`.

MODE: basic (tools), silent (never answers initialize), garbage (prints non-MCP lines first), dies (exits at once
with a message on stderr), noisy (32 MB on stderr, then dies like `dies`), exits (basic, and exits with a message
on stderr once DIR/exit-now appears: dies while idle), gated (basic, but starts serving only once DIR/start-now
appears: a slow start), http PORT (basic over streamable HTTP). DIR receives pid and cancellation marker files.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

MODE = sys.argv[1]
DIR = Path(sys.argv[2]) if len(sys.argv) > 2 and MODE != "http" else Path(os.environ.get("MCP_TEST_DIR", "."))

if MODE == "silent":
    sys.stdin.read()  # reads its input and never answers
    sys.exit(0)
if MODE == "gated":
    import time

    while not (DIR / "start-now").exists():
        time.sleep(0.02)
if MODE == "dies":
    sys.stderr.write("fatal: cannot open the database at /nowhere\n")
    sys.exit(3)
if MODE == "noisy":  # 32 MB on stderr, then its last words
    line = b"debug: " + b"x" * 1017 + b"\n"
    for _ in range(32 * 1024):
        sys.stderr.buffer.write(line)
    sys.stderr.buffer.write(b"fatal: the last words\n")
    sys.stderr.flush()
    sys.exit(5)

import anyio  # noqa: E402
from mcp.server.mcpserver import Context, Image, MCPServer  # noqa: E402
from mcp_types import ToolAnnotations  # noqa: E402

(DIR / f"pid-{os.getpid()}").write_text(str(os.getpgrp()))
server = MCPServer("test")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int | None = None) -> str:
    """Add two numbers."""
    return f"sum={a + (b or 0)} env_key={os.environ.get('GEMINI_API_KEY', '-')} extra={os.environ.get('EXTRA', '-')}"


@server.tool()
def picture() -> Image:
    """A tiny picture."""
    return Image(data=b"\x89PNG-test-bytes", format="png")


@server.tool()
def screenshot(megabytes: int = 3) -> Image:
    """A big picture: a 1920×1080 PNG header padded to `megabytes` MB."""
    import struct

    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", 1920, 1080) + b"\x08\x06"
    return Image(data=header + os.urandom(megabytes * 1024 * 1024 - len(header)), format="png")


@server.tool()
def fail(reason: str) -> str:
    """Always fails."""
    raise ValueError(reason)


@server.tool()
async def slow() -> str:
    """Never finishes; notes that it runs, and its cancellation."""
    (DIR / "running").write_text("yes")
    try:
        await anyio.sleep(3600)
    except anyio.get_cancelled_exc_class():
        (DIR / "cancelled").write_text("yes")
        raise
    return "done"


@server.tool()
def crash() -> str:
    """Dies mid-call."""
    sys.stderr.write("crashing on purpose\n")
    sys.stderr.flush()
    os._exit(5)


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds a tool and says so (notifications/tools/list_changed)."""
    server.add_tool(lambda: "new", name="newtool", description="Added later.")
    await ctx.session.send_tool_list_changed()
    return "grown"


@server.resource("test://greeting", name="greeting", mime_type="text/plain")
def greeting() -> str:
    return "hello from a resource"


@server.prompt()
def review(code: str, focus: str = "anything") -> str:
    """Ask for a review."""
    return f"Please review {code} focusing on {focus}"


if MODE == "exits":
    import threading
    import time

    def exit_when_told() -> None:
        while not (DIR / "exit-now").exists():
            time.sleep(0.05)
        sys.stderr.write("fatal: lost the connection to the license server\n")
        sys.stderr.flush()
        os._exit(4)

    threading.Thread(target=exit_when_told, daemon=True).start()
if MODE == "garbage":
    sys.stdout.write('this is not JSON\n{"neither": is this}\n')
    sys.stdout.flush()
if MODE == "http":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
else:
    server.run()
