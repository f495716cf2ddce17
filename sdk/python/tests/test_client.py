"""Client and AsyncClient against a real countersign server (server.py)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import unittest
import uuid
from typing import Any

import server
from countersign import AsyncClient, Client
from countersign._flow import Response
from countersign._outcome import message

SERVER: server.Server


def setUpModule() -> None:
    global SERVER
    SERVER = server.Server()
    SERVER.start()


def tearDownModule() -> None:
    SERVER.stop()


def agent(**kw: Any) -> Client:
    return Client(url=SERVER.url, token=server.AGENT_TOKEN, **kw)


def person() -> Client:
    return Client(url=SERVER.url, token=server.PERSON_TOKEN)


def answer_when_pending(tool_call_id: str, **answer: Any) -> threading.Thread:
    """In the background, as person u-1: wait for the request with
    tool_call_id in the inbox and answer it."""
    def loop() -> None:
        p = person()
        for _ in range(200):
            for r in p.inbox():
                if r["tool_call_id"] == tool_call_id:
                    p.answer(r["id"], expected=r["revision"], **answer)
                    return
            time.sleep(0.05)
    t = threading.Thread(target=loop, daemon=True)
    t.start()
    return t


def refund_call(**kw: Any) -> dict[str, Any]:
    call = {"tool": "issue_refund", "arguments": {"payment_id": "payment_123", "amount": 4900, "currency": "GBP"},
            "session": "ses-" + uuid.uuid4().hex, "tool_call_id": "call-" + uuid.uuid4().hex, "timeout": "30s",
            "reason": "Duplicate charge confirmed by the customer."}
    call.update(kw)
    return call


class Counter:
    def __init__(self, value: Any = "refunded") -> None:
        self.calls: list[dict[str, Any]] = []
        self.value = value

    def __call__(self, arguments: dict[str, Any]) -> Any:
        self.calls.append(arguments)
        return self.value


class Sync(unittest.TestCase):
    def test_approved_runs_once_and_returns_the_value(self) -> None:
        call, fn = refund_call(), Counter()
        answer_when_pending(call["tool_call_id"], decision="allow", reason="ok")
        out = agent().run(call, fn)
        self.assertEqual(out.kind, "ran", out.message)
        self.assertEqual(out.value, "refunded")
        self.assertEqual(fn.calls, [call["arguments"]])
        self.assertEqual(out.message, message("ran", out.request))
        self.assertIn("approved by person u-1", out.message)
        self.assertIsNotNone(person().get(out.request_id)["claimed_at"], "the approval was not claimed")
        # The same tool call again (a harness replaying it after a restart)
        # recovers the same request, whose approval is spent: it never runs twice.
        again = agent().run(call, fn)
        self.assertEqual(again.request_id, out.request_id)
        self.assertEqual(again.kind, "unavailable", again.message)
        self.assertIn("the approval was already used", again.message)
        self.assertEqual(len(fn.calls), 1, "the call ran twice on one approval")

    def test_denied_never_runs_and_carries_the_reason(self) -> None:
        call, fn = refund_call(), Counter()
        answer_when_pending(call["tool_call_id"], decision="deny", reason="Not a duplicate: a new order.")
        out = agent().run(call, fn)
        self.assertEqual(out.kind, "denied")
        self.assertEqual(fn.calls, [])
        self.assertIn('denied by person u-1 with the note "Not a duplicate: a new order."', out.message)

    def test_denied_by_policy(self) -> None:
        fn = Counter()
        out = agent().run(refund_call(tool="forbidden_wipe"), fn)
        self.assertEqual((out.kind, fn.calls), ("denied", []))
        self.assertIn("denied by the policy of member u-1", out.message)

    def test_expired_never_reads_as_a_no(self) -> None:
        fn = Counter()
        out = agent().run(refund_call(timeout="1s"), fn)
        self.assertEqual(out.kind, "expired", out.message)
        self.assertEqual(fn.calls, [])
        self.assertIn("no decision was made in time", out.message)
        self.assertIn("nobody denied", out.message)
        self.assertNotIn("denied by", out.message)

    def test_server_down_is_unavailable_and_never_runs(self) -> None:
        fn = Counter()
        down = Client(url=f"http://127.0.0.1:{server.free_port()}", token="t", connect_retries=(0.05, 0.05))
        out = down.run(refund_call(), fn)
        self.assertEqual(out.kind, "unavailable")
        self.assertEqual(fn.calls, [])
        self.assertIn("countersign could not be reached", out.message)
        self.assertIn("nobody denied", out.message)

    def test_edited_approval_runs_the_edited_arguments(self) -> None:
        call, fn = refund_call(), Counter()
        edited = {"payment_id": "payment_123", "amount": 49, "currency": "GBP"}
        answer_when_pending(call["tool_call_id"], decision="allow", arguments=edited, reason="49.00, not 4900.")
        out = agent().run(call, fn)
        self.assertEqual(out.kind, "ran", out.message)
        self.assertEqual(fn.calls, [edited])
        self.assertIn("approved with edits by person u-1", out.message)

    def test_digest_mismatch_never_runs(self) -> None:
        c, fn = agent(), Counter()
        real = c._transport

        def other_call(req: Any) -> Response:  # a record bound to another call
            resp = real(req)
            rec = json.loads(resp.body)
            if isinstance(rec, dict) and "call_digest" in rec:
                rec["call_digest"] = "sha256:" + "0" * 64
                resp = Response(resp.status, resp.headers, json.dumps(rec).encode())
            return resp

        c._transport = other_call  # type: ignore[assignment]
        call = refund_call()
        answer_when_pending(call["tool_call_id"], decision="allow")
        out = c.run(call, fn)
        self.assertEqual((out.kind, fn.calls), ("unavailable", []))
        self.assertIn("the approval is for a different call", out.message)
        self.assertIsNone(person().get(out.request_id)["claimed_at"])

    def test_wait_limit_cancels_the_request(self) -> None:
        c, fn = agent(wait_limit=4), Counter()
        real = c._transport

        def polls_lost(req: Any) -> Response:
            if req.method == "GET":
                time.sleep(0.2)
                raise __import__("countersign._flow", fromlist=["x"]).TransportError(TimeoutError("timed out"), False)
            return real(req)

        c._transport = polls_lost  # type: ignore[assignment]
        out = c.run(refund_call(timeout="1h"), fn)
        self.assertEqual((out.kind, fn.calls), ("unavailable", []))
        self.assertIn("the wait limit passed before a decision", out.message)
        self.assertEqual(out.request["timeout"], "3s")  # fitted inside the wait limit

    def test_decorator(self) -> None:
        c, seen = agent(), []

        @c.guard("issue_refund", reason="Duplicate charge.")
        def issue_refund(payment_id: str, amount: int, currency: str = "GBP") -> str:
            seen.append((payment_id, amount, currency))
            return f"refunded {amount}"

        tcid = "call-" + uuid.uuid4().hex
        answer_when_pending(tcid, decision="allow")
        out = issue_refund("payment_9", 100, countersign_tool_call_id=tcid, countersign_session="s-deco")
        self.assertEqual(out.kind, "ran", out.message)
        self.assertEqual(out.value, "refunded 100")
        self.assertEqual(seen, [("payment_9", 100, "GBP")])
        self.assertEqual(out.request["arguments"], {"payment_id": "payment_9", "amount": 100})
        self.assertEqual(out.request["reason"], "Duplicate charge.")

    def test_invalid_call_raises_before_submitting(self) -> None:
        with self.assertRaises(ValueError):
            agent().run({"tool": "t", "arguments": [1]}, Counter())
        with self.assertRaises(ValueError):
            agent().run({"tool": "t", "arguments": {"n": float("nan")}}, Counter())


class Async(unittest.IsolatedAsyncioTestCase):
    async def test_approved_runs_once(self) -> None:
        call, runs = refund_call(), []

        async def fn(arguments: dict[str, Any]) -> str:
            runs.append(arguments)
            return "ok"

        answer_when_pending(call["tool_call_id"], decision="allow")
        out = await AsyncClient(url=SERVER.url, token=server.AGENT_TOKEN).run(call, fn)
        self.assertEqual((out.kind, out.value, runs), ("ran", "ok", [call["arguments"]]))

    async def test_denied(self) -> None:
        call, fn = refund_call(), Counter()
        answer_when_pending(call["tool_call_id"], decision="deny", reason="no")
        out = await AsyncClient(url=SERVER.url, token=server.AGENT_TOKEN).run(call, fn)
        self.assertEqual((out.kind, fn.calls), ("denied", []))

    async def test_decorator(self) -> None:
        c = AsyncClient(url=SERVER.url, token=server.AGENT_TOKEN)

        @c.guard("send_email")
        async def send_email(to: str, body: str) -> str:
            return "sent to " + to

        tcid = "call-" + uuid.uuid4().hex
        answer_when_pending(tcid, decision="allow")
        out = await send_email(to="a@example.com", body="hi", countersign_tool_call_id=tcid)
        self.assertEqual((out.kind, out.value), ("ran", "sent to a@example.com"), out.message)

    async def test_task_cancellation_cancels_the_request(self) -> None:
        c, fn = AsyncClient(url=SERVER.url, token=server.AGENT_TOKEN), Counter()
        call = refund_call()
        task = asyncio.create_task(c.run(call, fn))
        p = person()
        rec = None
        for _ in range(100):
            rec = next((r for r in await asyncio.to_thread(p.inbox) if r["tool_call_id"] == call["tool_call_id"]), None)
            if rec:
                break
            await asyncio.sleep(0.05)
        self.assertIsNotNone(rec)
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        self.assertEqual(fn.calls, [])
        self.assertEqual((await asyncio.to_thread(p.get, rec["id"]))["status"], "cancelled")


class Decider(unittest.TestCase):
    def test_inbox_and_answer_conflict(self) -> None:
        from countersign import CountersignError
        call = refund_call()
        got: list[Any] = []
        t = threading.Thread(target=lambda: got.append(agent().run(call, Counter())), daemon=True)
        t.start()
        p = person()
        for _ in range(100):
            rec = next((r for r in p.inbox() if r["tool_call_id"] == call["tool_call_id"]), None)
            if rec:
                break
            time.sleep(0.05)
        with self.assertRaises(CountersignError) as cm:
            p.answer(rec["id"], expected=rec["revision"] + 5, decision="allow")
        self.assertEqual(cm.exception.status, 409)
        p.answer(rec["id"], expected=rec["revision"], decision="deny", reason="no")
        t.join(30)
        self.assertEqual(got[0].kind, "denied")


if __name__ == "__main__":
    unittest.main()
