"""The eval's deterministic probes, answer scoring and survival table (eval/probes.py, eval/report.py)."""

from __future__ import annotations

from eval.facts import FACT_TYPES, NOT_SHIPPED, PLANTERS, Fact, plant
from eval.probes import answer_lines, probe, request_text, score_answer
from eval.report import markdown, survival
from eval.runner import RoundResult, SessionResult

NUMBER = Fact("number-0", "number", "The upload size limit is 48213 KB.", ("48213", "upload"), "q?", ("48213",))
BUDGET = Fact(
    "superseded-0",
    "superseded",
    "Change of plan: the retry budget is now 77 attempts.",
    ("77 attempts", "retry budget"),
    "q?",
    ("77",),
    stale=("23 attempts",),
)


def test_verbatim_even_rewrapped_and_in_other_case() -> None:
    assert probe(NUMBER, "before\nthe UPLOAD size\n  limit is 48213 KB.\nafter") == "verbatim"


def test_restated_needs_every_required_token() -> None:
    assert probe(NUMBER, "- Upload cap: 48213 KB (user)") == "restated"
    assert probe(NUMBER, "- Upload cap: 48 213 KB") == "lost"
    assert probe(NUMBER, "48213 appears without what it is") == "lost"


def test_a_stale_value_after_the_current_one_wins() -> None:
    history = "Set the retry budget to 23 attempts.\n...\nChange of plan: the retry budget is now 77 attempts."
    assert probe(BUDGET, history) == "verbatim"  # both in order: the latest mention is the current value
    summary = "- retry budget: 77 attempts\n- the retry budget is 23 attempts"
    assert probe(BUDGET, summary) == "stale"
    assert probe(BUDGET, "- retry budget is 23 attempts") == "stale"
    assert probe(BUDGET, "- retry budget changed from 23 attempts to 77 attempts") == "restated"


def test_request_text_reads_the_system_instruction_calls_and_responses() -> None:
    body = {
        "systemInstruction": {"parts": [{"text": "<pinned_facts>pin-here</pinned_facts>"}]},
        "contents": [
            {"role": "user", "parts": [{"text": "hello"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"absolute_path": "/a/b.py"}}}]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "read_file", "response": {"output": "x\nFAILED t - boom"}}}],
            },
        ],
    }
    text = request_text(body)
    for needle in ("pin-here", "hello", "/a/b.py", "FAILED t - boom"):
        assert needle in text
    assert "FAILED t - boom" in text.splitlines()  # a tool output's lines stay lines (not one escaped JSON string)


def test_answers_are_scored_by_exact_match_rules() -> None:
    lines = answer_lines("1: 48213 KB\n2. The budget is 77\n**3:** unknown\n4) 77 (it was 23 before)")
    assert lines == {1: "48213 KB", 2: "The budget is 77", 3: "unknown", 4: "77 (it was 23 before)"}
    assert score_answer(NUMBER, lines[1])
    assert score_answer(BUDGET, lines[2])
    assert not score_answer(BUDGET, lines[3])
    assert not score_answer(BUDGET, lines[4])  # naming the stale value too is not an exact answer
    assert not score_answer(NUMBER, None)


def test_planting_is_seeded_and_covers_every_shipped_type() -> None:
    one, again, other = plant(3, (0, 1)), plant(3, (0, 1)), plant(4, (0, 1))
    assert one.facts == again.facts and one.facts != other.facts
    shipped = {t for t in FACT_TYPES if PLANTERS[t] is not None}
    assert {f.type for f in one.facts if f.segment == 0} == shipped
    assert set(NOT_SHIPPED) == {t for t in FACT_TYPES if PLANTERS[t] is None} == set()
    assert len(one.pins) == len(one.memory_lines) == 1  # set up once, before the session starts
    [todo] = [f for f in one.facts if f.type == "todo"]
    assert [t["status"] for t in one.todos] == ["completed", "in_progress", "pending"]  # the model's list, set once
    assert one.todos[1]["description"] == todo.text and todo.where == "todo"


def test_survival_counts_only_facts_planted_before_the_first_compaction() -> None:
    first = Fact("n-0", "number", "t", ("t",), "q", ("t",))
    later = Fact("n-1", "number", "u", ("u",), "q", ("u",), segment=1)
    facts = [first, later]
    result = SessionResult(
        1,
        "default",
        facts,
        rounds=[
            RoundResult(1, "COMPRESSED", 10, 5, 100, {"n-0": "verbatim"}),
            RoundResult(2, "COMPRESSED", 10, 5, 100, {"n-0": "lost", "n-1": "verbatim"}),
            RoundResult(3, "COMPRESSED", 10, 5, 100, {"n-0": "stale", "n-1": "verbatim"}),
        ],
    )
    table = survival([result, result])
    assert table["default"]["number"] == {
        1: {"kept": 2, "of": 2, "stale": 0},
        2: {"kept": 0, "of": 2, "stale": 0},
        3: {"kept": 0, "of": 2, "stale": 2},
    }
    text = markdown(table, [1, 2, 3], "t")
    assert "| number | 100% (2/2) | 0% (0/2), 2 stale |" in text
    assert "| todo (guaranteed) | – | – |" in text
