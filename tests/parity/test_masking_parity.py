"""Tool-output masking against the reference's own ToolOutputMaskingService under node: the same parts masked, the
same previews (the sidecar's snippet adds a read_file hint and names its own saved file)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sidecar.compaction.masking import ToolOutputMasker
from sidecar.compaction.tool_outputs import ToolOutputSaver
from sidecar.config.settings import ToolOutputMasking
from sidecar.core.conversation import Conversation
from sidecar.core.history import Content

HARNESS = Path(__file__).with_name("masking.mjs")
CONFIG = {"protectionThresholdTokens": 2_000, "minPrunableThresholdTokens": 1_500, "protectLatestTurn": True}


def exchange(name: str, response: dict[str, Any], n: int) -> list[dict[str, Any]]:
    return [
        {"role": "user", "parts": [{"text": f"step {n}"}]},
        {"role": "model", "parts": [{"functionCall": {"name": name, "args": {"n": n}, "id": f"c{n}"}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": name, "id": f"c{n}", "response": response}}]},
        {"role": "model", "parts": [{"text": f"done {n}"}]},
    ]


def lines(prefix: str, count: int) -> str:
    return "\n".join(f"{prefix} line {k} of the output" for k in range(count))


def cases() -> list[list[dict[str, Any]]]:
    shell_sections = {"output": f"Output: {lines('build', 300)}\nError: make failed\nExit Code: 2"}
    shell_root = {"output": lines("test", 250), "exitCode": 1, "error": "1 test failed"}
    shell_short = {"stdout": "ok\n" * 5 + "x" * 9_000, "exit_code": 0}
    cjk = {"output": ("读取文件内容 😀 " * 400) + lines("tail", 40)}
    plain = {"output": "a" * 8_000 + "z" * 300}
    nested = {"matches": [{"path": f"src/m{k}.py", "line": k, "text": "def f(): pass"} for k in range(150)]}
    newest = {"output": lines("newest", 500)}
    outputs = [
        ("run_shell_command", shell_sections),
        ("run_shell_command", shell_root),
        ("run_shell_command", shell_short),
        ("read_file", cjk),
        ("read_file", plain),
        ("search_text", nested),
        ("read_file", newest),
    ]
    one = [c for n, (name, response) in enumerate(outputs) for c in exchange(name, response, n)]
    few = [c for n, (name, response) in enumerate(outputs[-2:]) for c in exchange(name, response, n)]
    small = [c for n in range(3) for c in exchange("read_file", {"output": lines("small", 100)}, n)]
    return [one, few, small]


#: The one deliberate difference: for shell text that is not in sections the reference returns the head and tail
#: before it appends a root exitCode / error, so a failed command's code and error vanish from its preview (and a
#: result holding only `error`, as a timed-out command's does, gets an empty preview); the sidecar appends them.
SHELL_ROOT_INDEX = 6  # the second exchange's function response (4 contents an exchange)
KEPT_BY_THE_SIDECAR = "\n[Exit Code: 1]\n[Error: 1 test failed]"


def preview(snippet: str) -> str:
    """The preview inside a masked snippet (without the tag and the lines naming the file)."""
    assert snippet.startswith("<tool_output_masked>\n"), snippet[:80]
    return snippet[len("<tool_output_masked>\n") :].split("\n\nOutput too large. Full output available at: ")[0]


def ours(history: list[dict[str, Any]], folder: Path) -> list[dict[str, Any]]:
    contents = [*msgspec.convert(history, list[Content]), Content(role="user", parts=[])]  # the request being sent
    conv = Conversation("parity", contents)
    masker = ToolOutputMasker(ToolOutputSaver(folder))
    settings = ToolOutputMasking(protection_tokens=2_000, min_prunable_tokens=1_500, payback_requests=0)
    chosen = masker.decide(conv, settings)
    masking = masker.mask(conv, chosen) if chosen else None
    found = []
    for index, content in sorted((masking.replacements if masking else {}).items()):
        for j, part in enumerate(content.parts):
            fr = part.function_response
            if fr is not None and isinstance(fr.response, dict) and "<tool_output_masked>" in fr.response["output"]:
                found.append({"index": index, "part": j, "preview": preview(fr.response["output"])})
    return found


def test_the_same_outputs_are_masked_with_the_same_previews(reference_package: Path, tmp_path: Path) -> None:
    histories = cases()
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"cases": [{"history": h, "config": CONFIG} for h in histories]}))
    proc = subprocess.run(
        ["node", str(HARNESS), str(reference_package), str(request)], capture_output=True, text=True, timeout=300
    )
    if proc.returncode != 0:
        pytest.fail(f"the reference harness failed:\n{proc.stderr[-3000:]}")
    theirs = json.loads(proc.stdout.splitlines()[-1])  # the reference's debug lines come first
    for k, history in enumerate(histories):
        expected = [
            {"index": m["index"], "part": m["part"], "preview": preview(m["output"])} for m in theirs[k]["masked"]
        ]
        for item in expected:
            if (k, item["index"]) == (0, SHELL_ROOT_INDEX):
                item["preview"] += KEPT_BY_THE_SIDECAR
        assert ours(history, tmp_path / f"ours-{k}") == expected, f"case {k}"
    assert [t["maskedCount"] for t in theirs] == [6, 2, 0], "the cases test masking and its absence"
