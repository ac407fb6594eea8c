"""Loop detection (sidecar/core/loop_detection.py): tool-call cycles and repeated streamed text."""

from __future__ import annotations

import random

from sidecar.core.loop_detection import LoopDetector, loop_nudge, loop_stop_message


def calls(detector: LoopDetector, sequence: list[tuple[str, dict[str, object]]]) -> list[int]:
    """The 1-based positions in `sequence` at which a loop was detected."""
    return [i for i, (name, args) in enumerate(sequence, 1) if detector.add_call(name, args) is not None]


def test_five_identical_calls_are_a_loop_and_the_next_five_a_second_one() -> None:
    detector = LoopDetector()
    assert calls(detector, [("read_file", {"path": "a.py"})] * 10) == [5, 10]
    assert detector.detections == 2


def test_four_identical_calls_are_not_a_loop() -> None:
    assert calls(LoopDetector(), [("read_file", {"path": "a.py"})] * 4) == []


def test_an_abab_cycle_repeated_five_times_is_a_loop() -> None:
    a, b = ("read_file", {"path": "a.py"}), ("search_text", {"pattern": "x"})
    detector = LoopDetector()
    assert calls(detector, [a, b] * 5) == [10]
    found_at = []
    for i in range(1, 11):
        found = detector.add_call(*(a if i % 2 else b))
        if found is not None:
            found_at.append(i)
            assert "cycle of 2 tool calls" in found.detail and "a.py" in found.detail
    assert found_at == [10]


def test_cycles_up_to_five_calls_long() -> None:
    cycle = [("read_file", {"path": f"{n}.py"}) for n in range(5)]
    assert calls(LoopDetector(), cycle * 5) == [25]
    six = [("read_file", {"path": f"{n}.py"}) for n in range(6)]
    assert calls(LoopDetector(), six * 5) == [], "cycles longer than five calls are not checked"


def test_different_arguments_or_argument_order_are_different_calls() -> None:
    varied = [("read_file", {"path": "a.py", "start_line": n}) for n in range(10)]
    assert calls(LoopDetector(), varied) == []
    reordered = [("replace", {"a": 1, "b": 2}) if i % 2 else ("replace", {"b": 2, "a": 1}) for i in range(5)]
    assert calls(LoopDetector(), reordered) == []


def test_reset_starts_a_new_turn() -> None:
    detector = LoopDetector()
    calls(detector, [("glob", {"pattern": "*"})] * 4)
    detector.reset()
    assert calls(detector, [("glob", {"pattern": "*"})] * 4) == []
    assert detector.detections == 0


def stream(detector: LoopDetector, text: str, size: int = 37) -> list[str]:
    found = [detector.add_text(text[i : i + size]) for i in range(0, len(text), size)]
    return [f.detail for f in found if f is not None]


def test_repeated_sentence_is_a_content_loop() -> None:
    found = stream(LoopDetector(), "I will check the configuration file again now. " * 14)
    assert len(found) == 1 and found[0].startswith('Repeating content detected: "')


def test_varied_text_is_not_a_loop() -> None:
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"]
    assert stream(LoopDetector(), " ".join(rng.choice(words) for _ in range(3000))) == []


def test_code_blocks_tables_and_lists_are_not_analysed() -> None:
    line = "x = compute(value, other_value, third_value) + 1\n"
    assert stream(LoopDetector(), "```python\n" + line * 40 + "```\n", size=60) == []
    assert stream(LoopDetector(), "| col a | col b | col c | col d | col e | col f |\n" * 40, size=50) == []
    assert stream(LoopDetector(), "- the same list item text repeated over and over\n" * 40, size=50) == []


def test_a_tool_call_resets_the_text_tracking() -> None:
    detector = LoopDetector()
    sentence = "I will check the configuration file again now. "
    for _ in range(6):
        assert stream(detector, sentence * 2) == []
        detector.add_call("read_file", {"path": "config.toml"})


def test_words_for_the_model_and_the_user() -> None:
    found = LoopDetector()
    for _ in range(5):
        result = found.add_call("read_file", {"path": "a.py"})
    assert result is not None
    assert loop_nudge(result).startswith("System: Potential loop detected. Details: Repeated tool call: read_file")
    assert "read_file" in loop_stop_message(result) and "stopped" in loop_stop_message(result)
