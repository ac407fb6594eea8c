"""The one error policy at the edge of both front-ends (editor protocol and ACP): bad params, text that is not valid
Unicode and internal errors, each answered in words that name the method and the problem."""

from __future__ import annotations

from typing import Any

import msgspec

#: Said when a string of the params holds half of a UTF-16 surrogate pair (JSON allows "\ud800"; Unicode does not).
LONE_SURROGATE = "a string holds a lone UTF-16 surrogate (not valid Unicode)"


def bad_params(method: str, problem: object) -> str:
    """The message of an InvalidParams (-32602) error: the method, then what is wrong with its params."""
    return f"Invalid params for {method}: {problem}"


def not_an_object(params: Any) -> str | None:
    """What is wrong when params are neither absent nor a JSON object (None when they are fine)."""
    if params is None or isinstance(params, dict):
        return None
    return f"params must be an object, got {type(params).__name__}"


def unicode_problem(params: Any) -> str | None:
    """LONE_SURROGATE when some string in `params` cannot be encoded as UTF-8 (text that is not valid Unicode must
    not get into the history or the recording), what else makes them unencodable, or None when they are fine."""
    try:
        msgspec.json.encode(params)
    except UnicodeEncodeError:
        return LONE_SURROGATE
    except (TypeError, OverflowError) as exc:  # e.g. an integer wider than 64 bits
        return str(exc)
    return None


def internal_error(method: str, exc: BaseException) -> str:
    """The message of an InternalError (-32603): which method failed and with what (the log has the traceback)."""
    return f"{method} failed: {type(exc).__name__}: {exc}"
