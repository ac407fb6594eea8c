"""Gitignore patterns as regexes (negation, anchoring, `**`, directory-only rules) and glob-to-regex code."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property

__all__ = ["IgnoreRules", "expand_braces", "glob_regex", "parse_gitignore"]


def _segment_regex(segment: str) -> str:
    """One path segment of a glob/gitignore pattern (no `/` inside) as a regex: `*`, `?`, `[...]`, `\\x`."""
    out: list[str] = []
    i, n = 0, len(segment)
    while i < n:
        c = segment[i]
        if c == "*":
            while i + 1 < n and segment[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(segment[i]))
        elif c == "[":
            j = i + 1
            if j < n and segment[j] in "!^":
                j += 1
            if j < n and segment[j] == "]":
                j += 1
            while j < n and segment[j] != "]":
                j += 1
            if j >= n:  # no closing bracket: a literal "["
                out.append(re.escape(c))
            else:
                body = segment[i + 1 : j]
                negate = body[:1] in ("!", "^")
                body = body[1:] if negate else body
                body = "".join("\\" + b if b in "\\[]&~|" else b for b in body)
                out.append(f"[^/{body}]" if negate else f"(?!/)[{body}]")  # a range must not match "/"
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def glob_regex(pattern: str) -> str:
    """A slash-separated glob as a regex over POSIX relative paths; `**` as a whole segment spans directories."""
    segments = pattern.split("/")
    out = ""
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            out += ".*" if last else "(?:.*/)?"
        else:
            out += _segment_regex(segment) + ("" if last else "/")
    return out


def expand_braces(pattern: str) -> list[str]:
    """`a.{py,pyi}` -> [`a.py`, `a.pyi`]; nested braces expand too; an unbalanced brace stays literal."""
    depth, start = 0, -1
    for i, c in enumerate(pattern):
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                body, options, level, last = pattern[start + 1 : i], [], 0, 0
                for k, b in enumerate(body):
                    level += {"{": 1, "}": -1}.get(b, 0)
                    if b == "," and level == 0:
                        options.append(body[last:k])
                        last = k + 1
                options.append(body[last:])
                if len(options) == 1:
                    continue
                head, tail = pattern[:start], pattern[i + 1 :]
                return [e for o in options for e in expand_braces(head + o + tail)]
    return [pattern]


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


def _strip_trailing_spaces(line: str) -> str:
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    return line


def parse_gitignore(text: str) -> list[_Rule]:
    """The rules of one .gitignore file, in file order."""
    rules: list[_Rule] = []
    for raw_line in text.splitlines():
        line = _strip_trailing_spaces(raw_line.rstrip("\r"))
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated or line.startswith(("\\!", "\\#")):  # "\\!" and "\\#" escape a literal first character
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        if not anchored and line != "**":
            line = "**/" + line
        rules.append(_Rule(re.compile(glob_regex(line), re.DOTALL), negated, dir_only))
    return rules


@dataclass(frozen=True)
class IgnoreRules:
    """The rules of one ignore file, and the directory its patterns are relative to."""

    base: str
    rules: tuple[_Rule, ...]

    @cached_property
    def _prefix(self) -> str:
        return self.base.rstrip(os.sep) + os.sep

    @cached_property
    def _any(self) -> tuple[re.Pattern[str], re.Pattern[str]]:
        """One regex per kind of path (file, directory) matching where any rule matches: most paths match
        none, and one search is much cheaper than one per rule."""

        def union(rules: list[_Rule]) -> re.Pattern[str]:
            return re.compile("|".join(f"(?:{r.regex.pattern})" for r in rules) or "(?!)", re.DOTALL)

        return union([r for r in self.rules if not r.dir_only]), union(list(self.rules))

    def verdict(self, real_path: str, is_dir: bool) -> bool | None:
        """True ignored, False re-included, None when no rule of this file matches the path."""
        if not real_path.startswith(self._prefix):
            return None
        rel = real_path[len(self._prefix) :].replace(os.sep, "/")
        if not self._any[is_dir].fullmatch(rel):
            return None
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.fullmatch(rel):
                return not rule.negated
        return None
