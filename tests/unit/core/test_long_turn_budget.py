"""Mid-turn split points (sidecar/core/turn_split.py) and tool responses cut to fit (sidecar/core/request_size.py)."""

from __future__ import annotations

from pathlib import Path

from sidecar.core.compaction import find_split_point
from sidecar.core.history import Content, FunctionCall, FunctionResponse, Part, text_content
from sidecar.core.request_size import READ_THE_REST, fit_responses, parts_upper_tokens
from sidecar.core.turn_split import ends_with_pending_call, find_split_point_in_turn, is_round_start


def call(n: int) -> Content:
    return Content(role="model", parts=[Part(function_call=FunctionCall(name="read_file", args={"path": f"{n}.py"}))])


def response(n: int, size: int = 5_000) -> Content:
    fr = FunctionResponse(name="read_file", response={"output": f"file {n} " + "x" * size})
    return Content(role="user", parts=[Part(function_response=fr)])


def long_turn(rounds: int, pending: bool = True) -> list[Content]:
    history = [text_content("user", "read all the files")]
    for n in range(rounds):
        history += [call(n), response(n)]
    return [*history, call(rounds)] if pending else [*history, text_content("model", "done")]


def test_inside_a_turn_the_split_falls_on_an_earlier_round() -> None:
    history = long_turn(8)
    assert find_split_point(history, 0.7) == 0, "the reference can only keep the whole turn"
    split = find_split_point_in_turn(history, 0.7)
    assert 0 < split < len(history) - 1
    assert is_round_start(history, split), "a call turn right after the previous round's responses"
    sizes = sum(len(str(c)) for c in history[:split]) / sum(len(str(c)) for c in history)
    assert sizes >= 0.6


def test_the_round_in_flight_always_stays() -> None:
    history = long_turn(1)
    split = find_split_point_in_turn(history, 0.99)
    assert split <= len(history) - 1 and history[-1] in history[split:]
    assert ends_with_pending_call(history)


def test_outside_a_turn_it_is_the_reference_split() -> None:
    history = long_turn(8, pending=False)
    assert not ends_with_pending_call(history)
    assert find_split_point_in_turn(history, 0.7) == find_split_point(history, 0.7)


def test_no_split_ever_separates_a_call_from_its_responses() -> None:
    for rounds in range(1, 10):
        history = long_turn(rounds)
        for fraction in (0.1, 0.3, 0.5, 0.7, 0.9):
            split = find_split_point_in_turn(history, fraction)
            first_kept = history[split] if split < len(history) else None
            assert first_kept is None or not any(p.function_response for p in first_kept.parts)


def responses(*sizes: int) -> list[Part]:
    return [
        Part(function_response=FunctionResponse(name="run_shell_command", id=f"c{i}", response={"output": text}))
        for i, text in enumerate(("HEAD " + "y" * size + " TAIL") for size in sizes)
    ]


class Saver:
    def __init__(self, directory: Path) -> None:
        self.directory, self.saved = directory, []

    def __call__(self, text: str, tool: str) -> Path:
        path = self.directory / f"{tool}_{len(self.saved) + 1}.txt"
        path.write_text(text)
        self.saved.append(path)
        return path


def test_responses_that_fit_are_untouched(tmp_path: Path) -> None:
    parts = responses(1_000)
    saver = Saver(tmp_path)
    assert fit_responses(parts, 10_000, saver) == (parts, True)
    assert saver.saved == []


def test_responses_are_cut_to_the_budget_with_head_tail_and_the_full_text_saved(tmp_path: Path) -> None:
    parts = responses(100_000, 60_000)
    saver = Saver(tmp_path)
    fitted, fits = fit_responses(parts, 8_000, saver)
    assert fits and parts_upper_tokens("user", fitted) <= 8_000
    assert parts_upper_tokens("user", fitted) > 7_000, "the budget is used, not wasted"
    for part, saved in zip(fitted, saver.saved, strict=True):
        output = part.function_response.response["output"]  # type: ignore[union-attr]
        assert output.startswith("Output too large. Showing first ") and f"For full output see: {saved}" in output
        assert output.endswith(READ_THE_REST) and "HEAD" in output and "TAIL" in output
        assert part.function_response.id in ("c0", "c1")  # type: ignore[union-attr]
    assert [len(p.read_text()) for p in saver.saved] == [100_010, 60_010]


def test_a_budget_too_small_for_any_form_says_so(tmp_path: Path) -> None:
    fitted, fits = fit_responses(responses(50_000), 20, Saver(tmp_path))
    assert not fits and "For full output see:" in fitted[0].function_response.response["output"]  # type: ignore[union-attr]
