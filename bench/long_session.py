"""A 200-turn coding-agent session through the sidecar and through the reference's own context algorithms: the tokens
each sends, the part an implicit cache serves, the billed equivalent, the peak, compactions and summary calls."""

# (a) The real sidecar process (editor protocol) on a generated workspace, against a fake Gemini that measures each
#     request as it arrives (bench/prompt_metrics.py). The model's calls are scripted (bench/session_plan.py), so the
#     sidecar's own tools run them: reads, shell commands, edits. Whatever the sidecar does to its context (masking,
#     compaction, re-attaching files) shows in the requests the fake receives; this file does not look inside.
# (b) The reference (@google/gemini-cli-core 0.61.0 under node, bench/long_session.mjs) replays the same session: the
#     same user prompts, the same model replies and the same tool outputs as the sidecar's tools produced them, taken
#     from the sidecar's requests where each was new. Before each request it runs its compression check
#     (ChatCompressionService.compress, whose two summary calls go to a second measuring fake and get the same fake
#     summary) and its masking (ToolOutputMaskingService.mask, default thresholds), then sends the request, with the
#     sidecar's system instruction and tool declarations, to that fake.
# Both sides run with the same window and threshold, and background compaction off (a preparation between turns
# would race the scripted user, and the reference has none): the request sequence is deterministic.

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench import reference
from bench.common import Row, fake_options, init_params, sidecar_client, verdict
from bench.prompt_metrics import CACHED_PRICE, MIN_CACHEABLE, MeteredFake, Request, Totals
from bench.session_plan import Plan, session_plan

RUNNER = Path(__file__).with_name("long_session.mjs")
TURNS = 200
MODEL = "gemini-2.5-flash"
WINDOW = 1_048_576  # the model's window (both sides' model tables)
THRESHOLD = 0.5
GOAL_BILLED = 0.5  # the goal: a billed-token equivalent at most half the reference's
PAUSE_AFTER_EDITS_S = 0.5


async def _sidecar(tmp: Path, plan: Plan, fake: MeteredFake) -> dict[str, Any]:
    root = tmp / "workspace"
    root.mkdir(parents=True)
    plan.write(root)
    client = sidecar_client(tmp / "home")
    notices: list[dict[str, Any]] = []
    client.on("sidecar/compressed", notices.append)
    client.on("window/showMessage", lambda _p: None)
    client.on("window/workDoneProgress/create", lambda _p: None)
    client.on("sidecar/confirmToolCall", lambda _p: {"decision": "allow"})
    await client.start()
    started = time.perf_counter()
    try:
        options = fake_options(
            fake.url, model=MODEL, approvalMode="yolo", backgroundCompaction=False, compressionThreshold=THRESHOLD
        )
        await client.request("initialize", init_params(str(root), options))
        client.notify("initialized", {})
        for number, turn in enumerate(plan.turns):
            fake.script(plan.script(number))
            await client.request("sidecar/sendMessage", {"text": turn.prompt}, timeout=600)
            left = fake.pending()
            if left:
                raise RuntimeError(f"turn {number} left scripted replies unused: {left[:2]}")
            if any(r.name in ("replace", "write_file") for r in turn.rounds):
                # The user reads the reply: the watcher (0.1 s debounce) reports the edited files before the next
                # message, not sometimes before and sometimes after it (its notice goes into the history).
                await asyncio.sleep(PAUSE_AFTER_EDITS_S)
    finally:
        await client.close()
    if fake.frame is None:
        raise RuntimeError("the sidecar sent no chat request")
    return {
        "seconds": time.perf_counter() - started,
        "compactions": [n["status"] for n in notices if n.get("status") != "NOOP"],
        "requests": fake.take_measured(),
        **fake.frame,
    }


def _model_content(text: str | None, call: tuple[str, dict[str, Any]] | None) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    if call is not None:
        parts.append({"functionCall": {"name": call[0], "args": call[1]}})
    return {"role": "model", "parts": parts}


