"""The registry's contract: declarations, argument checks, refusals as ToolPlan.error, and the confirmation rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from sidecar.fakegemini import validate
from sidecar.tools import DECLARATIONS, ToolPlan, ToolRegistry, needs_confirmation


@pytest.fixture
def tools(tmp_path: Path) -> ToolRegistry:
    (tmp_path / "a.txt").write_text("alpha\n")
    return ToolRegistry([str(tmp_path)], save_output=lambda text, tool: tmp_path / "out", output_threshold=lambda: 100)


def test_declarations_are_valid_gemini_tools(tools: ToolRegistry) -> None:
    declared = tools.declarations(trusted=True)
    validate.check_tools(declared)
    [tool] = [types.Tool.model_validate(t) for t in declared]
    assert tool.function_declarations is not None
    names = [d.name for d in tool.function_declarations]
    assert names == [
        "read_file",
        "list_directory",
        "glob",
        "search_text",
        "write_file",
        "replace",
        "run_shell_command",
        "save_memory",
        "write_todos",
    ]
    for decl in declared[0]["functionDeclarations"]:
        schema = decl["parametersJsonSchema"]
        assert "parameters" not in decl and decl["description"]
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        assert all(p["description"] for p in schema["properties"].values())


def test_declarations_are_copies(tools: ToolRegistry) -> None:
    tools.declarations(trusted=True)[0]["functionDeclarations"][0]["name"] = "changed"
    assert DECLARATIONS["read_file"]["name"] == "read_file"


def test_unknown_tool(tools: ToolRegistry) -> None:
    plan = tools.plan("delete_everything", {}, trusted=False)
    assert plan.error is not None and plan.error.startswith("Unknown tool 'delete_everything'. Tools: read_file,")
    assert "run_shell_command" not in plan.error  # not offered where it is unavailable


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (None, "Missing required argument: 'path'"),
        ([1, 2], "must be an object, got list"),
        ({"path": "a.txt", "offset": 3}, "Unknown argument 'offset'; the arguments are: path, start_line, end_line"),
        ({"path": "a.txt", "start_line": "3"}, "'start_line' must be an integer, got str '3'"),
        ({"path": "a.txt", "start_line": True}, "'start_line' must be an integer, got bool"),
        ({"path": "a.txt", "start_line": 1.5}, "'start_line' must be an integer, got float"),
        ({"path": None}, "'path' must be a string, got NoneType"),
    ],
)
def test_argument_errors_name_the_problem(tools: ToolRegistry, args: Any, message: str) -> None:
    plan = tools.plan("read_file", args, trusted=True)
    assert plan.error is not None and plan.error.startswith("Invalid arguments for read_file: ")
    assert message in plan.error


async def test_json_number_integers_and_null_optionals_are_accepted(tools: ToolRegistry) -> None:
    plan = tools.plan("read_file", {"path": "a.txt", "start_line": 1.0, "end_line": None}, trusted=True)
    assert plan.error is None and plan.args == {"path": "a.txt", "start_line": 1}
    result = await tools.run(plan, apply_edit=None)
    assert result.ok and result.response == {"output": "[showing lines 1–1 of 1]\nalpha\n"}


def test_plan_kinds_descriptions_and_allow_keys(tools: ToolRegistry) -> None:
    read = tools.plan("read_file", {"path": "a.txt"}, trusted=True)
    assert (read.kind, read.description, read.diff, read.edit, read.allow_key) == (
        "read",
        "Read a.txt",
        None,
        None,
        None,
    )
    edit = tools.plan("replace", {"path": "a.txt", "old_string": "alpha", "new_string": "beta"}, trusted=True)
    assert (edit.kind, edit.allow_key) == ("edit", "replace")
    assert edit.diff is not None and edit.edit is not None
    shell = tools.plan("run_shell_command", {"command": "make test\n  && echo ok"}, trusted=True)
    assert shell.kind == "shell" and shell.description == "Run `make test ⏎ && echo ok` in ."
    assert shell.allow_key == "run_shell_command:make test\n  && echo ok"


def _plan(kind: str, error: str | None = None) -> ToolPlan:
    name = {"read": "read_file", "edit": "replace", "shell": "run_shell_command"}[kind]
    key = {"read": None, "edit": "replace", "shell": "run_shell_command:ls"}[kind]
    return ToolPlan(name, {}, kind, "x", error=error, allow_key=key)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("mode", "read", "edit", "shell"),
    [
        ("default", False, True, True),
        ("autoEdit", False, False, True),
        ("yolo", False, False, False),
        ("something-else", False, True, True),  # unknown modes are as strict as default
    ],
)
def test_approval_modes(mode: str, read: bool, edit: bool, shell: bool) -> None:
    assert needs_confirmation(_plan("read"), mode, set()) is read
    assert needs_confirmation(_plan("edit"), mode, set()) is edit
    assert needs_confirmation(_plan("shell"), mode, set()) is shell


def test_always_allowed_by_tool_name_or_allow_key() -> None:
    assert not needs_confirmation(_plan("edit"), "default", {"replace"})
    assert not needs_confirmation(_plan("shell"), "default", {"run_shell_command:ls"})
    assert needs_confirmation(_plan("shell"), "default", {"run_shell_command:ls -la"})
    assert not needs_confirmation(_plan("shell"), "default", {"run_shell_command"})


def test_refused_plans_never_ask() -> None:
    assert not needs_confirmation(_plan("shell", error="nope"), "default", set())
    assert not needs_confirmation(_plan("edit", error="nope"), "default", set())


async def test_run_of_a_refused_plan_returns_its_error(tools: ToolRegistry) -> None:
    plan = tools.plan("read_file", {"path": "/etc/passwd"}, trusted=True)
    result = await tools.run(plan, apply_edit=None)
    assert not result.ok and result.response == {"error": plan.error}
    assert result.summary.startswith("read_file refused: The path '/etc/passwd' is outside the workspace.")


async def test_runtime_failures_come_back_as_results(tools: ToolRegistry, tmp_path: Path) -> None:
    plan = tools.plan("read_file", {"path": "gone.txt"}, trusted=True)
    assert plan.error is None  # existence is checked when the read runs
    result = await tools.run(plan, apply_edit=None)
    assert not result.ok and result.response == {"error": "File not found: gone.txt"}
    assert result.summary == "read_file failed: File not found: gone.txt"


def test_unpaired_surrogates_are_refused_before_anything_is_written(tools: ToolRegistry, tmp_path: Path) -> None:
    plan = tools.plan("write_file", {"path": "s.txt", "content": "a\ud800b"}, trusted=True)
    assert plan.error is not None and "'content' contains an unpaired UTF-16 surrogate" in plan.error
    assert not (tmp_path / "s.txt").exists()


async def test_unexpected_errors_become_error_results(tools: ToolRegistry, tmp_path: Path) -> None:
    plan = tools.plan("read_file", {"path": "a.txt"}, trusted=True)
    broken = ToolPlan(plan.name, plan.args, plan.kind, plan.description, payload=None)  # not a valid payload
    result = await tools.run(broken, apply_edit=None)
    assert not result.ok and result.response["error"].startswith("read_file failed unexpectedly: AttributeError")
