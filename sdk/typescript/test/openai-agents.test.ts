// The OpenAI Agents SDK adapter, with the SDK's real Runner, a scripted
// model (a Model that answers from a script), and a real countersign.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Agent, Usage, setTracingDisabled, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import { z } from "zod";
import { Client } from "../src/index.js";
import { answerWhenPending, freePort, session, startServer, TOKENS, type Server } from "./server.js";
import { gatedTool, runGated } from "../src/openai-agents.js";

setTracingDisabled(true);

let srv: Server;
before(async () => {
  srv = await startServer();
});
after(async () => {
  await srv?.stop();
});

/** Calls issue_refund once, then says what the tool answered. */
class ScriptedModel implements Model {
  requests: ModelRequest[] = [];
  constructor(readonly args: Record<string, unknown>, readonly callId: string) {}
  async getResponse(req: ModelRequest): Promise<ModelResponse> {
    this.requests.push(req);
    const input = Array.isArray(req.input) ? req.input : [];
    const result = input.find((i) => (i as { type?: string }).type === "function_call_result") as { output?: unknown } | undefined;
    if (!result) {
      return {
        usage: new Usage(),
        output: [{ type: "function_call", callId: this.callId, name: "issue_refund", arguments: JSON.stringify(this.args), status: "completed" }],
      };
    }
    const out = result.output as { text?: string } | string;
    const text = typeof out === "string" ? out : (out.text ?? JSON.stringify(out));
    return { usage: new Usage(), output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "tool said: " + text }] }] };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not scripted");
  }
}

function setup(name: string, args: Record<string, unknown>, timeout?: string, agent = srv.client(TOKENS.agent)) {
  const person = srv.client(TOKENS.person);
  const s = session(name);
  const runs: unknown[] = [];
  const refund = gatedTool(agent, {
    name: "issue_refund",
    description: "Refund a payment",
    parameters: z.object({ payment_id: z.string(), amount: z.number() }),
    execute: (a: { payment_id: string; amount: number }) => {
      runs.push(a);
      return `refunded ${a.amount}`;
    },
    session: () => s,
    reason: "Duplicate charge.",
    timeout,
  });
  const model = new ScriptedModel(args, `call_${name}`);
  const a = new Agent({ name: "support", instructions: "Refund duplicates.", model, tools: [refund] });
  return { agent, person, s, runs, a, model };
}

describe("OpenAI Agents SDK", () => {
  it("an approved call runs once through the claim", async () => {
    const { agent, person, s, runs, a } = setup("oa-approved", { payment_id: "p1", amount: 10 });
    const [result] = await Promise.all([runGated(agent, a, "refund p1"), answerWhenPending(person, s, { decision: "allow", reason: "ok" })]);
    assert.deepEqual(runs, [{ payment_id: "p1", amount: 10 }]);
    assert.equal(result.finalOutput, "tool said: refunded 10");
    const rec = (await person.inbox({ status: "approved" })).items.find((r) => r.session === s);
    assert.ok(rec?.claimed_at, "the approval was claimed before the tool ran");
  });

  it("a denied call never runs, and the model reads the person's reason", async () => {
    const { agent, person, s, runs, a } = setup("oa-denied", { payment_id: "p2", amount: 10 });
    const [result] = await Promise.all([runGated(agent, a, "refund p2"), answerWhenPending(person, s, { decision: "deny", reason: "Not a duplicate." })]);
    assert.deepEqual(runs, []);
    assert.match(String(result.finalOutput), /^tool said: countersign: denied by person u-1 with the note "Not a duplicate\." \(request req_\w+\); the call did not run$/);
  });

  it("an expired request never runs and never reads as a no", async () => {
    const { agent, runs, a } = setup("oa-expired", { payment_id: "p3", amount: 10 }, "1s");
    const result = await runGated(agent, a, "refund p3");
    assert.deepEqual(runs, []);
    assert.match(String(result.finalOutput), /no decision was made in time .*nobody denied the call/);
  });

  it("an unreachable countersign never runs the call and never reads as a no", async () => {
    const down = new Client({ url: `http://127.0.0.1:${await freePort()}`, token: "x", connectRetriesMs: [10] });
    const { runs, a } = setup("oa-down", { payment_id: "p5", amount: 10 }, undefined, down);
    const result = await runGated(down, a, "refund p5");
    assert.deepEqual(runs, []);
    assert.match(String(result.finalOutput), /^tool said: countersign: approval could not be obtained: countersign could not be reached .*; nobody denied the call, and it did not run$/);
  });

  it("an edited approval runs the edited arguments", async () => {
    const { agent, person, s, runs, a } = setup("oa-edited", { payment_id: "p4", amount: 100 });
    const [result] = await Promise.all([
      runGated(agent, a, "refund p4"),
      answerWhenPending(person, s, { decision: "allow", arguments: { payment_id: "p4", amount: 40 } }),
    ]);
    assert.deepEqual(runs, [{ payment_id: "p4", amount: 40 }]);
    assert.equal(result.finalOutput, "tool said: refunded 40");
  });
});
