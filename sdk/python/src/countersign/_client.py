"""Client and AsyncClient (SPEC §15)."""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar, overload
from urllib.parse import quote, urlencode

from . import _jcs
from ._flow import Config, Http, Response, TransportError, Waiter, status_words
from ._outcome import Outcome
from ._transport import Transport, drive, drive_async

__all__ = ["Client", "AsyncClient", "CountersignError"]

F = TypeVar("F", bound=Callable[..., Any])

#: Keyword arguments a guarded function takes for countersign and strips
#: before the call: the per-call part of the submit body.
GUARD_FIELDS = {"countersign_reason": "reason", "countersign_session": "session",
                "countersign_turn": "turn", "countersign_tool_call_id": "tool_call_id",
                "countersign_timeout": "timeout"}


class CountersignError(Exception):
    """A decider-side call (inbox, answer, get, cancel) the server refused
    or could not answer. status is the HTTP status (0: no answer); problem
    is the server's problem+json body."""

    def __init__(self, message: str, status: int = 0, problem: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status, self.problem = status, problem or {}


class _Base:
    def __init__(self, url: str | None = None, token: str | None = None, *, wait_limit: float | None = None,
                 poll_wait: int = 30, margin: float = 15.0, request_timeout: float = 15.0,
                 unreachable: float = 30.0, connect_retries: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0, 3.0)) -> None:
        url = url or os.environ.get("COUNTERSIGN_URL") or "http://127.0.0.1:8080"
        token = token or os.environ.get("COUNTERSIGN_TOKEN") or ""
        if wait_limit is not None and wait_limit <= 0:
            raise ValueError("countersign: wait_limit must be positive seconds")
        if not 1 <= poll_wait <= 60:
            raise ValueError("countersign: poll_wait must be within 1..60 seconds")
        self._transport = Transport(url, token)
        self._cfg = Config(wait_limit=wait_limit, poll_wait=poll_wait, margin=margin,
                           request_timeout=request_timeout, unreachable=unreachable,
                           connect_retries=tuple(connect_retries))
        self.url = url

    def _waiter(self, call: Mapping[str, Any]) -> Waiter:
        return Waiter(self._cfg, call)

    def _guard_call(self, tool: str, defaults: Mapping[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        call: dict[str, Any] = {"tool": tool, **defaults}
        for k, field in GUARD_FIELDS.items():
            if k in kwargs:
                call[field] = kwargs.pop(k)
        call["arguments"] = kwargs
        return call

    # The decider side and plain requests, as HTTP steps.

    def _request(self, method: str, path: str, body: Any = None) -> Http:
        data = None if body is None else _jcs.canonicalize(body).encode("utf-8")
        headers = {} if data is None else {"Content-Type": "application/json"}
        return Http(method, path, data, headers, self._cfg.request_timeout + self._cfg.poll_wait)

    @staticmethod
    def _decode(resp: Response) -> Any:
        if resp.status // 100 != 2:
            try:
                p = _jcs.loads(resp.body)
            except ValueError:
                p = {}
            raise CountersignError("countersign: " + status_words(resp), resp.status, p if isinstance(p, dict) else {})
        return _jcs.loads(resp.body)

    @staticmethod
    def _answer_body(expected: int, decision: str, scope: str | None, reason: str | None, rule: str | None,
                     arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        b: dict[str, Any] = {"expected": expected, "decision": decision}
        for k, v in (("scope", scope), ("reason", reason), ("rule", rule), ("arguments", arguments)):
            if v is not None:
                b[k] = v
        return b

    @staticmethod
    def _inbox_path(status: str | None, agent: str | None, limit: int | None, cursor: str | None) -> str:
        q = {k: v for k, v in (("status", status), ("agent", agent), ("limit", limit), ("cursor", cursor)) if v is not None}
        return "/v1/requests" + ("?" + urlencode(q) if q else "")


def _rid(request_id: str) -> str:
    return quote(request_id, safe="")


class Client(_Base):
    """The agent side (and the decider side) of countersign, blocking.

    url and token default to COUNTERSIGN_URL and COUNTERSIGN_TOKEN.
    wait_limit (seconds) is how long the harness lets one call wait: the
    requested timeout fits inside it with a margin, and past it the request
    is cancelled and the outcome is ``unavailable``. None: wait until the
    request's deadline. Safe to share between threads."""

    def run(self, call: Mapping[str, Any], fn: Callable[[dict[str, Any]], Any]) -> Outcome:
        """Ask whether call may run, wait for the decision, and call
        ``fn(arguments)`` at most once: only with an approval for this very
        call (its call_digest), unexpired by the server's clock, claimed
        right before. arguments are the approved ones (a person's edits
        included). call is the HTTP submit body: tool, arguments, session,
        turn, tool_call_id, reason, timeout, subject. Returns the Outcome;
        a "no" is never an exception. fn's own exceptions propagate. A call
        that is not a valid submit body raises ValueError before anything
        is sent."""
        return drive(self._waiter(call).flow(), self._transport, fn)  # type: ignore[no-any-return]

    @overload
    def guard(self, tool: str, fn: None = None, **defaults: Any) -> Callable[[F], Callable[..., Outcome]]: ...
    @overload
    def guard(self, tool: str, fn: Callable[..., Any], **defaults: Any) -> Callable[..., Outcome]: ...

    def guard(self, tool: str, fn: Callable[..., Any] | None = None, **defaults: Any) -> Any:
        """Wrap a tool function: each call of the wrapper submits a request
        for tools.call:<tool> with its keyword arguments as the arguments
        and returns an Outcome (fn's value in ``.value``); fn runs with the
        approved arguments only. Per-call fields ride in as keyword
        arguments countersign_reason, countersign_session, countersign_turn,
        countersign_tool_call_id and countersign_timeout; defaults (reason=,
        session=, timeout=…) apply to every call. Without fn it is a
        decorator: ``@client.guard("issue_refund")``."""
        if fn is None:
            return lambda f: self.guard(tool, f, **defaults)
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def guarded(*args: Any, **kwargs: Any) -> Outcome:
            call = self._guard_call(tool, defaults, _bind(sig, args, kwargs))
            return drive(self._waiter(call).flow(), self._transport, fn, kwargs=True)  # type: ignore[no-any-return]

        return guarded

    def _do(self, req: Http) -> Any:
        try:
            return self._decode(self._transport(req))
        except TransportError as e:
            raise CountersignError(f"countersign: {e}") from e

    def get(self, request_id: str, wait: int | None = None) -> dict[str, Any]:
        """The record; wait (seconds, up to 60) long-polls until terminal."""
        q = "" if wait is None else f"?wait={int(wait)}s"
        return self._do(replace(self._request("GET", f"/v1/requests/{_rid(request_id)}{q}"),
                                timeout=(wait or 0) + self._cfg.request_timeout))  # type: ignore[no-any-return]

    def cancel(self, request_id: str) -> dict[str, Any]:
        """Cancel a pending request of this agent (409 on a terminal one)."""
        return self._do(self._request("POST", f"/v1/requests/{_rid(request_id)}/cancel", {}))  # type: ignore[no-any-return]

    def cancel_turn(self, turn: str) -> list[str]:
        """Cancel every pending request of this agent with turn; their ids."""
        return self._do(self._request("POST", f"/v1/turns/{_rid(turn)}/cancel", {}))["cancelled"]  # type: ignore[no-any-return]

    def inbox(self, *, status: str | None = "pending", agent: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """The caller's inbox (GET /v1/requests), every page, oldest first.
        status is comma-separated; None: every status."""
        items: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = self._do(self._request("GET", self._inbox_path(status, agent, limit, cursor)))
            items.extend(page.get("items") or [])
            cursor = page.get("next_cursor")
            if not cursor or limit is not None:
                return items

    def answer(self, request_id: str, *, expected: int, decision: str, scope: str | None = None,
               reason: str | None = None, rule: str | None = None,
               arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Answer a request as its decider: decision allow, deny or abstain;
        expected is the revision that was shown; arguments (allow, a person)
        approves the call with edits. Returns the record; a conflict raises
        CountersignError with status 409."""
        body = self._answer_body(expected, decision, scope, reason, rule, arguments)
        return self._do(self._request("POST", f"/v1/requests/{_rid(request_id)}", body))  # type: ignore[no-any-return]


class AsyncClient(_Base):
    """Client's methods as coroutines (asyncio). HTTP runs in worker
    threads. Cancelling a task that waits in run() or a guarded call
    cancels the pending request, then raises CancelledError as asyncio
    expects."""

    async def run(self, call: Mapping[str, Any], fn: Callable[[dict[str, Any]], Any]) -> Outcome:
        """As Client.run; fn may be a coroutine function."""
        waiter = self._waiter(call)
        return await drive_async(waiter.flow(), self._transport, fn)  # type: ignore[no-any-return]

    @overload
    def guard(self, tool: str, fn: None = None, **defaults: Any) -> Callable[[F], Callable[..., Awaitable[Outcome]]]: ...
    @overload
    def guard(self, tool: str, fn: Callable[..., Any], **defaults: Any) -> Callable[..., Awaitable[Outcome]]: ...

    def guard(self, tool: str, fn: Callable[..., Any] | None = None, **defaults: Any) -> Any:
        """As Client.guard; the wrapper is a coroutine function, and fn may be one."""
        if fn is None:
            return lambda f: self.guard(tool, f, **defaults)
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        async def guarded(*args: Any, **kwargs: Any) -> Outcome:
            call = self._guard_call(tool, defaults, _bind(sig, args, kwargs))
            return await drive_async(self._waiter(call).flow(), self._transport, fn, kwargs=True)  # type: ignore[no-any-return]

        return guarded

    async def _do(self, req: Http) -> Any:
        try:
            resp = await asyncio.to_thread(self._transport, req)
        except TransportError as e:
            raise CountersignError(f"countersign: {e}") from e
        return self._decode(resp)

    async def get(self, request_id: str, wait: int | None = None) -> dict[str, Any]:
        q = "" if wait is None else f"?wait={int(wait)}s"
        return await self._do(replace(self._request("GET", f"/v1/requests/{_rid(request_id)}{q}"),  # type: ignore[no-any-return]
                                      timeout=(wait or 0) + self._cfg.request_timeout))

    async def cancel(self, request_id: str) -> dict[str, Any]:
        return await self._do(self._request("POST", f"/v1/requests/{_rid(request_id)}/cancel", {}))  # type: ignore[no-any-return]

    async def cancel_turn(self, turn: str) -> list[str]:
        return (await self._do(self._request("POST", f"/v1/turns/{_rid(turn)}/cancel", {})))["cancelled"]  # type: ignore[no-any-return]

    async def inbox(self, *, status: str | None = "pending", agent: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = await self._do(self._request("GET", self._inbox_path(status, agent, limit, cursor)))
            items.extend(page.get("items") or [])
            cursor = page.get("next_cursor")
            if not cursor or limit is not None:
                return items

    async def answer(self, request_id: str, *, expected: int, decision: str, scope: str | None = None,
                     reason: str | None = None, rule: str | None = None,
                     arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        body = self._answer_body(expected, decision, scope, reason, rule, arguments)
        return await self._do(self._request("POST", f"/v1/requests/{_rid(request_id)}", body))  # type: ignore[no-any-return]


def _bind(sig: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """A guarded call's arguments by name (positional ones named from fn's
    signature), countersign_* fields kept aside for _guard_call."""
    own = {k: kwargs.pop(k) for k in list(kwargs) if k in GUARD_FIELDS}
    bound = sig.bind_partial(*args, **kwargs)
    named = dict(bound.arguments)
    for p in sig.parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD and p.name in named:
            named.update(named.pop(p.name))
        elif p.kind is inspect.Parameter.VAR_POSITIONAL and p.name in named:
            raise TypeError("countersign: a guarded function's *args cannot be named arguments")
    return {**named, **own}
