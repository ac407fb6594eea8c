"""Context files (GEMINI.md, AGENTS.md) and the session context, through the real sidecar with HOME in a temp folder.

One recorded client (VS Code) runs these: what they check happens in the server, the same for every client.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.core.prompts import REBUILT_HEAD_NOTE
from tests.e2e.harness import EditorClient, notes, request, wait_for

SESSION = "<session_context>"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


class Layout:
    """home/.gemini/GEMINI.md; repo/.git, repo/GEMINI.md (imports docs/imported.md), repo/Api/AGENTS.md (the
    workspace folder is repo/Api: a subfolder whose name sorts before GEMINI.md), repo/Api/sub/GEMINI.md."""

    def __init__(self, base: Path) -> None:
        self.home = base / "home"
        self.repo = base / "repo"
        self.folder = self.repo / "Api"
        self.global_file = _write(self.home / ".gemini" / "GEMINI.md", "GLOBAL-RULE: answer in English.")
        (self.repo / ".git").mkdir(parents=True)
        self.root_file = _write(self.repo / "GEMINI.md", "ROOT-RULE: run make test.\n@./docs/imported.md\n")
        _write(self.repo / "docs" / "imported.md", "IMPORTED-RULE: keep modules small.")
        self.api_file = _write(self.folder / "AGENTS.md", "API-RULE: handlers decode, call, encode.")
        self.sub_file = _write(self.folder / "sub" / "GEMINI.md", "SUB-RULE: sub is generated code.")
        _write(self.folder / "sub" / "code.py", "x = 1\n")
        _write(self.folder / "sub" / "more.py", "y = 2\n")


@pytest.fixture
def layout() -> AsyncIterator[Layout]:
    base = Path(os.path.realpath(tempfile.mkdtemp(prefix="sidecar-memory-")))
    yield Layout(base)  # type: ignore[misc]
    shutil.rmtree(base, ignore_errors=True)


async def _start(layout: Layout, fake: Any, **settings: Any) -> EditorClient:
    client = EditorClient("visual-studio-code", str(layout.folder), HOME=str(layout.home))
    await client.start()
    await client.initialize(fake.url, **settings)
    return client


@pytest.fixture
async def client(layout: Layout, fake: Any) -> AsyncIterator[EditorClient]:
    editor = await _start(layout, fake)
    try:
        yield editor
    finally:
        await editor.stop()


def chats(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary]


def texts(request: Any) -> list[str]:
    return [p.get("text", "") for c in request.body["contents"] for p in c["parts"] if "text" in p]


def system(request: Any) -> str:
    return "".join(p.get("text", "") for p in (request.body.get("systemInstruction") or {}).get("parts", []))


def session_contexts(request: Any) -> list[str]:
    return [t for t in texts(request) if t.startswith(SESSION)]


async def say(client: EditorClient, text: str) -> dict[str, Any]:
    return await request(client, "sidecar/sendMessage", {"text": text})  # type: ignore[no-any-return]


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"kind": "function_call", "name": name, "args": args, "match": "chat"}


async def test_the_first_request_carries_global_and_project_memory_in_order(
    client: EditorClient, fake: Any, layout: Layout
) -> None:
    note = await wait_for(client, "sidecar/memoryChanged")
    assert [(f["path"], f["scope"]) for f in note["files"]] == [
        (str(layout.global_file), "global"),
        (str(layout.root_file), "project"),
        (str(layout.api_file), "project"),
    ]
    assert note["tokens"] == sum(f["tokens"] for f in note["files"]) > 0 and note["skippedProjectFiles"] == 0
    estimate = await wait_for(client, "sidecar/tokenUsage", lambda u: u["promptTokenCount"] > note["tokens"])
    assert estimate["source"] == "estimate", "before the first turn the estimate counts the memory already"
    await say(client, "hello")
    (first,) = chats(fake)
    assert "GLOBAL-RULE" in system(first) and "You are a coding agent" in system(first)
    assert system(first).index("You are a coding agent") < system(first).index("GLOBAL-RULE")
    contents = first.body["contents"]
    opening = contents[0]["parts"][0]["text"]
    assert opening.startswith(SESSION) and contents[-1]["parts"][0]["text"] == "hello"
    assert "GLOBAL-RULE" not in opening and "SUB-RULE" not in opening
    assert opening.index("ROOT-RULE") < opening.index("IMPORTED-RULE") < opening.index("API-RULE")
    assert f"--- Context from: {layout.root_file} ---" in opening
    assert "<!-- Imported from: ./docs/imported.md -->" in opening
    assert "Today's date is " in opening and str(layout.folder) in opening
    memory = await request(client, "sidecar/getMemory", {})
    assert memory["files"] == note["files"] and "IMPORTED-RULE" in memory["text"]


async def test_a_subfolder_file_arrives_with_the_first_tool_result_under_it_once(
    client: EditorClient, fake: Any, layout: Layout
) -> None:
    fake.script([call("read_file", path="sub/code.py"), call("read_file", path="sub/more.py")])
    await say(client, "read both")
    requests = chats(fake)
    first_result, second_result = (
        next(p["functionResponse"] for p in r.body["contents"][-1]["parts"] if "functionResponse" in p)
        for r in requests[1:3]
    )
    output = first_result["response"]["output"]
    assert "x = 1" in output and "--- Newly Discovered Project Context ---" in output
    assert f"--- Context from: {layout.sub_file} ---\nSUB-RULE" in output and "API-RULE" not in output
    assert "SUB-RULE" not in second_result["response"]["output"], "delivered once"
    note = await wait_for(
        client, "sidecar/memoryChanged", lambda n: any(f["scope"] == "subdirectory" for f in n["files"])
    )
    assert note["files"][-1]["path"] == str(layout.sub_file)


async def test_a_changed_context_file_reaches_the_model_at_the_next_turn(
    client: EditorClient, fake: Any, layout: Layout
) -> None:
    await say(client, "first")
    _write(layout.root_file, "ROOT-RULE v2: run make check.")
    _write(layout.api_file, "API-RULE v2: watched.")
    await wait_for(client, "sidecar/memoryChanged", lambda n: "API-RULE v2" in n["text"])  # the watcher, no turn
    await say(client, "second")
    changed = [t for t in texts(chats(fake)[-1]) if t.startswith("<context_file_changed>")]
    assert len(changed) == 1 and "ROOT-RULE v2: run make check." in changed[0] and "API-RULE v2" in changed[0]
    assert str(layout.root_file) in changed[0]
    await say(client, "third")
    assert len([t for t in texts(chats(fake)[-1]) if t.startswith("<context_file_changed>")]) == 1, "told once"
    assert len(session_contexts(chats(fake)[-1])) == 1


async def test_an_untrusted_workspace_gets_global_memory_only_and_the_user_is_told(
    client: EditorClient, fake: Any, layout: Layout
) -> None:
    client.notify("sidecar/ideContext", {"openFiles": [], "isTrusted": False})
    note = await wait_for(client, "sidecar/memoryChanged", lambda n: n["skippedProjectFiles"] > 0)
    assert note["skippedProjectFiles"] == 2 and "not trusted" in note["skippedReason"]
    assert [f["scope"] for f in note["files"]] == ["global"]
    # told once, by the editor from memoryChanged (VS Code's notice has a Trust button): no second window message
    assert not any("were not loaded" in m for m in client.messages(2))
    await say(client, "hello")
    (first,) = chats(fake)
    assert "GLOBAL-RULE" in system(first)
    assert not any(rule in t for t in texts(first) for rule in ("ROOT-RULE", "API-RULE", "IMPORTED-RULE"))
    assert len(session_contexts(first)) == 1


@pytest.mark.parametrize("how", ["manual", "auto", "resume", "new"])
async def test_memory_and_session_context_survive_compaction_resume_and_new_session(
    layout: Layout, fake: Any, how: str
) -> None:
    settings = {"tokenLimit": 8000, "compressionThreshold": 0.5, "backgroundCompaction": False} if how == "auto" else {}
    client = await _start(layout, fake, **settings)
    try:
        padding = " ".join(f"word{i}" for i in range(100))
        for i in range(4):
            await say(client, f"message {i}: {padding}")
        if how == "manual":
            assert (await request(client, "sidecar/compress", {}))["status"] == "COMPRESSED"
        elif how == "auto":
            for i in range(4, 20):
                await say(client, f"message {i}: {padding}")
                if notes(client, "sidecar/compressed"):
                    break
            assert notes(client, "sidecar/compressed")[-1]["status"] == "COMPRESSED"
        elif how == "resume":
            usage = await request(client, "sidecar/getTokenUsage", {})
            await request(client, "sidecar/resumeSession", {"sessionId": usage["sessionId"]})
        else:
            await request(client, "sidecar/newSession", {})
        await say(client, "after")
        last = chats(fake)[-1]
        (opening,) = session_contexts(last)
        assert last.body["contents"][0]["parts"][0]["text"] == opening, "the session context opens the history"
        assert "ROOT-RULE" in opening and "API-RULE" in opening and "GLOBAL-RULE" in system(last)
    finally:
        await client.stop()


async def test_add_memory_in_both_scopes(client: EditorClient, fake: Any, layout: Layout) -> None:
    await say(client, "first")
    info = await request(client, "sidecar/addMemory", {"text": "prefers tabs\n# not a heading", "scope": "global"})
    assert layout.global_file.read_text() == (
        "GLOBAL-RULE: answer in English.\n\n## Gemini Added Memories\n- prefers tabs # not a heading\n"
    )
    assert "prefers tabs" in info["text"]
    layout.root_file.unlink()
    info = await request(client, "sidecar/addMemory", {"text": "run the linter first", "scope": "project"})
    assert layout.root_file.read_text() == "## Gemini Added Memories\n- run the linter first\n"
    assert str(layout.root_file) in [f["path"] for f in info["files"]]
    await wait_for(client, "sidecar/memoryChanged", lambda n: "run the linter first" in n["text"])
    await say(client, "second")
    last = chats(fake)[-1]
    assert "prefers tabs" in system(last)
    assert any("run the linter first" in t for t in texts(last) if t.startswith("<context_file_changed>"))
    error = None
    try:
        await request(client, "sidecar/addMemory", {"text": "  ", "scope": "global"})
    except Exception as exc:  # RpcError
        error = exc
    assert error is not None and "empty" in str(error)


async def test_session_start_hooks_add_to_the_session_context(layout: Layout, fake: Any) -> None:
    script = layout.home / "session_start.py"
    script.write_text(
        "import json, sys\nevent = json.load(sys.stdin)\n"
        "print(json.dumps({'additionalContext': 'HOOK-NOTE from ' + event['source']}))\n"
    )
    hooks = {"SessionStart": [{"command": f"{sys.executable} {script}"}]}
    client = await _start(layout, fake, hooks=hooks)
    try:
        padding = " ".join(f"word{i}" for i in range(100))
        for i in range(4):
            await say(client, f"message {i}: {padding}")
        (opening,) = session_contexts(chats(fake)[-1])
        assert "HOOK-NOTE from new" in opening and opening.index("ROOT-RULE") < opening.index("HOOK-NOTE")
        assert (await request(client, "sidecar/compress", {}))["status"] == "COMPRESSED"
        await say(client, "after the compaction")
        (opening,) = session_contexts(chats(fake)[-1])
        assert "HOOK-NOTE from compact" in opening
        usage = await request(client, "sidecar/getTokenUsage", {})
        await request(client, "sidecar/resumeSession", {"sessionId": usage["sessionId"]})
        await say(client, "resumed")
        (opening,) = session_contexts(chats(fake)[-1])
        assert "HOOK-NOTE from resume" in opening
    finally:
        await client.stop()


async def test_a_compaction_neither_summarises_nor_counts_the_session_context_as_conversation(
    client: EditorClient, fake: Any, layout: Layout
) -> None:
    """The <session_context> is rebuilt for the new history: it stays in the summary request (which is the chat's own
    request, prefix and all) but the summarizer is told to leave it out (the snapshot would copy the memory and the
    folder tree, and the new history carry them twice), and the 70/30 split is of the conversation."""
    padding = " ".join(f"word{i}" for i in range(100))
    for i in range(4):
        await say(client, f"message {i}: {padding}")
    last_chat = chats(fake)[-1]
    assert (await request(client, "sidecar/compress", {}))["status"] == "COMPRESSED"
    summaries = [r for r in fake.requests() if r.summary]
    assert summaries, "the summarizer was asked"
    for summary in summaries:
        assert session_contexts(summary) == session_contexts(last_chat), "the chat's own prefix"
    assert any("message 0" in t for t in texts(summaries[0])), "the oldest conversation was summarised"
    assert REBUILT_HEAD_NOTE in summaries[0].body["contents"][-1]["parts"][-1]["text"], "told to leave it out"
    await say(client, "after the compaction")
    after = chats(fake)[-1]
    assert len(session_contexts(after)) == 1, "one fresh session context, not two"
    snapshot = next(t for t in texts(after) if "<state_snapshot>" in t)
    assert "ROOT-RULE" not in snapshot and "GLOBAL-RULE" not in snapshot, "the memory was not copied"


async def test_context_files_a_repository_ships_as_named_pipes_never_block_the_server(
    layout: Layout, fake: Any
) -> None:
    """A cloned repository can make GEMINI.md, an imported file or a subfolder's AGENTS.md a FIFO: reading one must
    not block start-up, a turn or a tool call (docs/security.md: the workspace is untrusted input)."""
    for path in (layout.root_file, layout.api_file, layout.sub_file):
        path.unlink()
        os.mkfifo(path)
    client = await _start(layout, fake)
    try:
        reply = await say(client, "hello")
        assert "hello" in reply["text"]
        (first,) = chats(fake)
        assert "GLOBAL-RULE" in system(first), "the readable global file still loads"
        info = await request(client, "sidecar/getMemory", {})
        assert [f["scope"] for f in info["files"]] == ["global"], "a FIFO is not a context file"
    finally:
        await client.stop()


async def test_a_change_to_an_imported_file_refreshes_the_memory(layout: Layout, fake: Any) -> None:
    """A file the memory imports changed on disk: the model kept the old text (only context files were watched).
    Now every file of the import graph is watched: the editor is told at once (the workspace watcher, for a file in
    the workspace folder) and the model at its next turn, also for an import above the workspace folder."""
    _write(layout.api_file, "API-RULE: handlers decode, call, encode.\n@./docs/api-style.md\n")
    style = _write(layout.folder / "docs" / "api-style.md", "STYLE-RULE v1: short names.")
    client = await _start(layout, fake)
    try:
        await say(client, "first")
        assert any("STYLE-RULE v1" in t for t in session_contexts(chats(fake)[-1]))
        _write(style, "STYLE-RULE v2: long names.")
        await wait_for(client, "sidecar/memoryChanged", lambda n: "STYLE-RULE v2" in n["text"])  # no turn needed
        _write(layout.repo / "docs" / "imported.md", "IMPORTED-RULE v2: modules of any size.")
        await say(client, "second")
        changed = [t for t in texts(chats(fake)[-1]) if t.startswith("<context_file_changed>")]
        assert len(changed) == 1, changed
        assert "STYLE-RULE v2: long names." in changed[0] and "IMPORTED-RULE v2" in changed[0]
    finally:
        await client.stop()
