"""The <state_snapshot>: validating a summarizer reply, and the deterministic check of facts it dropped."""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from sidecar.core.content_json import encode_content
from sidecar.core.history import Content
from sidecar.core.prompts import SNAPSHOT_SECTIONS

_SCRATCHPAD = re.compile(r"<scratchpad>.*?(?:</scratchpad>|$)", re.DOTALL | re.IGNORECASE)
_SNAPSHOT = re.compile(r"<state_snapshot>(.*?)</state_snapshot>", re.DOTALL)
_EXTENSIONS = "py|ts|tsx|js|jsx|lua|rs|go|java|c|h|cpp|hpp|md|json|toml|yaml|yml|txt|sh|vim|css|html"
_PATH = re.compile(
    r"(?<![\w/.@:-])(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*\.[A-Za-z0-9]{1,8}\b"  # with directories
    rf"|(?<![\w/.-])[\w-]+\.(?:{_EXTENSIONS})\b"  # a bare file name with a known extension
)
_CONSTRAINT = re.compile(
    r"\b(must|never|always|don't|do not|dont|only use|make sure|ensure|required?|forbidden|avoid)\b", re.IGNORECASE
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_IDE_PREFIXES = ("Here is the user's editor context", "Here is a summary of changes in the user's editor context")
MAX_MISSING_PATHS = 40
MAX_MISSING_CONSTRAINTS = 20
MAX_MISSING_ERRORS = 20
MAX_MISSING_DECISIONS = 20
#: The first line of an error: an exception, a failing test, a compiler or tool error (kept by the retention check).
_ERROR_LINE = re.compile(
    r"^\s*(?:"
    r"(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)(?::\s.*)?"  # ValueError: …, pkg.MyError
    r"|(?:FAILED|FAIL|ERROR)(?::|\s)\s*\S.*"  # pytest / unittest / make summaries
    r"|--- FAIL: \S.*|panic: \S.*"  # go
    r"|error(?:\[E\d+\])?: \S.*"  # rustc, tools
    r"|\S+?(?::\d+){1,2}: (?:fatal )?error: \S.*"  # gcc, clang, go vet: file:line[:col]: error: …
    r"|\S+\(\d+,\d+\): error \w+: \S.*"  # tsc
    r")$"
)
_ERROR_WORDS = ("rror", "FAIL", "panic", "Exception", "Exit", "Interrupt")  # a cheap test before the regex
_DECISION = re.compile(
    r"\b(let's|let us|we'll|we will|we're going with|i've decided|i decided|decided|go with|going with|"
    r"instead of|switch to|stick with|the plan is|agreed|prefer)\b",
    re.IGNORECASE,
)


def extract_snapshot(reply: str) -> str | None:
    """The one well-formed <state_snapshot> block of a summarizer reply, scratchpad removed; None if invalid.

    Valid means: exactly one <state_snapshot>…</state_snapshot>, holding each of the seven sections once,
    opened and closed. Anything else (no snapshot, two snapshots, a missing section) is not a summary.
    """
    text = _SCRATCHPAD.sub("", reply or "")
    blocks = _SNAPSHOT.findall(text)
    if len(blocks) != 1 or text.count("<state_snapshot>") != 1:
        return None
    body = blocks[0]
    for name in SNAPSHOT_SECTIONS:
        if body.count(f"<{name}>") != 1 or body.count(f"</{name}>") != 1:
            return None
        if body.index(f"<{name}>") > body.index(f"</{name}>"):
            return None
    return f"<state_snapshot>{body}</state_snapshot>"


def has_snapshot(contents: Iterable[Content]) -> bool:
    return any(p.text is not None and "<state_snapshot>" in p.text for c in contents for p in c.parts)


def _texts(content: Content) -> Iterable[str]:
    for part in content.parts:
        if part.text is not None and not part.thought:
            yield part.text
        if part.function_call is not None and part.function_call.args:
            yield from (v for v in part.function_call.args.values() if isinstance(v, str))


def mentioned_paths(contents: Sequence[Content]) -> list[str]:
    """File paths mentioned in the history (text, and string arguments of tool calls), first mention first."""
    seen: dict[str, None] = {}
    for content in contents:
        for text in _texts(content):
            if "<state_snapshot>" in text:
                continue
            for match in _PATH.finditer(text):
                path = match.group(0).rstrip(".")
                if len(path) > 2:
                    seen.setdefault(path, None)
    return list(seen)


def user_constraints(contents: Sequence[Content]) -> list[str]:
    """Sentences of the user's own messages that state a rule ("must", "never", "always", "don't", …)."""
    found: dict[str, None] = {}
    for content in contents:
        if content.role != "user":
            continue
        for part in content.parts:
            text = part.text
            if text is None or part.thought or "<state_snapshot>" in text or text.startswith(_IDE_PREFIXES):
                continue
            for sentence in _SENTENCE_END.split(text):
                sentence = sentence.strip()
                if 8 <= len(sentence) <= 400 and _CONSTRAINT.search(sentence):
                    found.setdefault(sentence, None)
    return list(found)


def _response_texts(content: Content) -> Iterable[str]:
    for part in content.parts:
        fr = part.function_response
        if fr is not None and isinstance(fr.response, dict):
            yield from (v for v in fr.response.values() if isinstance(v, str))


def error_lines(contents: Sequence[Content]) -> list[str]:
    """First lines of the errors met in the history (tool outputs, and what the user and the model wrote):
    exceptions, failing tests, compiler errors — once each, first met first."""
    found: dict[str, None] = {}
    for content in contents:
        for text in (*_texts(content), *_response_texts(content)):
            if "<state_snapshot>" in text or not any(word in text for word in _ERROR_WORDS):
                continue
            for line in text.splitlines():
                line = line.strip()
                if 6 <= len(line) <= 300 and _ERROR_LINE.match(line):
                    found.setdefault(line, None)
    return list(found)


def user_decisions(contents: Sequence[Content]) -> list[str]:
    """Sentences of the user's own messages that state a decision ("let's …", "we'll go with …", "use X instead
    of Y"), other than the rules user_constraints already finds."""
    found: dict[str, None] = {}
    for content in contents:
        if content.role != "user":
            continue
        for part in content.parts:
            text = part.text
            if text is None or part.thought or "<state_snapshot>" in text or text.startswith(_IDE_PREFIXES):
                continue
            for sentence in _SENTENCE_END.split(text):
                sentence = sentence.strip()
                if 8 <= len(sentence) <= 400 and _DECISION.search(sentence) and not _CONSTRAINT.search(sentence):
                    found.setdefault(sentence, None)
    return list(found)


def _normal(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".!")


class ContentFacts(NamedTuple):
    """What the retention check finds in one content (each list in first-met order, without repeats)."""

    paths: tuple[str, ...]
    constraints: tuple[str, ...]
    errors: tuple[str, ...]
    decisions: tuple[str, ...]


def content_facts(content: Content) -> ContentFacts:
    """The facts of one content; the facts of a history are those of its contents, merged in order."""
    one = [content]
    return ContentFacts(
        tuple(mentioned_paths(one)), tuple(user_constraints(one)), tuple(error_lines(one)), tuple(user_decisions(one))
    )


class FactCache:
    """The facts of each content, by its wire JSON, computed once (when it enters the conversation, like its token
    estimate) so that a compaction does not rescan the history. Holds at most `max_bytes` of keys, oldest out
    first; a key is the conversation's own bytes object, so what the conversation holds costs nothing more."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[bytes, ContentFacts] = OrderedDict()
        self._bytes = 0
        self.hits = self.misses = 0

    def facts(self, content: Content, wire: bytes | None = None) -> ContentFacts:
        """The facts of `content`, whose wire JSON is `wire` (encoded here when not given)."""
        key = encode_content(content) if wire is None else wire
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
            self.hits += 1
            return found
        self.misses += 1
        found = content_facts(content)
        self._entries[key] = found
        self._bytes += len(key)
        while self._bytes > self.max_bytes and len(self._entries) > 1:
            old, _ = self._entries.popitem(last=False)
            self._bytes -= len(old)
        return found

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = self.hits = self.misses = 0


#: The process's cache: a 1M-token history is ~5 MB of JSON, so this holds several generations of one session.
FACT_CACHE = FactCache(32 * 1024 * 1024)


def _merged(lists: Iterable[tuple[str, ...]]) -> list[str]:
    seen: dict[str, None] = {}
    for items in lists:
        for item in items:
            seen.setdefault(item, None)
    return list(seen)


def missing_facts(compressed: Sequence[Content], snapshot: str) -> list[str]:
    """File paths, user constraints, errors (their first line) and user decisions present in the compressed part
    but absent from the snapshot. Each content's facts come from FACT_CACHE."""
    normal_snapshot = _normal(snapshot)
    found = [FACT_CACHE.facts(content) for content in compressed]
    paths = [p for p in _merged(f.paths for f in found) if p not in snapshot][:MAX_MISSING_PATHS]
    constraints = [c for c in _merged(f.constraints for f in found) if _normal(c) not in normal_snapshot]
    errors = [e for e in _merged(f.errors for f in found) if _normal(e) not in normal_snapshot]
    decisions = [d for d in _merged(f.decisions for f in found) if _normal(d) not in normal_snapshot]
    return (
        [f"file path: {p}" for p in paths]
        + [f"user constraint: {c}" for c in constraints[:MAX_MISSING_CONSTRAINTS]]
        + [f"error: {e}" for e in errors[-MAX_MISSING_ERRORS:]]  # the newest: what the agent was fixing
        + [f"user decision: {d}" for d in decisions[:MAX_MISSING_DECISIONS]]
    )
