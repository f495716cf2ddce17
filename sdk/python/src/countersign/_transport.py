"""HTTP over http.client, and the two drivers of a flow (_flow): one that
blocks, one for asyncio that runs each HTTP exchange in a thread."""

from __future__ import annotations

import asyncio
import http.client
import inspect
import socket
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from ._flow import Abandoned, Flow, Http, Response, Run, Sleep, TransportError

MAX_BODY = 4 << 20


class Transport:
    """One HTTP/1.1 exchange per connection to a countersign server."""

    def __init__(self, url: str, token: str) -> None:
        u = urlsplit(url.rstrip("/"))
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"countersign: server URL {url!r}: want http(s)://host[:port]")
        if not token:
            raise ValueError("countersign: empty token (set token= or COUNTERSIGN_TOKEN)")
        self.https, self.host, self.port = u.scheme == "https", u.hostname, u.port
        self.prefix, self.token = u.path, token

    def __call__(self, req: Http) -> Response:
        cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        conn = cls(self.host, self.port, timeout=req.timeout)
        headers = {"Authorization": "Bearer " + self.token, "Accept": "application/json", **req.headers}
        try:
            try:
                conn.connect()
            except (ConnectionRefusedError, socket.gaierror) as e:
                raise TransportError(e, connect=True) from e
            conn.request(req.method, self.prefix + req.path, body=req.body, headers=headers)
            resp = conn.getresponse()
            body = resp.read(MAX_BODY + 1)
            if len(body) > MAX_BODY:
                raise TransportError(ValueError("answer over 4 MiB"), connect=False)
            return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, body)
        except (OSError, http.client.HTTPException) as e:
            if isinstance(e, TransportError):
                raise
            raise TransportError(e, connect=False) from e
        finally:
            conn.close()


def _call(fn: Callable[..., Any], arguments: dict[str, Any], kwargs: bool) -> Any:
    return fn(**arguments) if kwargs else fn(arguments)


def drive(gen: Flow, transport: Transport, fn: Callable[..., Any], kwargs: bool = False) -> Any:
    """Run a flow to its Outcome, blocking. KeyboardInterrupt while the call
    waits abandons it (the pending request is cancelled) and is raised
    again; fn's exceptions propagate (the call ran)."""
    step: Any = next(gen)
    interrupted: BaseException | None = None
    try:
        while True:
            try:
                if isinstance(step, Http):
                    try:
                        resp = transport(step)
                    except TransportError as e:
                        step = gen.throw(e)
                    else:
                        step = gen.send(resp)
                elif isinstance(step, Sleep):
                    time.sleep(step.seconds)
                    step = gen.send(None)
                else:
                    step = gen.send(_call(fn, step.arguments, kwargs))
            except KeyboardInterrupt as e:
                if interrupted is not None or isinstance(step, Run):
                    raise
                interrupted = e
                step = gen.throw(Abandoned())
    except StopIteration as stop:
        if interrupted is not None:
            raise interrupted from None
        return stop.value


async def drive_async(gen: Flow, transport: Transport, fn: Callable[..., Any], kwargs: bool = False) -> Any:
    """Run a flow to its Outcome in asyncio, each HTTP exchange in a worker
    thread. Cancelling the task while the call waits abandons it: the
    pending request is cancelled, then CancelledError is raised again. fn
    may be a coroutine function; its exceptions propagate."""
    step: Any = next(gen)
    cancelled: asyncio.CancelledError | None = None
    try:
        while True:
            try:
                if isinstance(step, Http):
                    try:
                        resp = await asyncio.to_thread(transport, step)
                    except TransportError as e:
                        step = gen.throw(e)
                    else:
                        step = gen.send(resp)
                elif isinstance(step, Sleep):
                    await asyncio.sleep(step.seconds)
                    step = gen.send(None)
                else:
                    out = _call(fn, step.arguments, kwargs)
                    if inspect.isawaitable(out):
                        out = await out
                    step = gen.send(out)
            except asyncio.CancelledError as e:
                if cancelled is not None or isinstance(step, Run):
                    raise
                cancelled = e
                step = gen.throw(Abandoned())
    except StopIteration as stop:
        if cancelled is not None:
            raise cancelled from None
        return stop.value
