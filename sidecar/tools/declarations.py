"""The parts of a tool's Gemini FunctionDeclaration (JSON Schema in `parametersJsonSchema`) and the argument check."""

from __future__ import annotations

from typing import Any

from sidecar.core.words import plural

__all__ = [
    "DEFAULT_SHELL_TIMEOUT",
    "DIRECTORY",
    "IGNORED",
    "MAX_SHELL_TIMEOUT",
    "PATH_NOTE",
    "SHELL_TOOL",
    "check_args",
    "declare",
    "flag",
    "integer",
    "string",
]

SHELL_TOOL = "run_shell_command"
DEFAULT_SHELL_TIMEOUT = 120
MAX_SHELL_TIMEOUT = 600

PATH_NOTE = (
    "Relative paths start at the first workspace folder (tool results show paths that way too); paths outside "
    "the workspace folders are refused."
)


def string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def flag(description: str) -> dict[str, Any]:
    return {"type": "boolean", "description": description}


def integer(description: str, minimum: int, maximum: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "description": description, "minimum": minimum}
    if maximum is not None:
        schema["maximum"] = maximum
    return schema


def declare(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
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


IGNORED = flag("Also include files that .gitignore excludes and .git, node_modules and virtualenv folders.")
DIRECTORY = string(f"Directory to search in (default: every workspace folder). {PATH_NOTE}")


_TYPE_NAMES = {"string": "a string", "integer": "an integer", "boolean": "true or false", "array": "an array"}


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
    elif kind == "array":  # the items are the tool's to check
        ok = isinstance(value, list)
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


def check_args(declaration: dict[str, Any], args: Any) -> tuple[dict[str, Any], str | None]:
    """(arguments with JSON-number integers normalised, problem text or None) for a call of the tool declared."""
    name = declaration["name"]
    schema = declaration["parametersJsonSchema"]
    properties: dict[str, Any] = schema["properties"]
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return {}, f"Invalid arguments for {name}: they must be an object, got {type(args).__name__}."
    problems: list[str] = []
    unknown = sorted(set(args) - set(properties))
    if unknown:
        allowed = ", ".join(properties) or "none"
        problems.append(
            f"Unknown {plural(len(unknown), 'argument')} {', '.join(map(repr, unknown))}; the arguments are: {allowed}."
        )
    args = {k: v for k, v in args.items() if v is not None or k in schema["required"]}  # null = absent
    missing = [key for key in schema["required"] if key not in args]
    if missing:
        problems.append(f"Missing required {plural(len(missing), 'argument')}: {', '.join(map(repr, missing))}.")
    clean: dict[str, Any] = {}
    for key, value in args.items():
        if key not in properties:
            continue
        clean[key], problem = _check_value(key, value, properties[key])
        if problem:
            problems.append(problem)
    return clean, (f"Invalid arguments for {name}: " + " ".join(problems)) if problems else None
