"""The contract is typed end to end: each Method[P, R] constant declares the types it carries, and a result that does
not convert to its declared type is caught before it is sent (the e2e runs set SIDECAR_CHECK_RESULTS=1)."""

from __future__ import annotations

import typing
from types import UnionType
from typing import Any

import msgspec
import pytest

from sidecar.protocol import methods
from sidecar.protocol.sessions import PinResult, SessionSummary
from sidecar.rpc.dispatch import check_result


def _declared() -> dict[str, tuple[Any, Any]]:
    hints = typing.get_type_hints(methods)
    return {name: typing.get_args(hint) for name, hint in hints.items() if typing.get_origin(hint) is methods.Method}


def test_every_method_constant_is_annotated_with_the_types_it_carries() -> None:
    declared = _declared()
    constants = {name: value for name, value in vars(methods).items() if isinstance(value, methods.Method)}
    assert set(declared) == set(constants)
    for name, method in constants.items():
        params, result = declared[name]
        assert params is method.params, name
        expected = type(None) if method.result is None else method.result
        if isinstance(expected, UnionType):
            assert set(typing.get_args(result)) == set(typing.get_args(expected)), name
        else:
            assert result == expected, name  # ==: list[X] is a fresh alias object each time


def test_a_result_of_the_declared_shape_passes() -> None:
    check_result(methods.PIN, msgspec.to_builtins(PinResult(pin_id="p1")))
    summary = SessionSummary(
        session_id="s", title=None, start_time="t", last_updated="t", message_count=1, compaction_count=0
    )
    check_result(methods.LIST_SESSIONS, [msgspec.to_builtins(summary)])
    check_result(methods.LIST_SESSIONS, {"sessions": [], "nextCursor": None})


@pytest.mark.parametrize(
    ("method", "wire"),
    [
        (methods.PIN, {"pin_id": "p1"}),  # snake_case: not what the editors read
        (methods.FORK_SESSION, {"sessionId": "s", "messageCount": 2}),  # parentSessionId missing
        (methods.LIST_PINS, {"pins": [{"pinId": "p1"}]}),
    ],
)
def test_a_result_of_another_shape_is_refused(method: methods.Method[Any, Any], wire: Any) -> None:
    with pytest.raises(TypeError, match=f"the result of {method.name}"):
        check_result(method, wire)


def test_one_spelling_per_concept_the_status_enum_is_the_wire_type() -> None:
    from sidecar.core.outcome import Status, Trigger
    from sidecar.protocol.types import CompactionTrigger, CompressionStatus

    assert [s.value for s in Status] == list(typing.get_args(CompressionStatus))
    assert Trigger is CompactionTrigger


@pytest.mark.parametrize(
    ("params", "problem"),
    [([1, 2], "params must be an object, got list"), ({"text": "\ud800"}, "lone UTF-16 surrogate")],
)
async def test_both_front_ends_answer_bad_params_in_the_same_words(params: Any, problem: str) -> None:
    from acp import RequestError

    from sidecar.acp.rpc import in_words
    from sidecar.protocol import errors
    from sidecar.protocol.types import SendMessageParams
    from sidecar.rpc.dispatch import decode

    async def router(method: str, params: Any, is_notification: bool) -> Any:
        raise AssertionError("bad params never reach the router")

    with pytest.raises(errors.SidecarError) as editor:
        decode("x/method", params, SendMessageParams)
    with pytest.raises(RequestError) as acp_side:
        await in_words(router)("x/method", params, False)
    assert problem in editor.value.message
    assert acp_side.value.args[0] == editor.value.message
    assert acp_side.value.code == editor.value.code == errors.INVALID_PARAMS
