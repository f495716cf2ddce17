// The MCP client adapter, with the MCP TypeScript SDK's real client and
// server over its in-memory transport, a scripted caller, and a real
// countersign.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { z } from "zod";
import { Client } from "../src/index.js";
import { answerWhenPending, freePort, session, startServer, TOKENS, type Server } from "./server.js";
import { gateMcpClient } from "../src/mcp.js";

let srv: Server;
before(async () => {
  srv = await startServer();
});
after(async () => {
  await srv?.stop();
});

async function setup(name: string, agent = srv.client(TOKENS.agent), timeout?: string) {
  const runs: unknown[] = [];
  const server = new McpServer({ name: "payments", version: "1.0.0" });
  server.registerTool("issue_refund", { description: "Refund a payment", inputSchema: { payment_id: z.string(), amount: z.number() } }, async (a) => {
    runs.push(a);
    return { content: [{ type: "text", text: `refunded ${a.amount}` }] };
  });
  const [ct, st] = InMemoryTransport.createLinkedPair();
  await server.connect(st);
  const mcp = new McpClient({ name: "agent", version: "1.0.0" });
  await mcp.connect(ct);
  const s = session(name);
  return { runs, s, person: srv.client(TOKENS.person), mcp: gateMcpClient(agent, mcp, { session: s, timeout }), close: () => mcp.close() };
}

const text = (r: unknown) => ((r as { content: { text: string }[] }).content[0]!.text);

describe("MCP client", () => {
  it("an approved call runs once, with the reason the agent gave", async () => {
    const { runs, s, person, mcp, close } = await setup("mcp-approved");
    const [r, rec] = await Promise.all([
      mcp.callTool({ name: "issue_refund", arguments: { payment_id: "p1", amount: 10, countersign_reason: "Duplicate." } }),
      answerWhenPending(person, s, { decision: "allow" }),
    ]);
    assert.equal(text(r), "refunded 10");
    assert.deepEqual(runs, [{ payment_id: "p1", amount: 10 }]);
    assert.equal(rec.reason, "Duplicate.");
    assert.deepEqual(rec.arguments, { payment_id: "p1", amount: 10 });
    assert.ok((await srv.client(TOKENS.agent).get(rec.id)).claimed_at, "the approval was claimed before the tool ran");
    await close();
  });

  it("a denied call never runs, and the caller reads the person's reason", async () => {
    const { runs, s, person, mcp, close } = await setup("mcp-denied");
    const [r] = await Promise.all([mcp.callTool({ name: "issue_refund", arguments: { payment_id: "p2", amount: 10 } }), answerWhenPending(person, s, { decision: "deny", reason: "No." })]);
    assert.equal((r as { isError?: boolean }).isError, true);
    assert.match(text(r), /^countersign: denied by person u-1 with the note "No\." \(request req_\w+\); the call did not run$/);
    assert.deepEqual(runs, []);
    await close();
  });

  it("an unreachable countersign never runs the call and never reads as a no", async () => {
    const down = new Client({ url: `http://127.0.0.1:${await freePort()}`, token: "x", connectRetriesMs: [10] });
    const { runs, mcp, close } = await setup("mcp-down", down);
    const r = await mcp.callTool({ name: "issue_refund", arguments: { payment_id: "p3", amount: 10 } });
    assert.match(text(r), /^countersign: approval could not be obtained: .*nobody denied the call, and it did not run$/);
    assert.deepEqual(runs, []);
    await close();
  });

  it("an expired request never runs and never reads as a no", async () => {
    const { runs, mcp, close } = await setup("mcp-expired", srv.client(TOKENS.agent), "1s");
    const r = await mcp.callTool({ name: "issue_refund", arguments: { payment_id: "p4", amount: 10 } });
    assert.match(text(r), /no decision was made in time .*nobody denied the call/);
    assert.deepEqual(runs, []);
    await close();
  });

  it("an edited approval runs the edited arguments", async () => {
    const { runs, s, person, mcp, close } = await setup("mcp-edited");
    const [r] = await Promise.all([
      mcp.callTool({ name: "issue_refund", arguments: { payment_id: "p5", amount: 100 } }),
      answerWhenPending(person, s, { decision: "allow", arguments: { payment_id: "p5", amount: 40 } }),
    ]);
    assert.equal(text(r), "refunded 40");
    assert.deepEqual(runs, [{ payment_id: "p5", amount: 40 }]);
    await close();
  });
});
