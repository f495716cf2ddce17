"""One guarded call as a generator of I/O steps, shared by Client and
AsyncClient: the drivers (``_transport``) perform each step and send back
its result, or throw the transport's failure (``TransportError``) or the
caller's abandonment (``Abandoned``) into it. The flow follows the Go
adapter (adapter/do.go, requests.go): submit with an Idempotency-Key, long
poll until terminal, check call_digest and decision.expires_at, claim, run.
"""

from __future__ import annotations

import hashlib
import random
import re
import time
import uuid
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from . import _jcs
from ._outcome import CAUSES, Outcome, go_quote, make, parse_time

TERMINAL = frozenset({"approved", "denied", "expired", "cancelled"})
STATUSES = TERMINAL | {"pending"}
CALL_FIELDS = frozenset({"tool", "capability", "arguments", "session", "turn", "tool_call_id",
                         "reason", "timeout", "subject", "connection", "idempotency_key"})


@dataclass
class Config:
    """How long to wait for what; the Go adapter's defaults (adapter/client.go)."""

    wait_limit: float | None = None  # seconds; None: until the request's deadline
    margin: float = 15.0
    poll_wait: int = 30
    request_timeout: float = 15.0
    cancel_timeout: float = 5.0
    unreachable: float = 30.0
    backoff_min: float = 0.1
    backoff_max: float = 5.0
    connect_retries: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0, 3.0)
    now: Any = time.time  # the local wall clock, seconds


@dataclass
class Http:
    method: str
    path: str
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 15.0


@dataclass
class Response:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes


@dataclass
class Sleep:
    seconds: float


@dataclass
class Run:
    arguments: dict[str, Any]


class TransportError(Exception):
    """A request got no HTTP answer; connect is True when it never reached a server."""

    def __init__(self, cause: BaseException, connect: bool) -> None:
        super().__init__(str(cause) or type(cause).__name__)
        self.connect = connect


class Abandoned(Exception):
    """Thrown into the flow when the caller abandons the call."""


Step = Http | Sleep | Run
Flow = Generator[Step, Any, Outcome]


def idempotency_key(session: str | None, tool_call_id: str | None) -> str:
    """The key for a call: derived from session and tool call id when both
    are set (a replayed tool call recovers its request), else random."""
    if session and tool_call_id:
        c = _jcs.canonicalize({"session": session, "tool_call_id": tool_call_id})
        return "countersign-" + hashlib.sha256(c.encode("utf-8")).hexdigest()
    return str(uuid.uuid4())


_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(s: str) -> float:
    """A Go duration ("30m", "1h30m", "1.5s") in seconds."""
    pos, total = 0, 0.0
    for m in _DURATION.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(s) or not s:
        raise ValueError(f"countersign: timeout {s!r} is not a duration like '30m' or '90s'")
    return total


def _timeout_seconds(t: Any) -> float | None:
    if t is None:
        return None
    if isinstance(t, (int, float)) and not isinstance(t, bool):
        return float(t)
    if isinstance(t, str):
        return parse_duration(t)
    raise ValueError("countersign: timeout must be seconds or a duration string")


def _fmt_duration(seconds: float) -> str:
    return f"{int(seconds)}s"


class ServerClock:
    """The server's clock from the Date headers of one call's answers: the
    latest the server's clock can read (a Date is truncated to the second
    and stamped after the request left), so an approval is never judged
    valid when the server could already hold it expired."""

    def __init__(self, now: Any) -> None:
        self._now, self._hi = now, None  # type: float | None

    def observe(self, sent: float, date: str | None) -> None:
        if not date:
            return
        try:
            from email.utils import parsedate_to_datetime
            d = parsedate_to_datetime(date).timestamp()
        except (TypeError, ValueError, IndexError):
            return
        bound = d + 1.0 - sent
        if self._hi is None or bound < self._hi:
            self._hi = bound

    def server_now(self) -> float:
        return self._now() + (self._hi or 0.0)

    def until(self, t: float) -> float:
        return t - self.server_now()


class _Backoff:
    def __init__(self, cfg: Config) -> None:
        self.min, self.max, self.n = cfg.backoff_min, cfg.backoff_max, 0

    def next(self, hint: float = 0.0) -> float:
        d = min(self.min * (2 ** min(self.n, 30)), self.max)
        self.n += 1
        return max(d / 2 + random.uniform(0, d / 2), min(hint, 30.0))


