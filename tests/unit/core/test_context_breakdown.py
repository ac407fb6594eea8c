"""The context breakdown's arithmetic: the rows add up to what the fake counts for the same request body, each MCP
server and each carved piece (memory file, pins) is a row of its own, taken from where it sits."""

from __future__ import annotations

import msgspec

from sidecar.core.content_json import encode_content
from sidecar.core.context_breakdown import Piece, RequestView, masked_output_pieces, measure_request, rows_of
from sidecar.core.history import Content, FunctionCall, FunctionResponse, Part, text_content
from sidecar.core.ide_context import FULL_HEADER
from sidecar.core.masking import MASK_TAG, masked_snippet
from sidecar.fakegemini.replies import prompt_tokens

MEMORY = "--- Context from: /w/GEMINI.md ---\nUse tabs.\n--- End of Context from: /w/GEMINI.md ---"
SYSTEM = f"You are a coding agent.\n\n{MEMORY}\n\n<pinned_facts>\n- the db is read-only\n</pinned_facts>"
TOOLS = [
    {
        "functionDeclarations": [
            {"name": "read_file", "description": "Read a file.", "parametersJsonSchema": {"type": "object"}},
            {"name": "mcp_calc_add", "description": "Add two numbers.", "parametersJsonSchema": {"type": "object"}},
            {"name": "mcp_web_fetch", "description": "Fetch a page.", "parametersJsonSchema": {"type": "object"}},
        ]
    }
]
HISTORY = [
    text_content("user", "<session_context>\nToday is Monday.\n</session_context>"),
    text_content("user", f"{FULL_HEADER}\n```json\n{{}}\n```"),
    text_content("user", "read the notes " * 20),
    Content(role="model", parts=[Part(function_call=FunctionCall(name="read_file", args={"path": "n.txt"}, id="c"))]),
    Content(
        role="user",
        parts=[Part(function_response=FunctionResponse(name="read_file", id="c", response={"output": "notes " * 300}))],
    ),
    text_content("model", "Done é ✓."),
]


def view() -> RequestView:
    wire = [encode_content(c) for c in HISTORY]
    return RequestView(
        wire, [f"m{i}" for i in range(len(wire))], SYSTEM, TOOLS, {"mcp_calc_add": "calc", "mcp_web_fetch": "web"}
    )


def fake_count(v: RequestView) -> int:
    body = {
        "contents": [msgspec.json.decode(c) for c in v.contents],
        "systemInstruction": {"parts": [{"text": v.system_instruction}], "role": "user"},
        "tools": v.tools,
    }
    return prompt_tokens(body)


def test_the_rows_add_up_to_the_fakes_count_of_the_same_request() -> None:
    v = view()
    rows = rows_of(measure_request(v))
    assert sum(r.tokens for r in rows) == fake_count(v)
    by = {r.category: r for r in rows}
    assert set(by) >= {
        "systemPrompt",
        "builtinTools",
        "mcpTools",
        "sessionContext",
        "ideContext",
        "messages",
        "toolOutputs",
    }
    assert by["toolOutputs"].tokens > by["messages"].tokens, "the long tool output is counted as a tool output"


def test_each_mcp_server_is_a_row_with_its_name() -> None:
    rows = rows_of(measure_request(view()))
    assert [(r.label, r.target) for r in rows if r.category == "mcpTools"] == [
        ("MCP: calc", "calc"),
        ("MCP: web", "web"),
    ]


def test_pieces_move_from_where_they_sit_and_the_sum_holds() -> None:
    v = view()
    plain = {r.category: r.tokens for r in rows_of(measure_request(v))}
    pieces = [
        Piece("memoryFile", "GEMINI.md (project)", MEMORY, "systemPrompt", "/w/GEMINI.md"),
        Piece("pinnedFacts", "Pinned facts", "<pinned_facts>\n- the db is read-only\n</pinned_facts>", "systemPrompt"),
        Piece("memoryFile", "absent.md", "not in the request", "systemPrompt", "/w/absent.md"),
    ]
    rows = rows_of(measure_request(v, pieces))
    by = {(r.category, r.label): r for r in rows}
    assert by[("memoryFile", "GEMINI.md (project)")].target == "/w/GEMINI.md"
    assert ("memoryFile", "absent.md") not in by, "a text the request does not hold is not counted"
    moved = by[("memoryFile", "GEMINI.md (project)")].tokens + by[("pinnedFacts", "Pinned facts")].tokens
    assert abs(plain["systemPrompt"] - by[("systemPrompt", "System prompt")].tokens - moved) <= 2
    assert sum(r.tokens for r in rows) == fake_count(v)


def test_an_empty_request_has_no_rows() -> None:
    assert rows_of(measure_request(RequestView([], [], None, None))) == []


def test_a_listed_model_is_offered_when_it_can_chat() -> None:
    from sidecar.core.models import chat_model_id, offers_chat

    assert offers_chat("gemini-2.5-pro", ["generateContent", "countTokens"])
    assert not offers_chat("gemini-embedding-001", ["embedContent"])
    assert offers_chat("gemma-4-31b-it", []) and offers_chat("gemini-2.5-flash", [])  # Vertex: no methods listed
    assert not offers_chat("gemini-embedding-001", []) and not offers_chat("imagen-4.0", [])
    assert chat_model_id("models/gemini-2.5-pro") == chat_model_id("publishers/google/models/gemini-2.5-pro")


def test_masked_tool_outputs_are_a_row_of_their_own_taken_from_the_tool_outputs() -> None:
    snippet = masked_snippet("first lines", "/o/1.txt")
    history = [
        *HISTORY[:3],
        Content(role="model", parts=[Part(function_call=FunctionCall(name="read_file", args={"path": "a"}, id="m"))]),
        Content(
            role="user",
            parts=[Part(function_response=FunctionResponse(name="read_file", id="m", response={"output": snippet}))],
        ),
        *HISTORY[3:],
    ]
    wire = [encode_content(c) for c in history]
    v = RequestView(wire, [f"m{i}" for i in range(len(wire))], SYSTEM, TOOLS, {})
    plain = {r.category: r.tokens for r in rows_of(measure_request(v))}
    pieces = masked_output_pieces(history, MASK_TAG)
    assert [p.text for p in pieces] == [snippet], "only the masked output, not the whole one"
    rows = rows_of(measure_request(v, pieces))
    by = {r.category: r.tokens for r in rows}
    assert by["maskedToolOutputs"] > 0
    assert by["toolOutputs"] == plain["toolOutputs"] - by["maskedToolOutputs"]
    assert sum(by.values()) == sum(plain.values()) == fake_count(v)
