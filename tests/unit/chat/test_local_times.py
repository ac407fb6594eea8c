"""Times the server writes into messages read as the editors show times: local, to the minute, no "UTC"."""

from __future__ import annotations

import time

import pytest

from sidecar.chat.actions import local_minute


def test_a_recorded_utc_time_is_shown_in_local_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Kolkata")  # UTC+05:30, no daylight saving
    time.tzset()
    try:
        assert local_minute("2026-11-25T03:36:22.123Z") == "2026-11-25 09:06"
        assert local_minute("not a time") == "not a time"
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
