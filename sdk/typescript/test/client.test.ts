// Client.run, guard and the decider side against a real countersign server.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Socket } from "node:net";
import { answerWhenPending, freePort, pendingOf, session, startServer, TOKENS, type Server } from "./server.js";
import { Client } from "../src/index.js";

let srv: Server;
before(async () => {
  srv = await startServer();
});
after(async () => {
  await srv?.stop();
});

const refund = { payment_id: "payment_123", amount: 4900, currency: "GBP" };

describe("Client.run", () => {
  it("runs an approved call once, with the approved arguments, and a replay does not run it again", async () => {
    const agent = srv.client(TOKENS.agent), person = srv.client(TOKENS.person);
    const s = session("approved");
    let runs = 0;
    const call = { tool: "issue_refund", arguments: refund, session: s, toolCallId: "call-1", reason: "Duplicate charge." };
    const [o] = await Promise.all([
      agent.run(call, (args) => {
        runs++;
        assert.deepEqual(args, refund);
        return "refunded";
      }),
      answerWhenPending(person, s, { decision: "allow", reason: "Confirmed duplicate." }),
    ]);
    assert.equal(o.kind, "ran");
    assert.equal(o.value, "refunded");
    assert.equal(runs, 1);
    assert.ok(o.request?.claimed_at, "the approval was claimed");
    assert.equal(o.message, `countersign: approved by person u-1 with the note "Confirmed duplicate." (request ${o.request!.id}); the approval is claimed for this call`);
    // The same call again (same session and tool call id: the same
    // Idempotency-Key) finds the same, already claimed approval.
    const again = await agent.run(call, () => runs++);
    assert.equal(again.request?.id, o.request!.id);
    assert.equal(again.kind, "unavailable");
    assert.match(again.message, /the approval was already used; nobody denied the call, and it did not run$/);
    assert.equal(runs, 1, "one approval runs one call once");
  });

  it("never runs a denied call, and says who denied it and why", async () => {
    const agent = srv.client(TOKENS.agent), person = srv.client(TOKENS.person);
    const s = session("denied");
    let runs = 0;
    const [o] = await Promise.all([
      agent.run({ tool: "issue_refund", arguments: refund, session: s, toolCallId: "c" }, () => runs++),
      answerWhenPending(person, s, { decision: "deny", reason: "Not a duplicate." }),
    ]);
    assert.equal(o.kind, "denied");
    assert.equal(runs, 0);
    assert.equal(o.message, `countersign: denied by person u-1 with the note "Not a duplicate." (request ${o.request!.id}); the call did not run`);
  });

  it("reports a policy's no at submit", async () => {
    const o = await srv.client(TOKENS.agent).run({ tool: "forbidden_drop", arguments: {}, session: session("policy"), toolCallId: "c" }, () => assert.fail("ran"));
    assert.equal(o.kind, "denied");
    assert.match(o.message, /^countersign: denied by the policy of member u-1/);
  });

  it("an unanswered request expires, and that never reads as a no", async () => {
    let runs = 0;
    const o = await srv.client(TOKENS.agent).run({ tool: "issue_refund", arguments: refund, session: session("expired"), toolCallId: "c", timeout: "1s" }, () => runs++);
    assert.equal(o.kind, "expired");
    assert.equal(runs, 0);
    assert.match(o.message, /^countersign: no decision was made in time \(request req_\w+\) before its deadline \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ; nobody denied the call, and it did not run$/);
    assert.doesNotMatch(o.message, /denied by/);
  });

  it("a server that cannot be reached is unavailable, never a no", async () => {
    const c = new Client({ url: `http://127.0.0.1:${await freePort()}`, token: "x", connectRetriesMs: [20, 20] });
    const o = await c.run({ tool: "issue_refund", arguments: refund }, () => assert.fail("ran"));
    assert.equal(o.kind, "unavailable");
    assert.equal(o.request, null);
    assert.match(o.message, /^countersign: approval could not be obtained: countersign could not be reached \(3 connection attempts\): .*; nobody denied the call, and it did not run$/);
  });

  it("a refused token is unavailable, never a no", async () => {
    const o = await srv.client("not-a-token").run({ tool: "issue_refund", arguments: refund }, () => assert.fail("ran"));
    assert.equal(o.kind, "unavailable");
    assert.match(o.message, /countersign refused the request: 401 Unauthorized Unauthenticated/);
  });

  it("fits the requested timeout inside its wait limit", async () => {
    const agent = srv.client(TOKENS.agent, { waitLimitMs: 2500, pollWaitMs: 1000 });
    const o = await agent.run({ tool: "issue_refund", arguments: refund, session: session("limit"), toolCallId: "c", timeout: "1h" }, () => assert.fail("ran"));
    assert.equal(o.request?.timeout, "1s");
    assert.equal(o.kind, "expired");
  });

  it("gives up at its wait limit when the server does not answer", async () => {
    const socks: Socket[] = [];
    const hang = createServer((sock) => socks.push(sock)).listen(0, "127.0.0.1");
    await new Promise((r) => hang.once("listening", r));
    const port = (hang.address() as { port: number }).port;
    const started = Date.now();
    try {
      const c = new Client({ url: `http://127.0.0.1:${port}`, token: "x", waitLimitMs: 1500, requestTimeoutMs: 400 });
      const o = await c.run({ tool: "issue_refund", arguments: refund }, () => assert.fail("ran"));
      assert.equal(o.kind, "unavailable");
      assert.ok(Date.now() - started < 2500, "gave up within the wait limit");
      assert.match(o.message, /^countersign: approval could not be obtained: the wait limit passed before a decision; countersign could not be reached: .*; nobody denied the call, and it did not run$/);
    } finally {
      socks.forEach((s) => s.destroy());
      hang.close();
    }
  });

  it("runs the edited call after an approval with edits", async () => {
    const agent = srv.client(TOKENS.agent), person = srv.client(TOKENS.person);
    const s = session("edited");
    const edited = { ...refund, amount: 2500 };
    let got: unknown;
    const [o] = await Promise.all([
      agent.run({ tool: "issue_refund", arguments: refund, session: s, toolCallId: "c" }, (args, ctx) => {
        got = args;
        assert.equal(ctx.edited, true);
        return "ok";
      }),
      answerWhenPending(person, s, { decision: "allow", arguments: edited, reason: "Half of it." }),
    ]);
    assert.equal(o.kind, "ran");
    assert.deepEqual(got, edited);
    assert.match(o.message, /^countersign: approved with edits by person u-1 with the note "Half of it." \(request req_\w+\); the approval is claimed for the edited call, which runs instead$/);
  });

  it("an approval with edits does not run where edits cannot be applied", async () => {
    const agent = srv.client(TOKENS.agent), person = srv.client(TOKENS.person);
    const s = session("noedits");
    const [o] = await Promise.all([
      agent.run({ tool: "issue_refund", arguments: refund, session: s, toolCallId: "c" }, () => assert.fail("ran"), { acceptEdits: false }),
      answerWhenPending(person, s, { decision: "allow", arguments: { ...refund, amount: 1 } }),
    ]);
    assert.equal(o.kind, "unavailable");
    assert.match(o.message, /approved only with edits this harness cannot apply/);
  });

  it("an approval that expired before the call could start does not run", async () => {
    const agent = srv.client(TOKENS.shortAgent), person = srv.client(TOKENS.shortPerson);
    const s = session("approval-expired");
    const call = { tool: "issue_refund", arguments: refund, session: s, toolCallId: "c" };
    const [d] = await Promise.all([agent.decide(call), answerWhenPending(person, s, { decision: "allow" })]);
    assert.equal(d.kind, "approved");
    await new Promise((r) => setTimeout(r, 2100)); // approval_ttl is 1s in tenant t2
    const o = await agent.run(call, () => assert.fail("ran"));
    assert.equal(o.kind, "approval_expired");
    assert.equal(o.request?.claimed_at, null);
    assert.match(o.message, /^countersign: the approval by person u-2 \(request req_\w+\) expired at \S+Z before the call could start; the call did not run$/);
  });

  it("an AbortSignal cancels the waiting request", async () => {
    const agent = srv.client(TOKENS.agent), person = srv.client(TOKENS.person);
    const s = session("abort");
    const ac = new AbortController();
    const running = agent.run({ tool: "issue_refund", arguments: refund, session: s, toolCallId: "c" }, () => assert.fail("ran"), { signal: ac.signal });
    await pendingOf(person, s);
    ac.abort();
    const o = await running;
    assert.equal(o.kind, "cancelled");
    assert.equal(o.request?.status, "cancelled");
    assert.equal(o.message, `countersign: the call was abandoned before it ran (request ${o.request!.id}), and its request was cancelled; nobody denied the call`);
  });
});

describe("Client.guard and the decider side", () => {
  it("guards a tool function", async () => {
    const agent = srv.client(TOKENS.agent), person = srv.client(TOKENS.person);
    const refundTool = agent.guard("issue_refund", async (args: { amount: number }) => `refunded ${args.amount}`, { reason: "Duplicate." });
    const s = session("guard");
    const [o] = await Promise.all([
      refundTool({ amount: 12 }, { session: s, toolCallId: "t1" }),
      (async () => {
        const rec = await pendingOf(person, s);
        assert.equal(rec.reason, "Duplicate.");
        assert.equal((await person.inbox({ status: "pending" })).items.some((r) => r.id === rec.id), true);
        return person.answer(rec.id, { expected: rec.revision, decision: "allow", scope: "once", reason: "fine" });
      })(),
    ]);
    assert.equal(o.kind, "ran");
    assert.equal(o.value, "refunded 12");
  });
});
