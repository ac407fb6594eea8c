"""The deterministic retention check also covers errors (their first line) and the user's decisions."""

from __future__ import annotations

from sidecar.core.history import Content, FunctionResponse, Part, text_content
from sidecar.core.snapshot import error_lines, missing_facts, user_decisions

TOOL_OUTPUT = """============ FAILURES ============
FAILED tests/test_x.py::test_add - assert 1 == 2
Traceback (most recent call last):
  File "a.py", line 3, in <module>
ValueError: invalid literal for int() with base 10: 'x'
src/main.c:12:5: error: expected ';' before '}' token
error[E0308]: mismatched types
src/app.ts(4,7): error TS2322: Type 'string' is not assignable to type 'number'.
--- FAIL: TestThing (0.00s)
An Error mentioned in prose is not an error line, nor is this ERRORS summary header?
"""


def shell(output: str) -> Content:
    response = FunctionResponse(name="run_shell_command", id="c1", response={"output": output})
    return Content(role="user", parts=[Part(function_response=response)])


def test_the_first_line_of_each_error_is_found_in_tool_outputs() -> None:
    assert error_lines([shell(TOOL_OUTPUT)]) == [
        "FAILED tests/test_x.py::test_add - assert 1 == 2",
        "ValueError: invalid literal for int() with base 10: 'x'",
        "src/main.c:12:5: error: expected ';' before '}' token",
        "error[E0308]: mismatched types",
        "src/app.ts(4,7): error TS2322: Type 'string' is not assignable to type 'number'.",
        "--- FAIL: TestThing (0.00s)",
    ]


def test_errors_the_user_pasted_count_too() -> None:
    pasted = text_content("user", "I get this:\nModuleNotFoundError: No module named 'yaml'\nCan you fix it?")
    assert error_lines([pasted]) == ["ModuleNotFoundError: No module named 'yaml'"]


def test_user_decisions_are_found_but_not_the_constraints_again() -> None:
    said = text_content(
        "user", "Let's use msgspec instead of pydantic. We'll go with option B. You must never touch main."
    )
    assert user_decisions([said]) == ["Let's use msgspec instead of pydantic.", "We'll go with option B."]
    assert user_decisions([text_content("model", "Let's try another approach.")]) == [], "the user's own words only"


def test_missing_facts_lists_errors_and_decisions_the_snapshot_dropped() -> None:
    history = [text_content("user", "We'll go with option B for the parser."), shell(TOOL_OUTPUT)]
    kept = (
        "<state_snapshot>we'll go with option B for the parser; valueerror: invalid literal for int() with base 10: 'x'"
    )
    missing = missing_facts(history, kept)
    assert "error: FAILED tests/test_x.py::test_add - assert 1 == 2" in missing
    assert not any("ValueError" in m for m in missing), "kept (case and spacing ignored)"
    assert not any(m.startswith("user decision:") for m in missing)
    assert "user decision: We'll go with option B for the parser." in missing_facts(history, "<state_snapshot>")


def test_a_snapshot_is_not_mined_for_errors() -> None:
    old = text_content("user", "<state_snapshot>ValueError: seen long ago</state_snapshot>")
    assert error_lines([old]) == []
