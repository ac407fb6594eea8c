"""sidecar/tokenUsage is pushed once per change of state, each push with a higher seq: a turn that pushed the same
state twice at its start left whoever waited for "the next push" with a stale one."""

from __future__ import annotations

from tests.reliability.conftest import Spawn


async def test_start_up_pushes_one_usage_and_an_unchanged_reload_pushes_none(spawn: Spawn) -> None:
    side = await spawn()
    await side.watching()  # start-up re-reads the workspace settings file once the watcher runs
    current = await side.ping()  # answered after everything sent before it: any push is in by now
    assert [u["seq"] for u in side.notes("sidecar/tokenUsage")] == [current["seq"]] == [1]
    side.notify("workspace/didChangeConfiguration", {"settings": {"sidecar": {}}})  # changes nothing
    assert (await side.ping())["seq"] == 1
    assert len(side.notes("sidecar/tokenUsage")) == 1, "a repeat of the same state is not pushed"


async def test_a_turn_pushes_its_new_state_once_and_seq_grows_with_each_change(spawn: Spawn) -> None:
    side = await spawn()
    await side.watching()  # start-up's last step may push the state of the moment; it is over now
    await side.ping()  # ... and its push, if any, is in
    for i in range(3):
        before = (await side.ping())["seq"]
        mark = len(side.notes("sidecar/tokenUsage"))
        reply = await side.say(f"turn {i}")
        pushed = side.notes("sidecar/tokenUsage")[mark:]  # the end-of-turn push precedes the answer on the wire
        assert pushed == [reply["usage"]], "one push per turn: the state after the reply, as the answer has it"
        assert reply["usage"]["seq"] == before + 1 and reply["usage"]["source"] == "api"
    side.notify("workspace/didChangeConfiguration", {"settings": {"sidecar": {"compressionThreshold": 0.6}}})
    changed = await side.wait_note("sidecar/tokenUsage", lambda u: u["compressionThreshold"] == 0.6)
    assert changed["seq"] == reply["usage"]["seq"] + 1