class _Refused(Exception):
    """A final non-2xx answer (or nonsense): the call fails closed."""

    def __init__(self, words: str, resp: Response | None = None) -> None:
        super().__init__(words)
        self.resp = resp
        self.problem: dict[str, Any] = {}
        if resp is not None:
            try:
                p = _jcs.loads(resp.body)
                self.problem = p if isinstance(p, dict) else {}
            except ValueError:
                pass


def _transient_status(st: int) -> bool:
    return st >= 500 or st in (408, 429)


def _retry_after(resp: Response) -> float:
    try:
        return float(resp.headers.get("retry-after", "0"))
    except ValueError:
        return 0.0


def status_words(resp: Response) -> str:
    """A refusal as the Go adapter words it: "401 Unauthorized Unauthenticated: "detail""."""
    from http import HTTPStatus
    try:
        text = HTTPStatus(resp.status).phrase
    except ValueError:
        text = ""
    s = f"{resp.status} {text}".rstrip()
    try:
        p = _jcs.loads(resp.body)
    except ValueError:
        p = None
    if isinstance(p, dict):
        if p.get("error"):
            s += " " + str(p["error"])
        if p.get("detail"):
            s += ": " + go_quote(str(p["detail"]))
    return s


def check_record(data: bytes, want: str | None) -> dict[str, Any]:
    """Parse a record and check what the flow relies on. Raises
    ValueError for a body that is not JSON (truncated: transient) and
    _Refused for nonsense."""
    r = _jcs.loads(data)
    if not isinstance(r, dict) or not r.get("id") or (want and r["id"] != want):
        raise _Refused(f"{CAUSES['bad_response']}: record {r.get('id') if isinstance(r, dict) else r!r}, want {want!r}")
    if r.get("status") not in STATUSES:
        raise _Refused(f"{CAUSES['bad_response']}: unknown status {go_quote(str(r.get('status')))}")
    if r["status"] == "approved" and parse_time((r.get("decision") or {}).get("expires_at")) is None:
        raise _Refused(f"{CAUSES['bad_response']}: an approval without decision.expires_at")
    return r


def normalize_call(call: Mapping[str, Any]) -> dict[str, Any]:
    """Check a call (the HTTP submit body) and return a copy of it."""
    unknown = set(call) - CALL_FIELDS
    if unknown:
        raise ValueError(f"countersign: unknown call field(s) {sorted(unknown)}")
    c = dict(call)
    if bool(c.get("tool")) == bool(c.get("capability")):
        raise ValueError("countersign: set tool or capability, not both")
    if not isinstance(c.get("arguments"), Mapping):
        raise ValueError("countersign: arguments must be a JSON object (a dict)")
    c["arguments"] = _jcs.loads(_jcs.canonicalize(c["arguments"]))  # a deep, checked copy
    t = _timeout_seconds(c.get("timeout"))
    if t is not None and t < 1:
        raise ValueError("countersign: timeout is under 1s")
    return c


def capability_of(call: Mapping[str, Any]) -> dict[str, str]:
    if call.get("tool"):
        return {"action": "tools.call", "target": str(call["tool"])}
    cap = call["capability"]
    return {"action": cap["action"], "target": cap["target"]}


def digest_of(call: Mapping[str, Any], rec: Mapping[str, Any], arguments: Any) -> str:
    return _jcs.call_digest(_jcs.binding(
        tenant=str(rec.get("tenant") or ""), agent=str(rec.get("agent") or ""),
        capability=capability_of(call), arguments=arguments, session=call.get("session"),
        turn=call.get("turn"), tool_call_id=call.get("tool_call_id"), connection=call.get("connection")))


