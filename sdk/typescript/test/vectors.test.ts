// The shared test vectors (sdk/testdata, SPEC §15): the same calls, canonical
// forms, digests and outcome messages the Go and Python tests check.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { canonicalBinding, callDigest, parseJSON, message, idempotencyKey, type CallBinding, type RequestRecord, type OutcomeKind } from "../src/index.js";

const dir = fileURLToPath(new URL("../../../testdata/", import.meta.url));

describe("digest vectors", () => {
  const file = JSON.parse(readFileSync(dir + "digests.json", "utf8")) as {
    vectors: { name: string; binding: CallBinding; canonical: string; call_digest: string }[];
    invalid?: { name: string; arguments: string }[];
  };
  it("has vectors", () => assert.ok(file.vectors.length > 0));
  for (const v of file.vectors) {
    it(v.name, () => {
      assert.equal(canonicalBinding(v.binding), v.canonical);
      assert.equal(callDigest(v.binding), v.call_digest);
      // The canonical text reads back strictly and canonicalizes to itself.
      assert.equal(canonicalBinding(parseJSON(v.canonical) as unknown as CallBinding), v.canonical);
    });
  }
  for (const v of file.invalid ?? []) {
    it(`refuses: ${v.name}`, () => assert.throws(() => parseJSON(v.arguments)));
  }
});

describe("outcome vectors", () => {
  const path = dir + "outcomes.json";
  const own = [
    {
      name: "denied by a person with a note",
      kind: "denied" as OutcomeKind,
      request: { id: "req_1", status: "denied", deadline_at: "2026-09-16T12:30:00Z", decision: { status: "denied", by: { kind: "person", id: "u-1" }, note: 'Not a "duplicate".', decided_at: "2026-09-16T12:01:00Z" } },
      message: 'countersign: denied by person u-1 with the note "Not a \\"duplicate\\"." (request req_1); the call did not run',
    },
    {
      name: "expired",
      kind: "expired" as OutcomeKind,
      request: { id: "req_2", status: "expired", deadline_at: "2026-09-16T12:30:00.123456Z", decision: { status: "expired", by: { kind: "deadline" }, decided_at: "2026-09-16T12:30:00Z" } },
      message: "countersign: no decision was made in time (request req_2) before its deadline 2026-09-16T12:30:00Z; nobody denied the call, and it did not run",
    },
    {
      name: "approved by a rule",
      kind: "ran" as OutcomeKind,
      request: { id: "req_3", status: "approved", decision: { status: "approved", by: { kind: "rule", id: "rul_1" }, quoted_rule: "Refunds under 50 GBP may be issued.\u202e", decided_at: "2026-09-16T12:01:00Z", expires_at: "2026-09-16T12:06:00Z" } },
      message: 'countersign: approved by the rule "Refunds under 50 GBP may be issued.\\u202e" (request req_3); the approval is claimed for this call',
    },
  ];
  const shared = (JSON.parse(readFileSync(path, "utf8")) as { vectors: typeof own }).vectors;
  it("has the shared vectors", () => assert.ok(shared.length >= 6));
  for (const v of [...own, ...shared]) {
    it(v.name, () => {
      const cause = (v as { cause?: string | null }).cause ?? undefined;
      assert.equal(message(v.kind, v.request as unknown as RequestRecord, cause, (v as { abandoned?: boolean }).abandoned), v.message);
    });
  }
});

describe("idempotency key vectors", () => {
  const file = JSON.parse(readFileSync(dir + "idempotency.json", "utf8")) as {
    vectors: { session: string; tool_call_id: string; idempotency_key: string }[];
  };
  it("has vectors", () => assert.ok(file.vectors.length > 0));
  for (const v of file.vectors) {
    it(`${JSON.stringify(v.session)} ${JSON.stringify(v.tool_call_id)}`, () => {
      assert.equal(idempotencyKey({ session: v.session, tool_call_id: v.tool_call_id }), v.idempotency_key);
    });
  }
  it("is fresh without a session or a tool call id", () => {
    assert.notEqual(idempotencyKey({ session: "s" }), idempotencyKey({ session: "s" }));
    assert.notEqual(idempotencyKey({ tool_call_id: "c" }), idempotencyKey({ tool_call_id: "c" }));
  });
});
