"""The compaction strategies compared: each a way the shipped pipeline can run, named, with what it changes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The focus a user might give "Compress conversation" (docs/compaction.md: instructions reach both passes).
FOCUS = (
    "Keep every exact value the user gave: constraints, decisions, file paths, error messages, numbers and names, "
    "and the current value of anything that was changed."
)


@dataclass(frozen=True)
class Strategy:
    """One way to run compaction. `verify`: the second (verify) pass runs; `focus`: the instructions given to the
    compaction, as a user's "Compress conversation" would; `settings`: Settings fields changed for the run (a
    future strategy such as tool-output masking is one more entry with its setting here)."""

    name: str
    description: str
    verify: bool = True
    focus: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)


STRATEGIES = (
    Strategy("default", "as shipped: two passes (summary, then verify told what the exact check found missing)"),
    Strategy(
        "no-verify",
        "pass 1 only: the verify request is refused at the client, so the pipeline keeps pass 1's snapshot "
        "(its own fallback); there is no setting for this, it measures what the second pass buys",
        verify=False,
    ),
    Strategy("focus", "as shipped, with focus instructions asking for exact values", focus=FOCUS),
)


def by_name(names: list[str] | None) -> list[Strategy]:
    """The strategies named (all when None); an unknown name is a ValueError naming the known ones."""
    if not names:
        return list(STRATEGIES)
    known = {s.name: s for s in STRATEGIES}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown strategy {', '.join(unknown)}; known: {', '.join(known)}")
    return [known[n] for n in names]
