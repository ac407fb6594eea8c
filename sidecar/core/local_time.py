"""Times as the editors show them: the user's local time, to the minute, no "UTC" (the server runs on their machine)."""

from __future__ import annotations

from datetime import UTC, datetime

LOCAL_MINUTE = "%Y-%m-%d %H:%M"


def local_minute(iso: str) -> str:
    """A recorded UTC time as the editors show times: local, "YYYY-MM-DD HH:MM" (the server runs on the user's
    machine); other text as it is, cut to the minute."""
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso[:16].replace("T", " ")
    if moment.tzinfo is None:
        return moment.strftime(LOCAL_MINUTE)
    return moment.astimezone().strftime(LOCAL_MINUTE)


def local_minute_of(moment: datetime) -> str:
    """A moment as local "YYYY-MM-DD HH:MM"; a naive one is taken as UTC (google-auth's token expiry is)."""
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone().strftime(LOCAL_MINUTE)
