"""The token estimate's error against the API's counts recorded in this project's sessions (when there are any)."""

from __future__ import annotations

from sidecar.doctor.report import Check, Context


def estimate_check(ctx: Context) -> list[Check]:
    """One informational row when the project's recordings hold requests with both counts; none otherwise."""
    from sidecar.recording.stats import overall_error
    from sidecar.recording.store import SessionStore

    store = SessionStore(ctx.project)
    try:
        summary = overall_error(store.path(i.session_id) for i in store.list())
    except OSError:
        return []
    if summary is None:
        return []
    detail = (
        f"median |error| {100 * summary.median:.1f}%, p95 {100 * summary.p95:.1f}%, bias {100 * summary.bias:+.1f}% "
        f"over {summary.n} requests of this project's sessions"
    )
    return [Check("tokenEstimate", True, detail, "per session: `sidecar sessions stats`")]
