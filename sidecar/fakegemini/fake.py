"""FakeGemini: the in-process API (script, request log, settings) and what to answer each request."""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any

import msgspec

from sidecar.core.history import Content
from sidecar.core.prompts import is_summary_turn_text

from . import faults, models_list, replies, shapes, validate, vertex
from .faults import Step
from .records import RequestRecord, _error
from .server import Plan, make_server
from .snapshot import build_summary

__all__ = ["FakeGemini", "Plan", "RequestRecord"]

API_PATH = vertex.GEMINI_PATH
KINDS: dict[str, faults.RequestKind] = {
    "generateContent": "generate",
    "streamGenerateContent": "stream",
    "countTokens": "count",
    "list": "list",
}
SNAPSHOT_TAG = "<state_snapshot>"


class FakeGemini:
    """A Gemini-compatible HTTP server on 127.0.0.1 for tests and the demo. Thread-safe.

    fake = FakeGemini().start(); fake.url; fake.script([...]); fake.requests(); fake.stop()
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token_multiplier: float = 1,
        token_limit: int | None = None,
        api_keys: Iterable[str] | None = None,
        strict: bool = True,
        steps: Iterable[Step | Mapping[str, Any]] | None = None,
    ) -> None:
        self.host, self._port = host, port
        self._defaults = (token_multiplier, token_limit)
        self.token_multiplier, self.token_limit = token_multiplier, token_limit
        self.api_keys = frozenset(api_keys) if api_keys is not None else None
        self.strict = strict
        self._lock = threading.Condition()
        self._script = faults.Script()
        self._log: list[RequestRecord] = []
        self._replies = 0
        self._releases = 0  # release() calls not yet used by a held request
        self._hold_generation = 0  # bumped by reset() and stop(): every held request goes on
        self.tokens = vertex.TokenIssuer()
        self.stopping = threading.Event()
        self._server: Any = None
        self._thread: threading.Thread | None = None
        if steps is not None:
            self.script(steps)

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeGemini:
        """Bind (port 0 = a free port) and serve on a daemon thread. Returns self."""
        if self._server is not None:
            raise RuntimeError("FakeGemini already started")
        self.stopping.clear()
        self._server = make_server(self, self.host, self._port)
        self._port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-gemini", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections and end pending delays. Idempotent."""
        server, self._server = self._server, None
        if server is None:
            return
        self.stopping.set()
        with self._lock:
            self._hold_generation += 1
            self._lock.notify_all()
        server.shutdown()
        server.drop_connections()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def __enter__(self) -> FakeGemini:
        return self if self._server is not None else self.start()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return int(self._port)

    @property
    def url(self) -> str:
        """Base URL for HttpOptions(base_url=...), e.g. http://127.0.0.1:41234."""
        if self._server is None:
            raise RuntimeError("FakeGemini is not running: call start() first")
        return f"http://{self.host}:{self.port}"

    # ---- scripting, log and settings --------------------------------------------------------
    def script(self, steps: Iterable[Step | Mapping[str, Any]] | Step | Mapping[str, Any]) -> None:
        """Append steps (Step values or dicts like {"kind": "status", "status": 429}) to the queue.

        Raises msgspec.ValidationError for a malformed step (nothing is queued then).
        """
        parsed = faults.parse_steps(steps)
        with self._lock:
            self._script.extend(parsed)

    def reset_script(self) -> None:
        """Drop every pending step."""
        with self._lock:
            self._script.clear()

    def pending(self) -> list[dict[str, Any]]:
        """Steps not used up yet, as dicts with a "remaining" count."""
        with self._lock:
            return self._script.pending()

    def requests(self) -> list[RequestRecord]:
        """A deep copy of the request log, oldest first."""
        with self._lock:
            return copy.deepcopy(self._log)

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RequestRecord]:
        """Block until at least `count` requests were logged; raises TimeoutError otherwise."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self._log) >= count, timeout):
                raise TimeoutError(f"fake Gemini saw {len(self._log)} requests, expected {count}")
            return copy.deepcopy(self._log)

    def reset(self) -> None:
        """Forget the script, the log and the reply counter; restore constructor settings."""
        with self._lock:
            self._script.clear()
            self._log.clear()
            self._replies = 0
            self._releases = 0
            self._hold_generation += 1
            self._lock.notify_all()
            self.token_multiplier, self.token_limit = self._defaults
            self.tokens.reset()

    def release(self, count: int = 1) -> None:
        """Let `count` requests held by a "hold" step (now or later) go on."""
        with self._lock:
            self._releases += count
            self._lock.notify_all()

    def await_release(self) -> None:
        """Block a held request until release(), reset() or stop() (called on the request's thread)."""
        with self._lock:
            generation = self._hold_generation
            self._lock.wait_for(lambda: self._releases > 0 or self._hold_generation != generation)
            if self._releases > 0 and self._hold_generation == generation:
                self._releases -= 1

    def set_token_multiplier(self, multiplier: float) -> None:
        """Multiply promptTokenCount and countTokens results (make small chats look large)."""
        if multiplier <= 0:
            raise ValueError("token multiplier must be positive")
        with self._lock:
            self.token_multiplier = multiplier

    def set_token_limit(self, limit: int | None) -> None:
        """Reject generate requests whose prompt exceeds `limit` tokens with a 400, like the real API."""
        with self._lock:
            self.token_limit = limit

    def set_token_lifetime(self, seconds: int) -> None:
        """`expires_in` of the access tokens the token endpoint issues from now on (tokens are checked by it)."""
        if seconds < 0:
            raise ValueError("token lifetime must not be negative")
        with self._lock:
            self.tokens.lifetime = seconds

    @property
    def token_lifetime(self) -> int:
        return self.tokens.lifetime

    def issue_token(self) -> str:
        """An access token as the token endpoint would issue it (for a credentials file that carries one)."""
        with self._lock:
            return self.tokens.new_token()

    def revoke_tokens(self) -> None:
        """Forget every access token issued so far: Vertex AI requests carrying one get a 401."""
        with self._lock:
            self.tokens.revoke()

    def log_json(self) -> bytes:
        with self._lock:
            return msgspec.json.encode(self._log)

    # ---- answering --------------------------------------------------------------------------
    def plan(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        api_key: str | None,
        raw: bytes,
        authorization: str | None = None,
    ) -> Plan:
        """Decide the answer to one API request and log it (called by the HTTP handler)."""
        where = vertex.route(path)
        if where.api == "token":
            return self._token(method, path, raw)
        bearer = vertex.bearer_of(authorization)
        body: Any = None
        try:
            body = msgspec.json.decode(raw) if raw else {}
        except msgspec.DecodeError:
            body = raw.decode("utf-8", "replace")
        kind = KINDS[where.op] if where.op else "unknown"
        summary = False
        if isinstance(body, dict) and kind in ("generate", "stream"):
            si = body.get("systemInstruction", body.get("system_instruction"))
            summary = SNAPSHOT_TAG in replies.instruction_text(si) or _asks_for_summary(body.get("contents"))
        with self._lock:
            rec = RequestRecord(
                index=len(self._log),
                time=time.time(),
                method=method,
                path=path,
                query={k: v for k, v in query.items() if k != "key"},
                model=where.model,
                kind=kind,
                summary=summary,
                has_key=bool(api_key),
                body=body,
                api=where.api,
                project=where.project,
                location=where.location,
                auth="bearer" if bearer else ("key" if api_key else ""),
            )
            plan = self._decide(rec, api_key, bearer, len(raw))
            rec.status = plan.status
            rec.outcome = "cut" if plan.action == "close" or plan.cut_after is not None else "reply"
            if plan.status >= 400:
                rec.outcome = "error"
            elif any("error" in e for e in plan.events):
                rec.outcome = "midstream_error"
            self._log.append(rec)
            self._lock.notify_all()
        return plan

    def _token(self, method: str, path: str, raw: bytes) -> Plan:
        """The OAuth token endpoint (token_uri of a test credentials file)."""
        with self._lock:
            rec = RequestRecord(
                index=len(self._log),
                time=time.time(),
                method=method,
                path=path,
                query={},
                model=None,
                kind="token",
                summary=False,
                has_key=False,
                body=None,
                api="token",
            )
            step = self._script.take("token", False) if method == "POST" else None
            if method != "POST":
                status, answer = 405, vertex.oauth_error("invalid_request", "Use POST.")
            elif isinstance(step, faults.Status):
                rec.step = faults.step_to_dict(step)
                status, answer = step.status, vertex.oauth_error("invalid_grant", step.message or "Bad Request")
                rec.body = {"grant_type": vertex.grant_type_of(raw)}
            else:
                status, answer, rec.body = self.tokens.grant(raw)
            rec.status, rec.outcome = status, "reply" if status == 200 else "error"
            self._log.append(rec)
            self._lock.notify_all()
        return Plan("json", status=status, body=answer)

    def metadata_token(self, path: str) -> dict[str, Any]:
        """The metadata server's access token (sidecar/fakegemini/metadata.py), logged like a /token request."""
        with self._lock:
            rec = RequestRecord(
                index=len(self._log),
                time=time.time(),
                method="GET",
                path=path,
                query={},
                model=None,
                kind="token",
                summary=False,
                has_key=False,
                body={"grant_type": "metadata-server"},
                api="token",
                status=200,
                outcome="reply",
            )
            self._log.append(rec)
            self._lock.notify_all()
            return {"access_token": self.tokens.new_token(), "expires_in": self.tokens.lifetime, "token_type": "Bearer"}

    def _decide(self, rec: RequestRecord, api_key: str | None, bearer: str | None = None, size: int = 0) -> Plan:
        if rec.kind == "unknown":
            pin = " (fake Gemini serves only /v1beta and Vertex AI's /v1beta1: pin the api_version)"
            hint = pin if "/v1/" in rec.path else ""
            return _error(404, f"Unknown path {rec.method} {rec.path}{hint}.")
        if rec.method != ("GET" if rec.kind == "list" else "POST"):
            return _error(404, f"Method {rec.method} is not allowed on {rec.path}.")
        if rec.kind == "list" and rec.api == "express" and not api_key:
            # Vertex AI's publisher list is one global path: with ADC it is authorised by the bearer token
            problem = self.tokens.problem(bearer, api_key)
            return _error(401, problem) if problem is not None else self._list(rec)
        if rec.api == "vertex":
            problem = self.tokens.problem(bearer, api_key)
            if problem is not None:
                return _error(401, problem)
        elif not api_key:
            return _error(
                403,
                "Method doesn't allow unregistered callers (callers without established identity). "
                "Please use API Key or other form of API consumer identity to call this API.",
            )
        if rec.api != "vertex" and self.api_keys is not None and api_key not in self.api_keys:
            info = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}
            return _error(400, "API key not valid. Please pass a valid API key.", details=[info])
        if rec.kind == "list":
            return self._list(rec)
        if not isinstance(rec.body, dict):
            return _error(400, "Invalid JSON payload received. Expected a JSON object.")
        body: dict[str, Any] = rec.body
        try:
            contents = validate.contents_of(body, required=rec.kind != "count")
            if self.strict:
                validate.check_payload(size)
                validate.check_contents(contents, rec.model, generate=rec.kind != "count")
                validate.check_tools(body.get("tools"))
                validate.instruction_ok(body.get("systemInstruction", body.get("system_instruction")))
            mode = validate.check_tool_config(body.get("toolConfig", body.get("tool_config")), body.get("tools"))
        except validate.InvalidRequest as exc:
            return _error(400, str(exc))
        prompt = replies.prompt_tokens(body, self.token_multiplier)
        if rec.kind != "count" and self.token_limit is not None and prompt > self.token_limit:
            return _error(
                400,
                f"The input token count ({prompt}) exceeds the maximum number of tokens allowed ({self.token_limit}).",
            )
        step = self._script.take(rec.kind, rec.summary)  # type: ignore[arg-type]
        rec.step = faults.step_to_dict(step) if step is not None else None
        if mode == "NONE" and isinstance(step, faults.FunctionCall):
            step = None  # function calling is off: the model answers in text, as the real one does
        return self._answer(rec, step, contents, prompt)

    def _list(self, rec: RequestRecord) -> Plan:
        """The model list (GET models), or the status a `list` step scripts."""
        step = self._script.take("list", False)
        rec.step = faults.step_to_dict(step) if step is not None else None
        if isinstance(step, faults.Status):
            return _error(step.status, step.message, retry_delay=step.retry_delay)
        listed = models_list.gemini_models() if rec.api == "gemini" else models_list.vertex_models()
        return Plan("json", body=listed)

    def _answer(self, rec: RequestRecord, step: Step | None, contents: list[Content], prompt: int) -> Plan:
        if isinstance(step, faults.Status):
            return _error(step.status, step.message, retry_delay=step.retry_delay)
        if isinstance(step, faults.Cut) and rec.kind != "stream":
            return Plan("close", status=0)
        if isinstance(step, faults.MidstreamError) and rec.kind != "stream":
            return _error(step.status, step.message)
        if isinstance(step, faults.Usage) and step.prompt_token_count is not None:
            prompt = step.prompt_token_count
        if rec.kind == "count":
            return Plan("json", body={"totalTokens": prompt}, wait=_wait(step), hold=isinstance(step, faults.Hold))
        if isinstance(step, faults.Blocked | faults.Finish):
            body, events = shapes.plan(
                step, rec.kind, prompt, model=rec.model or "unknown", response_id=f"fake-{rec.index}"
            )
            if rec.kind == "generate":
                return Plan("json", body=body)
            return Plan("stream", events=events)

        calls: list[faults.Call] = []
        text: str | None = None
        if isinstance(step, faults.Text | faults.MalformedSnapshot):
            text = step.text
        elif isinstance(step, faults.FunctionCall):
            calls, text = step.all_calls(), step.text
        elif isinstance(step, faults.Empty):
            text = ""
        elif rec.summary:
            # the turn asking for the summary is an instruction, not part of the history being summarised; the
            # <session_context> is rebuilt after a compaction, and the summarizer is told to leave it out
            text = build_summary([c for c in contents if not _is_summary_turn(c) and not _is_session_context(c)])
        else:
            self._replies += 1
            text = replies.chat_text(contents, self._replies)
        signed = validate.rules_for(rec.model).require_signatures
        parts = ([] if text is None else replies.text_parts(text)) + replies.call_parts(calls, signed=signed)
        candidates = replies.count_tokens(parts)
        if isinstance(step, faults.Usage) and step.candidates_token_count is not None:
            candidates = step.candidates_token_count
        if isinstance(step, faults.Empty) and step.variant == "no_candidates":
            candidates = 0
        meta: dict[str, Any] = replies.usage(prompt, candidates)
        if isinstance(step, faults.Usage):
            meta.update(shapes.usage_extras(step))
        model, rid = rec.model or "unknown", f"fake-{rec.index}"

        def resp(p: list[dict[str, Any]] | None, final: bool) -> dict[str, Any]:
            return replies.response(
                p, model=model, response_id=rid, finish=final, usage_metadata=meta if final else None
            )

        no_cands = isinstance(step, faults.Empty) and step.variant == "no_candidates"
        if rec.kind == "generate":
            body = resp(None if no_cands else parts, True)
            return Plan("json", body=body, wait=_wait(step), hold=isinstance(step, faults.Hold))
        chunks = replies.split_chunks(text) if text else []
        if no_cands:
            events = [resp(None, True)]
        elif calls:
            events = [resp(replies.text_parts(c), False) for c in chunks]
            events.append(resp(replies.call_parts(calls, signed=signed), True))
        elif len(chunks) > 1:
            events = [resp(replies.text_parts(c), False) for c in chunks[:-1]]
            events.append(resp(replies.text_parts(chunks[-1]), True))
        else:
            events = [resp(parts, True)]
        if isinstance(step, faults.Text) and step.thought:
            events.insert(0, resp([{"text": step.thought, "thought": True}], False))
        plan = Plan("stream", events=events, wait=_wait(step), hold=isinstance(step, faults.Hold))
        if isinstance(step, faults.Delay):
            plan.chunk_delay = step.chunk_delay
        if isinstance(step, faults.Cut):
            plan.cut_after = min(1, len(events) - 1)
        if isinstance(step, faults.MidstreamError):
            plan.events = [events[0], faults.error_body(step.status, step.message)]
        return plan


def _is_summary_turn(content: Content) -> bool:
    return content.role == "user" and bool(content.parts) and is_summary_turn_text(content.parts[0].text)


def _is_session_context(content: Content) -> bool:
    return bool(content.parts) and (content.parts[0].text or "").startswith("<session_context>")


def _asks_for_summary(contents: Any) -> bool:
    """A user turn of the request opens with the compression prompt (the summary is asked in the chat's own
    request, in its last user turn; the verify pass follows it with the draft and the critique)."""
    if not isinstance(contents, list):
        return False
    for item in contents[-3:]:
        parts = item.get("parts") if isinstance(item, dict) else None
        if item.get("role") == "user" and isinstance(parts, list) and parts and isinstance(parts[0], dict):
            text = parts[0].get("text")
            if isinstance(text, str) and is_summary_turn_text(text):
                return True
    return False


def _wait(step: Step | None) -> float:
    return step.seconds if isinstance(step, faults.Delay) else 0.0
