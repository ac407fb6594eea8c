"""The tools' Gemini FunctionDeclarations (JSON Schema in `parametersJsonSchema`) and the argument check."""

from __future__ import annotations

from typing import Any

__all__ = [
    "DECLARATIONS",
    "DEFAULT_SHELL_TIMEOUT",
    "MAX_SHELL_TIMEOUT",
    "SHELL_TOOL",
    "check_args",
    "declaration",
]

SHELL_TOOL = "run_shell_command"
DEFAULT_SHELL_TIMEOUT = 120
MAX_SHELL_TIMEOUT = 600

_PATH_NOTE = (
    "Relative paths start at the first workspace folder (tool results show paths that way too); paths outside "
    "the workspace folders are refused."
)


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _flag(description: str) -> dict[str, Any]:
    return {"type": "boolean", "description": description}


def _integer(description: str, minimum: int, maximum: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "description": description, "minimum": minimum}
    if maximum is not None:
        schema["maximum"] = maximum
    return schema


def _declare(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "parametersJsonSchema": {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
    }


_IGNORED = _flag("Also include files that .gitignore excludes and .git, node_modules and virtualenv folders.")
_DIRECTORY = _string(f"Directory to search in (default: every workspace folder). {_PATH_NOTE}")

DECLARATIONS: dict[str, dict[str, Any]] = {
    d["name"]: d
    for d in (
        _declare(
            "read_file",
            "Read a text file. Shows at most 2,000 lines / 256 KB per call; a note at the top says when the output "
            "is cut and which lines are shown, so you can read on with start_line/end_line.",
            {
                "path": _string(f"The file to read. {_PATH_NOTE}"),
                "start_line": _integer("First line to show, 1-based (default 1).", 1),
                "end_line": _integer("Last line to show, 1-based, inclusive (default: the end of the file).", 1),
            },
            ["path"],
        ),
        _declare(
            "list_directory",
            "List a directory's entries (directories end with '/'). Entries excluded by .gitignore and .git, "
            "node_modules and virtualenv folders are left out and counted unless include_ignored is true.",
            {
                "path": _string(f"The directory to list (default: the first workspace folder). {_PATH_NOTE}"),
                "include_ignored": _IGNORED,
            },
            [],
        ),
        _declare(
            "glob",
            "Find files whose path matches a glob pattern, e.g. '**/*.py', 'src/**/test_*.{ts,tsx}'. '*' and '?' "
            "stay within one path segment, '**' spans directories, '{a,b}' gives alternatives; a pattern without "
            "'/' matches file names at any depth. Returns at most 1,000 paths, sorted.",
            {
                "pattern": _string("The glob pattern, relative to the directory searched."),
                "directory": _DIRECTORY,
                "include_ignored": _IGNORED,
            },
            ["pattern"],
        ),
        _declare(
            "search_text",
            "Search file contents for a regular expression (Python syntax), line by line. Returns 'path:line: text' "
            "for at most 200 matching lines; binary files and files ignored by .gitignore are skipped.",
            {
                "pattern": _string("The regular expression to look for in each line."),
                "directory": _DIRECTORY,
                "include": _string("Only search files matching this glob, e.g. '*.py' or 'src/**/*.{ts,tsx}'."),
                "ignore_case": _flag("Match case-insensitively (default false)."),
            },
            ["pattern"],
        ),
        _declare(
            "write_file",
            "Create a file or replace its whole content. Missing parent directories are created. For a change to "
            "part of an existing file, prefer replace.",
            {
                "path": _string(f"The file to write. {_PATH_NOTE}"),
                "content": _string("The complete new content of the file."),
            },
            ["path", "content"],
        ),
        _declare(
            "replace",
            "Replace exact text in an existing file. old_string must match the file exactly (whitespace and "
            "indentation included; read the file first) and occur exactly expected_replacements times (default 1): "
            "include enough surrounding lines to make it unique.",
            {
                "path": _string(f"The file to edit. {_PATH_NOTE}"),
                "old_string": _string("The exact text to replace (not empty)."),
                "new_string": _string("The text to put in its place."),
                "expected_replacements": _integer(
                    "How many occurrences to replace (default 1); the edit is refused if the count differs.", 1
                ),
            },
            ["path", "old_string", "new_string"],
        ),
        _declare(
            SHELL_TOOL,
            "Run a shell command (bash -c) in a workspace directory, without input (stdin is empty). Returns the exit "
            "code and stdout and stderr combined. The command, and anything it starts in the background, is stopped "
            f"when it finishes, after timeout_seconds (default {DEFAULT_SHELL_TIMEOUT}) or when the user cancels. "
            "Long output is shortened to its start and end; the full output is saved to a file named in the result.",
            {
                "command": _string("The command line, run with bash -c."),
                "directory": _string(f"Working directory (default: the first workspace folder). {_PATH_NOTE}"),
                "timeout_seconds": _integer(
                    f"Stop the command after this many seconds (default {DEFAULT_SHELL_TIMEOUT}).", 1, MAX_SHELL_TIMEOUT
                ),
            },
            ["command"],
        ),
    )
}


def declaration(name: str) -> dict[str, Any] | None:
    return DECLARATIONS.get(name)


_TYPE_NAMES = {"string": "a string", "integer": "an integer", "boolean": "true or false"}


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_value(name: str, value: Any, schema: dict[str, Any]) -> tuple[Any, str | None]:
    """(normalised value, problem). Integral floats count as integers (JSON numbers may arrive as 3.0)."""
    kind = schema["type"]
    if kind == "string":
        ok = isinstance(value, str)
        if ok and not _encodable(value):
            return value, f"'{name}' contains an unpaired UTF-16 surrogate, which is not valid text."
    elif kind == "boolean":
        ok = isinstance(value, bool)
    else:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        ok = isinstance(value, int) and not isinstance(value, bool)
        if ok and value < schema.get("minimum", value):
            return value, f"'{name}' must be at least {schema['minimum']}, got {value}."
        if ok and value > schema.get("maximum", value):
            return value, f"'{name}' must be at most {schema['maximum']}, got {value}."
    if not ok:
        return value, f"'{name}' must be {_TYPE_NAMES[kind]}, got {type(value).__name__} {str(value)[:80]!r}."
    return value, None


def check_args(name: str, args: Any) -> tuple[dict[str, Any], str | None]:
    """(arguments with JSON-number integers normalised, problem text or None) for a known tool."""
    schema = DECLARATIONS[name]["parametersJsonSchema"]
    properties: dict[str, Any] = schema["properties"]
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return {}, f"Invalid arguments for {name}: they must be an object, got {type(args).__name__}."
    problems: list[str] = []
    unknown = sorted(set(args) - set(properties))
    if unknown:
        allowed = ", ".join(properties) or "none"
        problems.append(f"Unknown argument(s) {', '.join(map(repr, unknown))}; the arguments are: {allowed}.")
    args = {k: v for k, v in args.items() if v is not None or k in schema["required"]}  # null = absent
    missing = [key for key in schema["required"] if key not in args]
    if missing:
        problems.append(f"Missing required argument(s): {', '.join(map(repr, missing))}.")
    clean: dict[str, Any] = {}
    for key, value in args.items():
        if key not in properties:
            continue
        clean[key], problem = _check_value(key, value, properties[key])
        if problem:
            problems.append(problem)
    return clean, (f"Invalid arguments for {name}: " + " ".join(problems)) if problems else None