def replay(plan: Plan, requests: list[Request], head: list[Any]) -> dict[str, Any]:
    """The session as the reference gets it: `head`, what came before the user's message in the sidecar's first
    request (its <session_context>), then one step per chat request: the model's previous reply (as scripted) and
    the new user content, a prompt or the tool's result as the sidecar's tool produced it (taken from the request
    where it was new)."""
    chat = [r for r in requests if r.kind == "chat"]
    expected = sum(plan.steps_per_turn)
    if len(chat) != expected:
        raise RuntimeError(f"the sidecar sent {len(chat)} chat requests for the {expected} steps of the session")
    steps: list[dict[str, Any]] = []
    last_read: dict[str, Any] = {}  # path -> the last read_file result, while the file is unchanged
    re_reads = {"count": 0, "sidecar_tokens": 0, "reference_tokens": 0}
    previous: dict[str, Any] | None = None
    position = 0
    for turn in plan.turns:
        steps.append({"model": previous, "user": {"role": "user", "parts": [{"text": turn.prompt}]}})
        position += 1
        for r in turn.rounds:
            user = chat[position].tail[-1]
            position += 1
            if not any("functionResponse" in p for p in user.get("parts") or []):
                raise RuntimeError(f"request {position} does not end with the result of {r.name}")
            path = r.args.get("path", "")
            if r.name == "read_file":
                earlier = last_read.get(path)
                if earlier is not None:
                    re_reads["count"] += 1
                    re_reads["sidecar_tokens"] += _tokens(user)
                    if _responses(earlier) != _responses(user):
                        user = _with_responses(user, _responses(earlier))  # a note instead: the reference reads again
                    re_reads["reference_tokens"] += _tokens(user)
                last_read[path] = user
            elif r.name in ("replace", "write_file"):
                last_read.pop(path, None)
            steps.append({"model": _model_content(r.text, (r.name, r.args)), "user": user})
        previous = _model_content(turn.reply, None)
    return {"head": head, "steps": steps, "re_reads": re_reads}


def _responses(content: dict[str, Any]) -> list[Any]:
    return [p["functionResponse"].get("response") for p in content["parts"] if "functionResponse" in p]


def _with_responses(content: dict[str, Any], responses: list[Any]) -> dict[str, Any]:
    """`content` (a tool result turn) with its function responses' payloads replaced, ids and names kept."""
    given = iter(responses)
    parts = [
        {**p, "functionResponse": {**p["functionResponse"], "response": next(given)}} if "functionResponse" in p else p
        for p in content["parts"]
    ]
    return {**content, "parts": parts}


