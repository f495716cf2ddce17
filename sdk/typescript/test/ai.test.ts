// The Vercel AI SDK adapter, with ai's generateText, its MockLanguageModelV3
// (ai/test) as the scripted model, and a real countersign.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { Client } from "../src/index.js";
import { answerWhenPending, freePort, session, startServer, TOKENS, type Server } from "./server.js";
import { gatedTool, generateGated } from "../src/ai.js";

let srv: Server;
before(async () => {
  srv = await startServer();
});
after(async () => {
  await srv?.stop();
});

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

/** Calls issue_refund once, then says what the tool result was. */
function scripted(args: Record<string, unknown>, toolCallId: string) {
  return new MockLanguageModelV3({
    doGenerate: async (opts) => {
      const results = opts.prompt.flatMap((m) => (m.role === "tool" ? m.content : [])).filter((p) => p.type === "tool-result");
      if (!results.length) {
        return { content: [{ type: "tool-call", toolCallId, toolName: "issue_refund", input: JSON.stringify(args) }], finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] };
      }
      const out = (results[0] as { output: { type: string; value?: unknown; reason?: string } }).output;
      const said = out.type === "execution-denied" ? `denied: ${out.reason}` : String(out.value);
      return { content: [{ type: "text", text: "tool said: " + said }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] };
    },
  });
}

function setup(name: string, args: Record<string, unknown>, timeout?: string, agent = srv.client(TOKENS.agent)) {
  const s = session(name);
  const runs: unknown[] = [];
  const issue_refund = gatedTool(agent, {
    name: "issue_refund",
    description: "Refund a payment",
    inputSchema: z.object({ payment_id: z.string(), amount: z.number() }),
    execute: (a: { payment_id: string; amount: number }) => {
      runs.push(a);
      return `refunded ${a.amount}`;
    },
    session: s,
    reason: "Duplicate charge.",
    timeout,
  });
  return { agent, person: srv.client(TOKENS.person), s, runs, tools: { issue_refund }, model: scripted(args, `tc_${name}`) };
}

describe("Vercel AI SDK", () => {
  it("an approved call runs once through the claim", async () => {
    const { agent, person, s, runs, tools, model } = setup("ai-approved", { payment_id: "p1", amount: 10 });
    const [{ result }] = await Promise.all([generateGated(agent, { model, tools, prompt: "refund p1" }), answerWhenPending(person, s, { decision: "allow" })]);
    assert.deepEqual(runs, [{ payment_id: "p1", amount: 10 }]);
    assert.equal(result.text, "tool said: refunded 10");
    const rec = (await person.inbox({ status: "approved" })).items.find((r) => r.session === s);
    assert.ok(rec?.claimed_at);
  });

  it("a denied call never runs, and the model reads the person's reason", async () => {
    const { agent, person, s, runs, tools, model } = setup("ai-denied", { payment_id: "p2", amount: 10 });
    const [{ result }] = await Promise.all([generateGated(agent, { model, tools, prompt: "refund p2" }), answerWhenPending(person, s, { decision: "deny", reason: "Not a duplicate." })]);
    assert.deepEqual(runs, []);
    assert.match(result.text, /^tool said: denied: countersign: denied by person u-1 with the note "Not a duplicate\." \(request req_\w+\); the call did not run$/);
  });

  it("an expired request never runs and never reads as a no", async () => {
    const { agent, runs, tools, model } = setup("ai-expired", { payment_id: "p3", amount: 10 }, "1s");
    const { result } = await generateGated(agent, { model, tools, prompt: "refund p3" });
    assert.deepEqual(runs, []);
    assert.match(result.text, /no decision was made in time .*nobody denied the call, and it did not run$/);
  });

  it("an unreachable countersign never runs the call and never reads as a no", async () => {
    const down = new Client({ url: `http://127.0.0.1:${await freePort()}`, token: "x", connectRetriesMs: [10] });
    const { runs, tools, model } = setup("ai-down", { payment_id: "p5", amount: 10 }, undefined, down);
    const { result } = await generateGated(down, { model, tools, prompt: "refund p5" });
    assert.deepEqual(runs, []);
    assert.match(result.text, /approval could not be obtained: countersign could not be reached .*; nobody denied the call, and it did not run$/);
  });

  it("an edited approval runs the edited arguments", async () => {
    const { agent, person, s, runs, tools, model } = setup("ai-edited", { payment_id: "p4", amount: 100 });
    const [{ result }] = await Promise.all([
      generateGated(agent, { model, tools, prompt: "refund p4" }),
      answerWhenPending(person, s, { decision: "allow", arguments: { payment_id: "p4", amount: 40 } }),
    ]);
    assert.deepEqual(runs, [{ payment_id: "p4", amount: 40 }]);
    assert.equal(result.text, "tool said: refunded 40");
  });
});
