// An agent decider's review loop on the bus, against a real countersign's
// embedded NATS.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { pendingOf, session, startServer, TOKENS, type Server } from "./server.js";
import { Bus } from "../src/bus.js";

let srv: Server;
before(async () => {
  srv = await startServer();
});
after(async () => {
  await srv?.stop();
});

describe("review loop on the bus", () => {
  it("an agent decider reviews its subagent's calls in about ten lines", async () => {
    // The review loop, as a user writes it:
    const bus = await Bus.connect({ servers: srv.natsUrl, token: TOKENS.reviewer, tenant: "t1", agent: "agt_rev" });
    const loop = (async () => {
      for await (const review of bus.reviews()) {
        const small = Number(review.request.arguments.amount) <= 5000;
        await review.answer(small ? { decision: "allow", reason: "Small refund for a confirmed duplicate." } : { decision: "deny", reason: "Too large for me." });
      }
    })();

    const child = srv.client(TOKENS.child), person = srv.client(TOKENS.person);
    // A large refund: the reviewer's deny is final.
    const big = await child.run({ tool: "issue_refund", arguments: { amount: 9000 }, session: session("bus-big"), toolCallId: "c" }, () => assert.fail("ran"));
    assert.equal(big.kind, "denied");
    assert.match(big.message, /^countersign: denied by agent agt_rev with the note "Too large for me\." \(request req_\w+\); the call did not run$/);
    // A small one: the reviewer does not hold the capability, so its allow
    // endorses and the request goes up to the person.
    const s = session("bus-small");
    const running = child.run({ tool: "issue_refund", arguments: { amount: 100 }, session: s, toolCallId: "c" }, () => "ran");
    const up = await pendingOf(person, s);
    assert.equal(up.approver?.id, "u-1");
    assert.equal(up.endorsements[0]?.agent, "agt_rev");
    await person.answer(up.id, { expected: up.revision, decision: "allow" });
    assert.equal((await running).kind, "ran");
    await bus.close();
    await loop;
  });
});
