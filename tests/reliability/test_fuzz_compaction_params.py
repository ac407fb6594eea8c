"""Random wrong params for the compaction-steering methods: each is InvalidParams in words, the server stays up and
the history is unchanged (the fuzzing rig of test_fuzz_params.py)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sidecar.protocol import errors
from tests.reliability.proc import RpcError
from tests.reliability.test_fuzz_params import (
    Fuzzed,
    assert_invalid_params,
    call,
    fuzz,
    not_a_string,
    not_an_object,
    target,
    with_field,
    without,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["target"]  # the module-scoped sidecar fixture, shared


@fuzz
@given(params=not_an_object | with_field("upToMessageId", not_a_string.filter(lambda v: v is not None)))
async def test_preview_and_compress_up_to_wrong_types(target: Fuzzed, params: Any) -> None:
    for method in ("sidecar/previewCompaction", "sidecar/compress"):
        assert_invalid_params(method, await call(target.side, method, params))


@fuzz
@given(params=not_an_object | without("previewId") | with_field("previewId", not_a_string))
async def test_apply_wrong_types(target: Fuzzed, params: Any) -> None:
    assert_invalid_params("sidecar/applyCompaction", await call(target.side, "sidecar/applyCompaction", params))


@fuzz
@given(
    params=not_an_object
    | without("rating")
    | with_field("rating", st.text(max_size=12).filter(lambda v: v not in ("good", "lost")) | not_a_string)
)
async def test_rate_wrong_ratings(target: Fuzzed, params: Any) -> None:
    assert_invalid_params("sidecar/rateCompaction", await call(target.side, "sidecar/rateCompaction", params))


@fuzz
@given(message_id=st.text(max_size=20))
async def test_unknown_up_to_ids_and_preview_ids_are_refused_in_words(target: Fuzzed, message_id: str) -> None:
    answer = await call(target.side, "sidecar/compress", {"upToMessageId": message_id})
    assert isinstance(answer, RpcError), f"compress up to {message_id!r} was accepted: {str(answer)[:200]}"
    assert answer.code in (errors.INVALID_PARAMS, errors.SESSION_ERROR), answer.message[:300]
    assert answer.message.startswith("Cannot summarise up to message"), answer.message[:300]
    applied = await call(target.side, "sidecar/applyCompaction", {"previewId": message_id})
    assert isinstance(applied, RpcError) and applied.code == errors.INVALID_PARAMS, str(applied)[:300]
    assert applied.message.startswith("No compaction preview"), applied.message[:300]
