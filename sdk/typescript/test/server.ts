// A real countersign server for the tests: the binary built from this
// repository (scripts/test.mjs builds it; COUNTERSIGN_BIN names it), a
// temporary data dir, free ports, and a config with tokens for agents and
// a person.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, type ClientOptions, type RequestRecord } from "../src/index.js";

export const TOKENS = {
  agent: "tok-agent-a",
  person: "tok-person-u1",
  reviewer: "tok-agent-rev",
  child: "tok-agent-child",
  shortAgent: "tok-agent-b",
  shortPerson: "tok-person-u2",
};

const CONFIG = `
tenants:
  - id: t1
    request_timeout: 1h
    approval_ttl: 5m
    submit_rate: 1000
    submit_burst: 1000
    members:
      - id: u-1
        policy: {allow: ["*"], deny: ["tools.call:forbidden_*"]}
    agents:
      - {id: agt_a, member: u-1, role: "Does the work."}
      - {id: agt_rev, member: u-1, role: "Reviews small refunds.", review_timeout: 30s}
      - {id: agt_child, member: u-1, parent: agt_rev, brief: "Refund duplicate charges."}
    tokens:
      - {token: "${TOKENS.agent}", principal: "agent:agt_a", scopes: [requests:write]}
      - {token: "${TOKENS.person}", principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: "${TOKENS.reviewer}", principal: "agent:agt_rev", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: "${TOKENS.child}", principal: "agent:agt_child", scopes: [requests:write]}
  - id: t2
    approval_ttl: 1s
    members:
      - id: u-2
        policy: {allow: ["*"]}
    agents:
      - {id: agt_b, member: u-2}
    tokens:
      - {token: "${TOKENS.shortAgent}", principal: "agent:agt_b", scopes: [requests:write]}
      - {token: "${TOKENS.shortPerson}", principal: "person:u-2", scopes: [approvals:read, approvals:write]}
`;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface Server {
  url: string;
  natsUrl: string;
  client(token: string, opts?: ClientOptions): Client;
  stop(): Promise<void>;
  log(): string;
}

export async function startServer(): Promise<Server> {
  const bin = process.env.COUNTERSIGN_BIN;
  if (!bin) throw new Error("COUNTERSIGN_BIN is not set: run the tests with `npm test` (scripts/test.mjs builds the server)");
  const dir = mkdtempSync(join(tmpdir(), "countersign-sdk-"));
  writeFileSync(join(dir, "countersign.yaml"), CONFIG);
  const [http, nats] = [await freePort(), await freePort()];
  let out = "";
  const child: ChildProcess = spawn(
    bin,
    ["serve", "--config", join(dir, "countersign.yaml"), "--data", join(dir, "data"), "--listen", `127.0.0.1:${http}`, "--nats-listen", `127.0.0.1:${nats}`],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const url = `http://127.0.0.1:${http}`;
  const until = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error("countersign exited:\n" + out);
    try {
      if ((await fetch(url + "/readyz")).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) {
      child.kill("SIGKILL");
      throw new Error("countersign did not get ready:\n" + out);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    natsUrl: `nats://127.0.0.1:${nats}`,
    client: (token, opts) => new Client({ url, token, ...opts }),
    log: () => out,
    async stop() {
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until a pending request of session waits on the person, then answers it. */
export async function answerWhenPending(
  person: Client,
  session: string,
  answer: { decision: "allow" | "deny"; reason?: string; scope?: "once" | "session" | "lifetime"; arguments?: Record<string, unknown> },
): Promise<RequestRecord> {
  const until = Date.now() + 30_000;
  for (;;) {
    const page = await person.inbox({ status: "pending" });
    const rec = page.items.find((r) => r.session === session);
    if (rec) return person.answer(rec.id, { expected: rec.revision, ...answer });
    if (Date.now() > until) throw new Error(`no pending request of session ${session} reached the person`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits until a pending request of session exists, and returns it. */
export async function pendingOf(person: Client, session: string): Promise<RequestRecord> {
  const until = Date.now() + 30_000;
  for (;;) {
    const rec = (await person.inbox({ status: "pending" })).items.find((r) => r.session === session);
    if (rec) return rec;
    if (Date.now() > until) throw new Error(`no pending request of session ${session}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let n = 0;
/** A session id no other test uses. */
export function session(name: string): string {
  return `${name}-${process.pid}-${Date.now()}-${n++}`;
}
