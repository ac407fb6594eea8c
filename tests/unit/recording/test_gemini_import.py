"""Gemini CLI session import (.json and .jsonl with $set / $rewindTo) and the sessions commands."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import msgspec
import pytest

from sidecar.core.history import content_text, has_function_call, has_function_response, text_content
from sidecar.core.recording import LastUsage
from sidecar.protocol.sessions import TranscriptMessage
from sidecar.recording.cli import add_parsers, main_import, main_sessions_list, main_sessions_show
from sidecar.recording.gemini_import import GeminiImportError, import_gemini_session, read_gemini_session
from sidecar.recording.store import SessionStore

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "gemini-cli"
LEGACY = FIXTURES / "legacy-session.json"
JSONL = FIXTURES / "session-2026-05-10T14-00-b2d4e6f8.jsonl"


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore("/srv/app", home=tmp_path)


def test_read_legacy_json() -> None:
    session = read_gemini_session(LEGACY)
    assert session.format == "json" and session.superseded == []
    assert [m["id"] for m in session.messages] == ["a1", "a2", "a3", "a4", "a5", "a6", "a7"]
    assert session.metadata["summary"] == "Fix the CSV parser quoting bug"


def test_read_jsonl_applies_upserts_checkpoints_and_rewinds() -> None:
    session = read_gemini_session(JSONL)
    assert session.format == "jsonl"
    assert [m["id"] for m in session.messages] == ["e1", "s1", "s2", "k1", "k2", "u4", "g4"]
    assert [m["id"] for m in session.superseded] == ["u1", "g1", "g2", "u2", "g3", "u3", "u5", "g5"]
    g1 = next(m for m in session.superseded if m["id"] == "g1")
    assert g1["tokens"]["input"] == 5000 and g1["toolCalls"][0]["status"] == "success"  # the last version won
    assert session.metadata["summary"] == "CLI flags --verbose and --quiet"
    assert session.warnings == ["1 unreadable line in the Gemini CLI file was ignored (as Gemini CLI does)."]


def test_rewind_to_an_unknown_id_clears_like_gemini_cli(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [
        {"sessionId": "x", "projectHash": "h"},
        {"id": "a", "type": "user", "content": "first"},
        {"id": "b", "type": "gemini", "content": "reply"},
        {"id": "c", "type": "user", "content": "second"},
        {"$rewindTo": "c"},
    ]
    path.write_text("\n".join(map(json.dumps, lines)) + "\n")
    assert [m["id"] for m in read_gemini_session(path).messages] == ["a", "b"]
    path.write_text("\n".join(map(json.dumps, [*lines, {"$rewindTo": "zzz"}])) + "\n")
    assert read_gemini_session(path).messages == []


def test_import_legacy_json_is_resumable(store: SessionStore) -> None:
    result = import_gemini_session(LEGACY, store)
    assert "Tool call 'run_shell_command' had no recorded result; an error result was added." in result.warnings
    loaded = store.load(result.session_id)
    assert loaded.warnings == []
    roles = [c.role for c in loaded.history]
    assert roles == ["user", "model", "user", "model", "user", "user", "model"]
    assert has_function_call(loaded.history[1]) and has_function_response(loaded.history[2])
    # every call is answered, in order, so the history is valid for the API
    calls = [p.function_call.id for p in loaded.history[3].parts if p.function_call]
    answers = [p.function_response.id for p in loaded.history[4].parts if p.function_response]
    assert calls == answers == ["replace-2", "run_shell_command-3"]
    assert loaded.history[4].parts[1].function_response.response == {  # type: ignore[union-attr]
        "error": "No result was recorded for this tool call in the imported Gemini CLI session."
    }
    assert content_text(loaded.history[0]).startswith("The CSV parser")
    assert loaded.last_usage == LastUsage(9012, "api")
    assert loaded.title == "Fix the CSV parser quoting bug" and loaded.metadata.model == "gemini-2.5-pro"
    assert loaded.metadata.time == "2025-11-02T09:14:03.120Z"
    imported = loaded.metadata.imported_from or {}
    assert imported["tool"] == "gemini-cli" and imported["sessionId"] == "7f3c2a10-5b7e-4c1e-9a55-0d3b8f0e2c11"
    kinds = [(e.kind, e.time) for e in loaded.transcript if isinstance(e, TranscriptMessage)]
    assert ("info", "2025-11-02T09:15:30.000Z") in kinds  # display-only, with its original time
    assert [e.text for e in loaded.transcript if isinstance(e, TranscriptMessage) and e.kind == "user"][1] == "/stats"
    tool_call = next(e for e in loaded.transcript if e.id == "m2")
    assert "→ read_file" in tool_call.text  # type: ignore[union-attr]
    # the tool names are data, not the first word of the text ("Let me read…"): editors title cards with them
    assert isinstance(tool_call, TranscriptMessage) and tool_call.tool_calls is not None
    assert [(c.name, c.id) for c in tool_call.tool_calls] == [("read_file", "read_file-1")]
    assert tool_call.tool_calls[0].args == {"absolute_path": "/home/dev/proj/src/csv.py"}
    two = next(e for e in loaded.transcript if e.id == "m4")
    assert isinstance(two, TranscriptMessage) and two.tool_calls is not None
    assert [c.name for c in two.tool_calls] == ["replace", "run_shell_command"]
    wire = msgspec.to_builtins(two)
    assert wire["toolCalls"][0]["name"] == "replace" and "toolCalls" not in msgspec.to_builtins(loaded.transcript[0])

    # ... and can be continued
    writer = store.open_for_append(result.session_id, loaded)
    writer.message(text_content("user", "One more thing"), kind="user")
    writer.close()
    assert store.load(result.session_id).history_ids[-1] == "m10"


def test_import_jsonl_resumes_the_compacted_view_and_keeps_the_rest_for_the_transcript(store: SessionStore) -> None:
    result = import_gemini_session(JSONL, store)
    loaded = store.load(result.session_id)
    texts = [content_text(c) for c in loaded.history]
    assert texts[0].startswith("<state_snapshot>") and texts[1] == "Got it. Thanks for the additional context!"
    assert texts[2:] == [
        "Now also add --quiet.",
        "Added --quiet.",
        "Make them mutually exclusive.",
        "Done: they are in a mutually exclusive group.",
    ]
    assert "Delete the tests." not in texts  # rewound in Gemini CLI
    assert loaded.last_usage == LastUsage(1800, "api")
    transcript = [e for e in loaded.transcript if isinstance(e, TranscriptMessage)]
    assert transcript[0].text.startswith("Add a --verbose flag") and transcript[0].time == "2026-05-10T14:00:05.000Z"
    assert any("← read_file: import argparse" in e.text for e in transcript)  # superseded tool result shown
    assert any(e.kind == "env" and e.text.startswith("<session_context>") for e in transcript)
    assert len(transcript) == loaded.message_count
    # the count the user is told leaves out the imported <session_context> (context, not a message), as listing does
    assert result.messages == loaded.message_count - loaded.context_count == len(transcript) - 1
    assert loaded.title == "CLI flags --verbose and --quiet"


def test_not_a_gemini_session(tmp_path: Path, store: SessionStore) -> None:
    (tmp_path / "x.json").write_text('{"hello": "world"}')
    with pytest.raises(GeminiImportError, match="not a Gemini CLI session"):
        import_gemini_session(tmp_path / "x.json", store)
    with pytest.raises(GeminiImportError, match="Cannot read"):
        import_gemini_session(tmp_path / "missing.json", store)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="sidecar")
    add_parsers(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def test_cli_import_list_show(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SIDECAR_HOME", str(tmp_path / "home"))
    project = str(tmp_path)
    out = io.StringIO()
    args = parse(["import", str(JSONL), "--project", project, "--json"])
    assert args.func is main_import and main_import(args, out) == 0
    imported = json.loads(out.getvalue())
    assert imported["historyLength"] == 6
    assert imported["messageCount"] == 15, "as listed: the imported <session_context> is not a message"

    out = io.StringIO()
    assert main_sessions_list(parse(["sessions", "list", "--project", project]), out) == 0
    assert imported["sessionId"] in out.getvalue() and "CLI flags --verbose and --quiet" in out.getvalue()
    out = io.StringIO()
    assert main_sessions_list(parse(["sessions", "list", "--all", "--json"]), out) == 0
    [info] = json.loads(out.getvalue())
    assert info["messageCount"] == 15 and info["projectRoot"] == project

    out = io.StringIO()
    args = parse(["sessions", "show", imported["sessionId"][:8], "--project", project])
    assert args.func is main_sessions_show and main_sessions_show(args, out) == 0
    text = out.getvalue()
    assert text.startswith(f"Session {imported['sessionId']}: CLI flags --verbose and --quiet\n")
    assert "You:\n    Add a --verbose flag to cli.py." in text
    assert "Gemini (tool call):\n    Reading cli.py.\n    → read_file" in text

    assert main_sessions_show(parse(["sessions", "show", "nope", "--project", project]), io.StringIO()) == 1
    assert "No session 'nope'" in capsys.readouterr().err


def test_cli_show_prints_compactions_with_their_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIDECAR_HOME", str(tmp_path / "home"))
    store = SessionStore(str(tmp_path), home=tmp_path / "home")
    writer = store.create("s1", model="m")
    first = writer.message(text_content("user", "hello"), kind="user")
    writer.message(text_content("model", "hi"), kind="model")
    cid = writer.compaction(
        trigger="manual",
        status="COMPRESSED",
        original_tokens=12000,
        new_tokens=3000,
        snapshot="<state_snapshot>\n<overall_goal>greet</overall_goal>\n</state_snapshot>",
        summary=text_content("user", "<state_snapshot>…</state_snapshot>"),
        ack=text_content("model", "Got it."),
        kept_from=first,
    )
    writer.undo_compaction(cid)
    writer.close()
    out = io.StringIO()
    args = argparse.Namespace(project=str(tmp_path), session_id="s1", json=False)
    assert main_sessions_show(args, out) == 0
    text = out.getvalue()
    assert f"── Compaction {cid} (manual): COMPRESSED, 12,000 → 3,000 tokens (undone) ──" in text
    assert "    <overall_goal>greet</overall_goal>" in text


SPLIT = FIXTURES / "split-model-turns.jsonl"


def test_import_merges_split_model_turns_and_sends_only_what_the_api_accepts(store: SessionStore) -> None:
    from sidecar.fakegemini import validate

    result = import_gemini_session(SPLIT, store)
    loaded = store.load(result.session_id)
    history = loaded.history
    assert [c.role for c in history] == [
        "user",
        "model",
        "user",
        "model",
        "user",
        "user",
        "model",
        "user",
        "model",
        "user",
    ]
    # text, then the call, in one model content (Gemini CLI recorded them as two messages)
    first = history[1]
    assert [p.text is not None for p in first.parts] == [True, False]
    assert first.parts[1].function_call is not None and first.parts[1].function_call.name == "read_file"
    # the calls after an info message: empty text dropped; the cancelled call and the empty result answered
    both = history[3]
    assert [p.function_call.name for p in both.parts if p.function_call] == ["run_shell_command", "glob"]
    assert all(p.text != "" for c in history for p in c.parts)
    answers = [p.function_response.name for p in history[4].parts if p.function_response]
    assert answers == ["run_shell_command", "glob"]
    # two text messages of one reply (and an empty one) are one model content
    assert content_text(history[6]) == "Yes: ubuntu-22.04 lost Python 3.8; pin it with actions/setup-python."
    # info and error messages are in the transcript only
    texts = [e.text for e in loaded.transcript if isinstance(e, TranscriptMessage) and e.kind in ("info", "error")]
    assert "Switched to fallback model gemini-2.5-flash." in texts and "Request cancelled." in texts
    merged = next(e for e in loaded.transcript if e.id == "m2")
    assert isinstance(merged, TranscriptMessage) and merged.tool_calls is not None
    # continuing: the next request satisfies every rule of the strictest model, unrepaired
    request = [*history, text_content("user", "Go on.")]
    for model in ("gemini-2.5-flash", "gemini-3.5-flash", "an-unknown-model"):
        validate.check_contents(request, model)