class Waiter:
    """The state of one run: the flow is ``Waiter(...).flow()``."""

    def __init__(self, cfg: Config, call: Mapping[str, Any]) -> None:
        self.cfg, self.call = cfg, normalize_call(call)
        self.clock = ServerClock(cfg.now)
        self.key = self.call.pop("idempotency_key", None) or idempotency_key(
            self.call.get("session"), self.call.get("tool_call_id"))
        self.start = time.monotonic()
        self.last: str | None = None  # the last transient failure
        self._plan()

    def _plan(self) -> None:
        requested = _timeout_seconds(self.call.get("timeout"))
        limit = self.cfg.wait_limit
        self.give_up_at: float | None = None
        if limit is None:
            self.timeout = requested
            return
        m = min(self.cfg.margin, limit / 4)
        t = max(float(int(limit - m)), 1.0)
        self.timeout = requested if requested is not None and requested < t else t
        self.give_up_at = self.start + limit - m / 2

    def body(self) -> bytes:
        b = {k: v for k, v in self.call.items() if v is not None}
        if self.timeout is not None:
            b["timeout"] = _fmt_duration(self.timeout) if self.timeout >= 1 else "1s"
            if isinstance(self.call.get("timeout"), str) and _timeout_seconds(self.call["timeout"]) == self.timeout:
                b["timeout"] = self.call["timeout"]
        return _jcs.canonicalize(b).encode("utf-8")

    def left(self) -> float:
        return float("inf") if self.give_up_at is None else self.give_up_at - time.monotonic()

    def exchange(self, method: str, path: str, body: bytes | None, timeout: float,
                 headers: dict[str, str] | None = None) -> Generator[Step, Any, Response]:
        sent = self.cfg.now()
        resp: Response = yield Http(method, path, body, dict(headers or {}), max(timeout, 0.05))
        self.clock.observe(sent, resp.headers.get("date"))
        return resp

    # The flow.

    def flow(self) -> Flow:
        try:
            rec = yield from self.submit()
        except Abandoned:
            return make("cancelled", None, abandoned=True, cause=CAUSES["abandoned"])
        except _Refused as e:
            return make("unavailable", None, cause=str(e))
        if rec["status"] not in TERMINAL and self.give_up_at is None:
            deadline = parse_time(rec.get("deadline_at"))
            wait = 0.0 if deadline is None else self.clock.until(deadline.timestamp())
            self.give_up_at = time.monotonic() + max(wait, 0.0) + self.cfg.margin / 2
        try:
            rec = yield from self.await_terminal(rec)
        except Abandoned:
            return (yield from self.give_up(rec, None, abandoned=True))
        except _Refused as e:
            return (yield from self.give_up(rec, str(e)))
        except _WaitLimit:
            return (yield from self.give_up(rec, self.wait_limit_cause()))
        return (yield from self.apply(rec))

    def wait_limit_cause(self) -> str:
        if self.last is None:
            return CAUSES["wait_limit"]
        return f"{CAUSES['wait_limit']}; {CAUSES['unreachable']}: {self.last}"

    def submit(self) -> Generator[Step, Any, dict[str, Any]]:
        stop = time.monotonic() + min(self.cfg.unreachable, self.left())
        bo, dials, body = _Backoff(self.cfg), 0, self.body()
        while True:
            hint = 0.0
            try:
                resp = yield from self.exchange("POST", "/v1/requests", body, min(self.cfg.request_timeout, self.left()),
                                                {"Idempotency-Key": self.key, "Content-Type": "application/json"})
                dials = 0
                if resp.status in (200, 201):
                    try:
                        return check_record(resp.body, None)
                    except ValueError as e:
                        self.last = f"reading the record: {e}"
                elif _transient_status(resp.status):
                    self.last, hint = status_words(resp), _retry_after(resp)
                else:
                    raise _Refused(f"{CAUSES['refused']}: {status_words(resp)}", resp)
            except TransportError as e:
                self.last = str(e)
                dials = dials + 1 if e.connect else 0
            delay = bo.next(hint)
            if dials:
                if dials > len(self.cfg.connect_retries):
                    raise _Refused(f"{CAUSES['unreachable']} ({dials} connection attempts): {self.last}")
                delay = self.cfg.connect_retries[dials - 1]
            if time.monotonic() + delay >= stop:
                if self.left() <= delay:
                    raise _Refused(self.wait_limit_cause())
                raise _Refused(f"{CAUSES['unreachable']} (for {_fmt_duration(self.cfg.unreachable)}): {self.last}")
            yield Sleep(delay)

    def await_terminal(self, rec: dict[str, Any]) -> Generator[Step, Any, dict[str, Any]]:
        bo = _Backoff(self.cfg)
        while rec["status"] not in TERMINAL:
            left = self.left()
            if left <= 0:
                raise _WaitLimit()
            wait = max(min(self.cfg.poll_wait, int(left)), 1)
            path = f"/v1/requests/{quote(rec['id'], safe='')}?wait={wait}s"
            hint = 0.0
            try:
                resp = yield from self.exchange("GET", path, None, min(wait + self.cfg.request_timeout, left))
                if resp.status == 200:
                    try:
                        rec, self.last = check_record(resp.body, rec["id"]), None
                        bo.n = 0
                        continue
                    except ValueError as e:
                        self.last = f"reading the record: {e}"
                elif _transient_status(resp.status):
                    self.last, hint = status_words(resp), _retry_after(resp)
                else:
                    raise _Refused(f"{CAUSES['refused']}: {status_words(resp)}", resp)
            except TransportError as e:
                self.last = str(e)
            delay = bo.next(hint)
            if delay >= self.left():
                raise _WaitLimit()
            yield Sleep(delay)
        return rec

    def apply(self, rec: dict[str, Any]) -> Flow:
        st = rec["status"]
        if st == "approved":
            return (yield from self.use_approval(rec))
        if st in ("denied", "expired", "cancelled"):
            return make(st, rec)
        return make("unavailable", rec, cause=f"{CAUSES['bad_response']}: status {go_quote(st)}")

    def use_approval(self, rec: dict[str, Any]) -> Flow:
        arguments = self.call["arguments"]
        if rec.get("edited"):
            arguments = rec.get("arguments")
            if not isinstance(arguments, dict):
                return make("unavailable", rec, cause=f"{CAUSES['bad_response']}: edited arguments are not an object")
        digest = digest_of(self.call, rec, arguments)
        if rec.get("call_digest") != digest:
            return make("unavailable", rec, cause=f"{CAUSES['digest_mismatch']}: approved {rec.get('call_digest')}, about to run {digest}")
        expires = parse_time(rec["decision"]["expires_at"])
        assert expires is not None  # check_record
        if self.clock.until(expires.timestamp()) <= 0:
            return make("approval_expired", rec, cause=CAUSES["approval_expired"])
        try:
            claimed = yield from self.claim(rec, digest)
        except Abandoned:
            return make("cancelled", rec, abandoned=True, cause=CAUSES["abandoned"])
        except _Refused as e:
            kind = "approval_expired" if str(e) == CAUSES["approval_expired"] else "unavailable"
            return make(kind, rec, cause=str(e))
        value = yield Run(arguments)
        return make("ran", claimed, value=value)

    def claim(self, rec: dict[str, Any], digest: str) -> Generator[Step, Any, dict[str, Any]]:
        path = f"/v1/requests/{quote(rec['id'], safe='')}/claim"
        body = _jcs.canonicalize({"call_digest": digest}).encode("utf-8")
        bo = _Backoff(self.cfg)
        while True:
            hint, left = 0.0, self.left()
            try:
                resp = yield from self.exchange("POST", path, body, min(self.cfg.request_timeout, left),
                                                {"Content-Type": "application/json"})
                if resp.status == 200:
                    try:
                        c = check_record(resp.body, rec["id"])
                    except ValueError as e:
                        raise _Refused(f"{CAUSES['bad_response']}: reading the claim: {e}") from None
                    if c["status"] != "approved" or not c.get("claimed_at"):
                        raise _Refused(f"{CAUSES['bad_response']}: claim answered status {go_quote(c['status'])}")
                    return c
                if not _transient_status(resp.status):
                    raise _claim_refusal(resp)
                self.last, hint = status_words(resp), _retry_after(resp)
            except TransportError as e:
                self.last = str(e)
            delay = bo.next(hint)
            if delay >= self.left():
                raise _Refused(self.wait_limit_cause())
            yield Sleep(delay)

    def give_up(self, rec: dict[str, Any], cause: str | None, abandoned: bool = False) -> Flow:
        if rec["status"] not in TERMINAL:
            try:
                rec = yield from self.cancel(rec)
            except Abandoned:
                pass
        if abandoned:
            return make("cancelled", rec, abandoned=True, cause=CAUSES["abandoned"])
        return make("unavailable", rec, cause=cause)

    def cancel(self, rec: dict[str, Any]) -> Generator[Step, Any, dict[str, Any]]:
        """Cancel rec, best effort within cancel_timeout; rec as it was if that fails."""
        path = f"/v1/requests/{quote(rec['id'], safe='')}/cancel"
        stop, bo = time.monotonic() + self.cfg.cancel_timeout, _Backoff(self.cfg)
        while True:
            try:
                resp = yield from self.exchange("POST", path, b"{}", stop - time.monotonic(),
                                                {"Content-Type": "application/json"})
                if resp.status == 200:
                    return check_record(resp.body, rec["id"])
                if not _transient_status(resp.status):
                    return rec
            except (TransportError, ValueError, _Refused):
                pass
            delay = bo.next()
            if time.monotonic() + delay >= stop:
                return rec
            yield Sleep(delay)


class _WaitLimit(Exception):
    pass


def _claim_refusal(resp: Response) -> _Refused:
    reason = ""
    try:
        p = _jcs.loads(resp.body)
        reason = str(p.get("reason") or "") if isinstance(p, dict) else ""
    except ValueError:
        pass
    if resp.status == 409 and reason in CAUSES and reason in ("already_claimed", "approval_expired",
                                                              "digest_mismatch", "not_approved"):
        return _Refused(CAUSES[reason], resp)
    return _Refused(f"{CAUSES['refused']}: {status_words(resp)}", resp)
