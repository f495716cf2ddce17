// The LangGraph adapter, with a real StateGraph, its MemorySaver
// checkpointer, a scripted model node, and a real countersign.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { Client } from "../src/index.js";
import { answerWhenPending, freePort, pendingOf, session, startServer, TOKENS, type Server } from "./server.js";
import { countersignToolNode, resumeGated } from "../src/langgraph.js";

let srv: Server;
before(async () => {
  srv = await startServer();
});
after(async () => {
  await srv?.stop();
});

/** The scripted model: one tool call, then it repeats what the tool said. */
function model(args: Record<string, unknown>, id: string) {
  return async (state: { messages: BaseMessage[] }) => {
    const last = state.messages[state.messages.length - 1]!;
    if (last.getType() === "tool") return { messages: [new AIMessage("tool said: " + String(last.content))] };
    return { messages: [new AIMessage({ content: "", tool_calls: [{ id, name: "issue_refund", args, type: "tool_call" }] })] };
  };
}

function build(client: Client, runs: unknown[], args: Record<string, unknown>, id: string, checkpointer: MemorySaver, timeout?: string) {
  const issue_refund = tool(
    async (a: { payment_id: string; amount: number }) => {
      runs.push(a);
      return `refunded ${a.amount}`;
    },
    { name: "issue_refund", description: "Refund a payment", schema: z.object({ payment_id: z.string(), amount: z.number() }) },
  );
  return new StateGraph(MessagesAnnotation)
    .addNode("model", model(args, id))
    .addNode("tools", countersignToolNode(client, [issue_refund], { timeout }))
    .addEdge(START, "model")
    .addConditionalEdges("model", (s) => ((s.messages[s.messages.length - 1] as AIMessage).tool_calls?.length ? "tools" : END))
    .addEdge("tools", "model")
    .compile({ checkpointer });
}

const lastText = (r: unknown) => {
  const m = (r as { messages: BaseMessage[] }).messages;
  return String(m[m.length - 1]!.content);
};

describe("LangGraph", () => {
  it("an approved call runs once, resumed in a new process from the checkpointer", async () => {
    const checkpointer = new MemorySaver();
    const thread = session("lg-approved");
    const config = { configurable: { thread_id: thread } };
    const runs: unknown[] = [];
    // The first process runs until the tool node interrupts, then is gone.
    const first = build(srv.client(TOKENS.agent), runs, { payment_id: "p1", amount: 10 }, "tc-1", checkpointer);
    const stopped = (await first.invoke({ messages: [new HumanMessage("refund p1")] }, config)) as Record<string, unknown>;
    assert.ok(stopped.__interrupt__, "the graph stopped at countersign's interrupt");
    const rec = await pendingOf(srv.client(TOKENS.person), thread);
    // A new process: a new client and graph, the same checkpointer.
    const second = build(srv.client(TOKENS.agent), runs, { payment_id: "p1", amount: 10 }, "tc-1", checkpointer);
    const [result] = await Promise.all([resumeGated(srv.client(TOKENS.agent), second, null, config), answerWhenPending(srv.client(TOKENS.person), thread, { decision: "allow" })]);
    assert.deepEqual(runs, [{ payment_id: "p1", amount: 10 }]);
    assert.equal(lastText(result), "tool said: refunded 10");
    const done = await srv.client(TOKENS.agent).get(rec.id);
    assert.ok(done.claimed_at, "the same request's approval was claimed");
  });

  it("a denied call never runs, and the model reads the person's reason", async () => {
    const thread = session("lg-denied");
    const runs: unknown[] = [];
    const g = build(srv.client(TOKENS.agent), runs, { payment_id: "p2", amount: 10 }, "tc-2", new MemorySaver());
    const [result] = await Promise.all([
      resumeGated(srv.client(TOKENS.agent), g, { messages: [new HumanMessage("refund p2")] }, { configurable: { thread_id: thread } }),
      answerWhenPending(srv.client(TOKENS.person), thread, { decision: "deny", reason: "Not a duplicate." }),
    ]);
    assert.deepEqual(runs, []);
    assert.match(lastText(result), /^tool said: countersign: denied by person u-1 with the note "Not a duplicate\." \(request req_\w+\); the call did not run$/);
  });

  it("an expired request never runs and never reads as a no", async () => {
    const runs: unknown[] = [];
    const g = build(srv.client(TOKENS.agent), runs, { payment_id: "p3", amount: 10 }, "tc-3", new MemorySaver(), "1s");
    const result = await resumeGated(srv.client(TOKENS.agent), g, { messages: [new HumanMessage("refund p3")] }, { configurable: { thread_id: session("lg-expired") } });
    assert.deepEqual(runs, []);
    assert.match(lastText(result), /no decision was made in time .*nobody denied the call/);
  });

  it("an unreachable countersign never runs the call and never reads as a no", async () => {
    const down = new Client({ url: `http://127.0.0.1:${await freePort()}`, token: "x", connectRetriesMs: [10] });
    const runs: unknown[] = [];
    const g = build(down, runs, { payment_id: "p4", amount: 10 }, "tc-4", new MemorySaver());
    const result = await resumeGated(down, g, { messages: [new HumanMessage("refund p4")] }, { configurable: { thread_id: session("lg-down") } });
    assert.deepEqual(runs, []);
    assert.match(lastText(result), /approval could not be obtained: countersign could not be reached .*nobody denied the call, and it did not run$/);
  });

  it("an edited approval runs the edited arguments", async () => {
    const thread = session("lg-edited");
    const runs: unknown[] = [];
    const g = build(srv.client(TOKENS.agent), runs, { payment_id: "p5", amount: 100 }, "tc-5", new MemorySaver());
    const [result] = await Promise.all([
      resumeGated(srv.client(TOKENS.agent), g, { messages: [new HumanMessage("refund p5")] }, { configurable: { thread_id: thread } }),
      answerWhenPending(srv.client(TOKENS.person), thread, { decision: "allow", arguments: { payment_id: "p5", amount: 40 } }),
    ]);
    assert.deepEqual(runs, [{ payment_id: "p5", amount: 40 }]);
    assert.equal(lastText(result), "tool said: refunded 40");
  });
});
