"""Fuzzing the session-editing methods (fork, rewind, rename, delete, pins, paged list): bad params of any kind get
InvalidParams or a session error in words; the server stays up and the live session keeps working."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidecar.protocol import errors
from tests.reliability.conftest import make_dirs
from tests.reliability.proc import RpcError, Sidecar

pytestmark = pytest.mark.asyncio(loop_scope="module")

fuzz = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

FIELDS = {
    "sidecar/forkSession": ["sessionId", "beforeMessageId"],
    "sidecar/rewind": ["messageId"],
    "sidecar/renameSession": ["sessionId", "title"],
    "sidecar/deleteSession": ["sessionId"],
    "sidecar/pin": ["text"],
    "sidecar/unpin": ["pinId"],
    "sidecar/listSessions": ["query", "limit", "cursor"],
}
odd = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=60)
    | st.sampled_from(["../../etc/passwd", "m1", "m999", "", " ", "x" * 5000])
    | st.lists(st.integers(), max_size=3)
    | st.dictionaries(st.text(max_size=5), st.integers(), max_size=2)
)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def side(_fake_server: Any) -> AsyncIterator[Sidecar]:
    home, workspace = make_dirs()
    running = Sidecar(home, workspace, _fake_server.url, log_level="INFO")
    try:
        await running.start()
        await running.say("warm up")
        yield running
    finally:
        await running.stop()
        shutil.rmtree(home.parent, ignore_errors=True)


@pytest.mark.parametrize("method", sorted(FIELDS))
@fuzz
@given(data=st.data())
async def test_bad_params_get_a_clear_error_never_an_internal_one(side: Sidecar, method: str, data: Any) -> None:
    params = {name: data.draw(odd) for name in FIELDS[method] if data.draw(st.booleans())}
    try:
        await side.client.request(method, params)
    except RpcError as exc:
        assert exc.code in (errors.INVALID_PARAMS, errors.SESSION_ERROR), f"{method} {params!r}: {exc}"
        assert exc.message and "Traceback" not in exc.message


async def test_the_server_still_chats_after_the_fuzzing(side: Sidecar) -> None:
    assert (await side.say("still here?"))["text"]