def _tokens(content: dict[str, Any]) -> int:
    return -(-len(json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode()) // 4)


def _reference(tmp: Path, session: dict[str, Any], fake: MeteredFake) -> dict[str, Any]:
    package = reference.package_dir()
    path = tmp / "session.json"
    path.write_text(json.dumps({**session, "url": fake.url, "key": "bench-key", "model": MODEL,
                                "threshold": THRESHOLD, "tmp": str(tmp / "reference-tmp")}))  # fmt: skip
    started = time.perf_counter()
    proc = subprocess.run(
        ["node", str(RUNNER), str(package), str(path)], capture_output=True, text=True, timeout=1800, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"bench/long_session.mjs failed:\n{proc.stderr[-3000:]}")
    answer: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    answer["seconds"] = time.perf_counter() - started
    answer["requests"] = fake.take_measured()
    return answer


def measure(tmp: Path, turns: int = TURNS) -> dict[str, Any]:
    plan = session_plan(turns)
    ours, theirs = MeteredFake().start(), MeteredFake().start()
    try:
        side = asyncio.run(_sidecar(tmp / "sidecar", plan, ours))
        session = replay(plan, side["requests"], side["head"])
        ref = _reference(tmp, {k: session[k] for k in ("head", "steps")} | _request_frame(side), theirs)
    finally:
        ours.stop()
        theirs.stop()
    shutil.rmtree(tmp / "reference-tmp", ignore_errors=True)
    return {
        "turns": turns,
        "steps": len(session["steps"]),
        "plan": {"reads": plan.reads, "edits": plan.edits, "shells": plan.shells},
        "re_reads": session["re_reads"],
        "sidecar": {"seconds": side["seconds"], "compactions": side["compactions"],
                    "totals": asdict(Totals.of(side["requests"])), "per_request": _series(side["requests"])},
        "reference": {"seconds": ref["seconds"], "compactions": ref["compactions"], "masked": ref["masked"],
                      "masked_tokens": ref["maskedTokens"], "totals": asdict(Totals.of(ref["requests"])),
                      "per_request": _series(ref["requests"])},
    }  # fmt: skip


def _request_frame(side: dict[str, Any]) -> dict[str, Any]:
    """The sidecar's system instruction and tool declarations, which the reference's requests carry too."""
    return {"system": side["system"], "tools": side["tools"]}


def _series(requests: list[Request]) -> list[list[Any]]:
    return [[r.kind, r.prompt, r.cached] for r in requests]


def _ratio(ours: float, theirs: float) -> str:
    return f"{ours / theirs:.2f}×" if theirs else "n/a"


def rows(result: dict[str, Any]) -> list[Row]:
    s, r = result["sidecar"]["totals"], result["reference"]["totals"]
    s_comp, r_comp = result["sidecar"]["compactions"], result["reference"]["compactions"]
    rr = result["re_reads"]
    setup = (
        f"{result['turns']} turns, {result['steps']} chat requests per side ({result['plan']['reads']} reads, "
        f"{rr['count']} of them re-reads of an unchanged file, {result['plan']['shells']} shell commands, "
        f"{result['plan']['edits']} edits; bench/session_plan.py), window {WINDOW:,}, threshold {THRESHOLD}, "
        f"background compaction off. Sidecar: the real process and its tools against a measuring fake "
        f"({result['sidecar']['seconds']:.0f} s). Reference: @google/gemini-cli-core 0.61.0's compress() and "
        f"ToolOutputMaskingService.mask() before each request, same prompts, replies, tool outputs, system "
        f"instruction and tools ({result['reference']['seconds']:.0f} s; it masked {result['reference']['masked']} "
        f"outputs, {result['reference']['masked_tokens']:,} tokens). Cached = the prefix byte-identical to the "
        f"previous request, when ≥ {MIN_CACHEABLE:,} tokens; billed = uncached + {CACHED_PRICE} × cached."
    )
    ok_peak = s["peak"] <= WINDOW
    return [
        Row(
            "issue 42a",
            f"Long session ({result['turns']} turns): billed-token equivalent, sidecar vs the reference (same session)",
            f"{s['billed'] / 1e6:.1f}M vs {r['billed'] / 1e6:.1f}M = {_ratio(s['billed'], r['billed'])}",
            f"≤ {GOAL_BILLED}×",
            verdict(s["billed"] <= GOAL_BILLED * r["billed"]),
            setup,
        ),
        Row(
            "issue 42b",
            "Long session: prompt tokens sent, and the share a cache can serve (prefix of the previous request)",
            f"{s['prompt'] / 1e6:.1f}M ({s['cached'] / max(1, s['prompt']):.0%} cacheable) vs "
            f"{r['prompt'] / 1e6:.1f}M ({r['cached'] / max(1, r['prompt']):.0%}) = {_ratio(s['prompt'], r['prompt'])}",
            "info",
            "info",
            f"Requests: {s['requests']} vs {r['requests']} (chat {s['chat_requests']} vs {r['chat_requests']}).",
        ),
        Row(
            "issue 42c",
            "Long session: peak request / window; compactions",
            f"peak {s['peak'] / WINDOW:.2f} vs {r['peak'] / WINDOW:.2f}; compactions {len(s_comp)} vs {len(r_comp)}",
            "peak ≤ 1.0; compactions ≤ the reference's",
            verdict(ok_peak and len(s_comp) <= len(r_comp)),
            f"Sidecar compactions: {', '.join(s_comp) or 'none'}; reference: {', '.join(r_comp) or 'none'}.",
        ),
        Row(
            "issue 42d",
            "Long session: summary calls and their input tokens (cacheable share)",
            f"{s['summary_calls']} calls, {s['summary_prompt'] / 1e3:,.0f}k tokens "
            f"({s['summary_cached'] / max(1, s['summary_prompt']):.0%} cacheable) vs {r['summary_calls']} calls, "
            f"{r['summary_prompt'] / 1e3:,.0f}k ({r['summary_cached'] / max(1, r['summary_prompt']):.0%})",
            "info",
            "info",
            "A summary call's cacheable part is its prefix shared with the request just before it (for pass 1, the "
            "last chat request; for pass 2, pass 1).",
        ),
        Row(
            "issue 42e",
            "Long session: re-reads of unchanged files, and the tokens their results carried",
            f"{rr['count']} re-reads: {rr['sidecar_tokens'] / 1e3:,.0f}k tokens vs "
            f"{rr['reference_tokens'] / 1e3:,.0f}k",
            "info",
            "info",
            "The model's calls are scripted, so both sides re-read the same files; what differs is what a re-read "
            "returns.",
        ),
    ]
