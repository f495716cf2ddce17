// @countersign/sdk: hold an AI agent's tool call until countersign decides,
// then run it once, with the approved arguments (SPEC §15).
export { Client, idempotencyKey, approvedAtSubmit } from "./client.js";
export type { ClientOptions, RunOptions, RunContext, ToolFn, Approved, GuardOptions, GuardCallOptions } from "./client.js";
export { CountersignError, BadResponseError } from "./errors.js";
export { canonicalize, canonicalBinding, callDigest, parseJSON, sha256, CanonicalError } from "./jcs.js";
export type { CallBinding, Json } from "./jcs.js";
export { message } from "./words.js";
export type * from "./types.js";
