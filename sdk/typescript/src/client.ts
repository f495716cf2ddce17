// The agent side of countersign, after the Go adapter (adapter/do.go): hold
// one tool call until there is a decision, and run it at most once, only
// with a valid approval for exactly this call, claimed right before.
import { createHash, randomUUID } from "node:crypto";
import { callDigest, canonicalize } from "./jcs.js";
import { parseDuration, seconds } from "./duration.js";
import { BadResponseError, CountersignError } from "./errors.js";
import { message, parseTime } from "./words.js";
import type { AnswerBody, Call, Outcome, RequestRecord, Submission } from "./types.js";

export interface ClientOptions {
  /** the server, e.g. http://127.0.0.1:8080; default COUNTERSIGN_URL, else http://127.0.0.1:8080 */
  url?: string;
  /** the bearer token (an agent's, to submit); default COUNTERSIGN_TOKEN */
  token?: string;
  /**
   * how long one call may wait for a decision, e.g. the harness's limit on a
   * tool call. The requested timeout fits inside it with a margin. Default:
   * no limit of the client's own (the request's deadline bounds the wait).
   */
  waitLimitMs?: number;
  /** kept back inside the wait limit to fetch the final state and cancel (default 15 s, at most a quarter of the limit) */
  marginMs?: number;
  /** one long poll's wait (default 30 s; the server caps 60 s) */
  pollWaitMs?: number;
  /** bounds one submit, claim or cancel round trip (default 15 s) */
  requestTimeoutMs?: number;
  /** bounds the best-effort cancel of an abandoned call (default 5 s) */
  cancelTimeoutMs?: number;
  /** how long a submit that gets no answer is retried (default 30 s) */
  unreachableMs?: number;
  /** waits before each retry of a submit whose connection was refused (default about 9.5 s in all) */
  connectRetriesMs?: number[];
  /** the fetch to use (default globalThis.fetch) */
  fetch?: typeof fetch;
}

export interface RunOptions {
  /** abandoning the call: cancels the pending request */
  signal?: AbortSignal;
  /**
   * whether fn can run with arguments a person edited (default true). With
   * false, an approval with edits does not run (unavailable).
   */
  acceptEdits?: boolean;
}

/** What fn gets besides the approved arguments. */
export interface RunContext {
  /** the claimed record */
  request: RequestRecord;
  /** whether the arguments are a person's edit of the call */
  edited: boolean;
  signal?: AbortSignal;
}

export type ToolFn<A, T> = (args: A, ctx: RunContext) => T | Promise<T>;

/** An approved, not yet claimed request: what Client.decide answers for a yes. */
export interface Approved {
  kind: "approved";
  request: RequestRecord;
  /** the arguments the call will run with (a person's edits, if any) */
  arguments: Record<string, unknown>;
  message: string;
}

/** Options for the requests guard submits; per-call ids come with each call. */
export type GuardOptions = Omit<Call, "tool" | "arguments" | "idempotencyKey">;
export type GuardCallOptions = Omit<Call, "tool" | "arguments" | "capability"> & RunOptions;

const DEFAULTS = {
  marginMs: 15_000,
  pollWaitMs: 30_000,
  requestTimeoutMs: 15_000,
  cancelTimeoutMs: 5_000,
  unreachableMs: 30_000,
  connectRetriesMs: [500, 1000, 2000, 3000, 3000],
  backoffMinMs: 100,
  backoffMaxMs: 5000,
};

/** The Idempotency-Key of a call (sdk/testdata/idempotency.json): derived from its session and tool call id when it has both, fresh otherwise. */
export function idempotencyKey(call: Pick<Call, "session" | "tool_call_id" | "toolCallId" | "idempotencyKey">): string {
  if (call.idempotencyKey) return call.idempotencyKey;
  const toolCallId = call.tool_call_id ?? call.toolCallId ?? "";
  if (!call.session || !toolCallId) return randomUUID();
  const h = createHash("sha256").update(canonicalize({ session: call.session, tool_call_id: toolCallId }), "utf8");
  return "countersign-" + h.digest("hex");
}

/**
 * Whether a submit's answer is an approval made at submit (member policy
 * aside, by a read rule, a grant or a rule: SPEC §2 steps 2–4), which no
 * decider was asked for. Such a call needs no approval round in a framework;
 * the answer stays the same for the same call, so a framework that asks again
 * gets the same answer.
 */
export function approvedAtSubmit(rec: RequestRecord | Outcome<never>): boolean {
  return "status" in rec && rec.status === "approved" && rec.approver === null;
}

/** The client of one token: an agent submitting calls, or a decider answering them. */
export class Client {
  readonly url: string;
  readonly #token: string;
  readonly #fetch: typeof fetch;
  readonly #o: typeof DEFAULTS & { waitLimitMs?: number };

  constructor(opts: ClientOptions = {}) {
    const url = (opts.url ?? process.env.COUNTERSIGN_URL ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new TypeError(`countersign: server URL ${JSON.stringify(url)}: want http(s)://host[:port]`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new TypeError(`countersign: server URL ${JSON.stringify(url)}: want http(s)://host[:port]`);
    const token = opts.token ?? process.env.COUNTERSIGN_TOKEN ?? "";
    if (!token) throw new TypeError("countersign: no token (set COUNTERSIGN_TOKEN or pass token)");
    this.url = url;
    this.#token = token;
    this.#fetch = opts.fetch ?? globalThis.fetch;
    const o = { ...DEFAULTS };
    for (const k of Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]) {
      const v = (opts as Record<string, unknown>)[k];
      if (v !== undefined) (o as Record<string, unknown>)[k] = v;
    }
    this.#o = { ...o, waitLimitMs: opts.waitLimitMs };
  }

  /**
   * Asks countersign whether call may run, waits for the decision, and runs
   * fn at most once: only when the request is approved, the approval has not
   * expired by the server's clock, its call_digest is this very call's, and
   * the claim succeeded right before. fn gets the approved arguments (a
   * person's edits after an approval with edits). A "no", an expiry or an
   * outage is an Outcome, never an exception; fn's own exception propagates.
   */
  async run<T, A extends Record<string, unknown> = Record<string, unknown>>(
    call: Call,
    fn: ToolFn<A, T>,
    opts: RunOptions = {},
  ): Promise<Outcome<T>> {
    const w = new Waiter(this, this.#o, call, opts);
    const got = await w.settle();
    if (got.kind !== "approved") return got as Outcome<T>;
    return w.use(got, fn);
  }

  /**
   * Submits call and waits for its decision without claiming it: an
   * Approved, or the Outcome of a call that will not run. For integrations
   * whose framework asks first and runs later; the run goes through run()
   * with the same call (the same Idempotency-Key finds the same request),
   * which claims.
   */
  async decide(call: Call, opts: RunOptions = {}): Promise<Approved | Outcome<never>> {
    const w = new Waiter(this, this.#o, call, opts);
    try {
      const got = await w.settle();
      return got.kind === "approved" ? w.check(got.request) : got;
    } finally {
      w.done();
    }
  }

  /**
   * Submits call (with its derived Idempotency-Key) without waiting: the
   * record as the submit answered it (terminal when policy, a read rule, a
   * grant or a rule decided at once), or the unavailable Outcome.
   */
  async submit(call: Call, opts: RunOptions = {}): Promise<RequestRecord | Outcome<never>> {
    const w = new Waiter(this, this.#o, call, opts);
    try {
      return await w.submit();
    } catch (e) {
      return w.giveUp(null, e);
    } finally {
      w.done();
    }
  }

  /**
   * fn gated by countersign: each call of the returned function asks for
   * tools.call:<tool> with args as the arguments and runs fn only with a
   * valid, claimed approval. It resolves to the Outcome.
   */
  guard<A extends Record<string, unknown>, T>(tool: string, fn: ToolFn<A, T>, defaults: GuardOptions = {}) {
    return (args: A, opts: GuardCallOptions = {}): Promise<Outcome<T>> => {
      const { signal, acceptEdits, ...call } = opts;
      return this.run<T, A>({ ...defaults, ...call, tool, arguments: args }, fn, { signal, acceptEdits });
    };
  }

  // ---- decider side ----

  /** The caller's inbox: requests waiting on it, and those it answered or endorsed. */
  async inbox(filter: { status?: string; agent?: string; limit?: number; cursor?: string } = {}): Promise<{ items: RequestRecord[]; next_cursor?: string }> {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(filter)) if (v !== undefined) q.set(k, String(v));
    const qs = q.toString();
    const { body } = await this.request("GET", "/v1/requests" + (qs ? "?" + qs : ""));
    return body as { items: RequestRecord[]; next_cursor?: string };
  }

  /** Reads one request; wait long-polls until it is terminal (ms, at most 60 s). */
  async get(id: string, opts: { waitMs?: number; signal?: AbortSignal } = {}): Promise<RequestRecord> {
    const wait = opts.waitMs ? "?wait=" + seconds(Math.max(opts.waitMs, 1000)) : "";
    return (await this.request("GET", `/v1/requests/${encodeURIComponent(id)}${wait}`, undefined, { signal: opts.signal })).body as RequestRecord;
  }

  /** Answers a request as the caller (POST /v1/requests/{id}); throws CountersignError when refused. */
  async answer(id: string, a: AnswerBody): Promise<RequestRecord> {
    return (await this.request("POST", `/v1/requests/${encodeURIComponent(id)}`, a)).body as RequestRecord;
  }

  /** Cancels a pending request of the caller's. */
  async cancel(id: string): Promise<RequestRecord> {
    return (await this.request("POST", `/v1/requests/${encodeURIComponent(id)}/cancel`, {})).body as RequestRecord;
  }

  /** Cancels every pending request of the caller with this turn; the ids cancelled. */
  async cancelTurn(turn: string): Promise<string[]> {
    const { body } = await this.request("POST", `/v1/turns/${encodeURIComponent(turn)}/cancel`, {});
    return (body as { cancelled: string[] }).cancelled;
  }

  /**
   * One HTTP round trip: the parsed body of a 2xx answer and its Date
   * header; a CountersignError for any other status.
   */
  async request(
    method: string,
    path: string,
    body?: unknown,
    opts: { signal?: AbortSignal; headers?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<{ status: number; body: unknown; date: string | null; sent: number }> {
    const headers: Record<string, string> = { Authorization: "Bearer " + this.#token, Accept: "application/json", ...opts.headers };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const signals = [AbortSignal.timeout(opts.timeoutMs ?? this.#o.requestTimeoutMs)];
    if (opts.signal) signals.push(opts.signal);
    const sent = Date.now();
    const resp = await this.#fetch(this.url + path, {
      method,
      headers,
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      signal: AbortSignal.any(signals),
    });
    const date = resp.headers.get("date");
    const text = await resp.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (resp.status < 200 || resp.status > 299) {
      const ra = Number(resp.headers.get("retry-after"));
      const err = new CountersignError(resp.status, (parsed as object) ?? {}, Number.isFinite(ra) && ra > 0 ? ra * 1000 : 0);
      (err as { date?: string | null }).date = date;
      (err as { sent?: number }).sent = sent;
      throw err;
    }
    if (parsed === undefined) throw new TransientError(`a ${resp.status} answer with a body that is not JSON`);
    return { status: resp.status, body: parsed, date, sent };
  }
}

// ---- one call ----

/** A failure that may go away on retry (a truncated or unreadable answer). */
class TransientError extends Error {}
/** The wait ended because its signal fired: the caller's, or the wait limit. */
class Stopped extends Error {
  constructor(readonly last?: unknown) {
    super("stopped waiting");
  }
}
/** A cause of not running, with the words the outcome carries. */
class Cause extends Error {
  constructor(
    readonly kind: "unavailable" | "approval_expired",
    msg: string,
  ) {
    super(msg);
  }
}

const REFUSED = "countersign refused the request";
const UNREACHABLE = "countersign could not be reached";
const WAIT_LIMIT = "the wait limit passed before a decision";

function transient(e: unknown): boolean {
  if (e instanceof CountersignError) return e.transient;
  return !(e instanceof BadResponseError) && !(e instanceof Cause) && !(e instanceof Stopped);
}

function retryAfter(e: unknown): number {
  return e instanceof CountersignError ? Math.min(e.retryAfterMs, 30_000) : 0;
}

function connectFailed(e: unknown): boolean {
  const code = (e as { cause?: { code?: string } })?.cause?.code;
  return code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EHOSTUNREACH" || code === "ENETUNREACH";
}

function describe(e: unknown): string {
  if (e instanceof CountersignError || e instanceof BadResponseError || e instanceof Cause) return e.message;
  const err = e as { message?: string; cause?: { message?: string; code?: string } };
  const cause = err?.cause?.message ?? err?.cause?.code;
  return cause ? `${err.message}: ${cause}` : String(err?.message ?? e);
}

/** refused turns a final failure into the words of a refusal. */
function refused(e: unknown): Error {
  if (e instanceof CountersignError && !e.transient) return new Cause("unavailable", `${REFUSED}: ${e.message}`);
  if (e instanceof BadResponseError) return new Cause("unavailable", e.message);
  return e as Error;
}

/** The server's clock, learned from Date headers (adapter/clock.go): the latest it can read. */
class ServerClock {
  #hi: number | undefined;
  observe(sent: number, date: string | null | undefined) {
    if (!date) return;
    const d = Date.parse(date);
    if (Number.isNaN(d)) return;
    const bound = d + 1000 - sent;
    if (this.#hi === undefined || bound < this.#hi) this.#hi = bound;
  }
  now(): number {
    return Date.now() + (this.#hi ?? 0);
  }
  until(t: string): number {
    return parseTime(t) - this.now();
  }
}

class Backoff {
  #n = 0;
  constructor(
    readonly min: number,
    readonly max: number,
  ) {}
  next(hint = 0): number {
    let d = this.max;
    if (this.#n < 30 && this.min * 2 ** this.#n < this.max) d = this.min * 2 ** this.#n;
    this.#n++;
    d = d / 2 + Math.random() * (d / 2);
    return Math.max(d, hint);
  }
  reset() {
    this.#n = 0;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Stopped());
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new Stopped());
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

const TERMINAL = new Set(["approved", "denied", "expired", "cancelled"]);

class Waiter {
  readonly clock = new ServerClock();
  readonly body: Submission;
  readonly key: string;
  readonly user?: AbortSignal;
  /** fires at the wait limit or when the caller abandons the call */
  wait: AbortSignal;
  #limit = new AbortController();
  #timer?: NodeJS.Timeout;
  last: unknown;
  readonly toolCallId: string;

  constructor(
    readonly c: Client,
    readonly o: typeof DEFAULTS & { waitLimitMs?: number },
    readonly call: Call,
    readonly opts: RunOptions,
  ) {
    this.user = opts.signal;
    this.toolCallId = call.tool_call_id ?? call.toolCallId ?? "";
    this.key = idempotencyKey(call);
    this.body = this.#body();
    this.wait = opts.signal ? AbortSignal.any([opts.signal, this.#limit.signal]) : this.#limit.signal;
  }

  /** the submit body, its timeout fitted inside the wait limit (adapter/do.go plan) */
  #body(): Submission {
    const c = this.call;
    if (!c.tool === !c.capability) throw new TypeError("countersign: give a call's tool or its capability, not both");
    if (typeof c.arguments !== "object" || c.arguments === null || Array.isArray(c.arguments))
      throw new TypeError("countersign: a call's arguments must be a JSON object");
    canonicalize(c.arguments); // refuses what has no canonical form
    let timeout = c.timeout;
    const requested = timeout === undefined ? 0 : parseDuration(timeout);
    if (timeout !== undefined && !(requested >= 1000)) throw new TypeError(`countersign: timeout ${JSON.stringify(timeout)}: want a Go duration of at least 1s`);
    const limit = this.o.waitLimitMs;
    if (limit && limit > 0) {
      const m = Math.min(this.o.marginMs, limit / 4);
      const t = Math.max(Math.floor((limit - m) / 1000) * 1000, 1000);
      if (!(requested > 0 && requested < t)) timeout = seconds(t);
    }
    const b: Submission = { arguments: c.arguments };
    if (c.tool) b.tool = c.tool;
    if (c.capability) b.capability = c.capability;
    if (timeout !== undefined) b.timeout = timeout;
    if (c.reason) b.reason = c.reason;
    if (c.session) b.session = c.session;
    if (c.turn) b.turn = c.turn;
    if (this.toolCallId) b.tool_call_id = this.toolCallId;
    if (c.subject) b.subject = c.subject;
    if (c.connection) b.connection = c.connection;
    return b;
  }

  #arm(ms: number) {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#limit.abort(), Math.max(ms, 1));
    this.#timer.unref?.();
  }

  done() {
    clearTimeout(this.#timer);
  }

  async exchange(method: string, path: string, body?: unknown, headers?: Record<string, string>, timeoutMs?: number, signal: AbortSignal = this.wait) {
    try {
      const r = await this.c.request(method, path, body, { signal, headers, timeoutMs });
      this.clock.observe(r.sent, r.date);
      return r;
    } catch (e) {
      const se = e as { date?: string; sent?: number };
      if (se?.sent) this.clock.observe(se.sent, se.date);
      if (signal.aborted) throw new Stopped(this.last);
      throw e;
    }
  }

  /** submits and waits for a terminal record; the outcome of a call that will not run otherwise */
  async settle(): Promise<Approved | Outcome<never>> {
    let rec: RequestRecord | null = null;
    try {
      if (this.o.waitLimitMs && this.o.waitLimitMs > 0) {
        const m = Math.min(this.o.marginMs, this.o.waitLimitMs / 4);
        this.#arm(this.o.waitLimitMs - m / 2);
      }
      rec = await this.submit();
      if (!(this.o.waitLimitMs && this.o.waitLimitMs > 0) && !TERMINAL.has(rec.status)) {
        this.#arm(this.clock.until(rec.deadline_at) + this.o.marginMs / 2);
      }
      rec = await this.await(rec, (r) => (rec = r));
    } catch (e) {
      this.done();
      return this.giveUp(rec, e);
    }
    switch (rec.status) {
      case "approved": {
        const args = rec.edited ? rec.arguments : this.call.arguments;
        return { kind: "approved", request: rec, arguments: args, message: message("ran", rec) };
      }
      case "denied":
      case "expired":
      case "cancelled":
        this.done();
        return { kind: rec.status, message: message(rec.status, rec), request: rec };
    }
    this.done();
    return this.outcome("unavailable", rec, `countersign answered nonsense: status ${JSON.stringify(rec.status)}`);
  }

  outcome(kind: Outcome["kind"], rec: RequestRecord | null, cause?: string, abandoned?: boolean): Outcome<never> {
    const o: Outcome<never> = { kind, message: message(kind, rec, cause, abandoned), request: rec };
    if (cause) o.cause = cause;
    return o;
  }

  /** what to report when the wait ended without a terminal record */
  async giveUp(rec: RequestRecord | null, e: unknown): Promise<Outcome<never>> {
    const abandoned = this.user?.aborted === true;
    let cause: string;
    if (e instanceof Stopped) {
      const last = e.last ?? this.last;
      cause = abandoned ? "the call was abandoned" : last ? `${WAIT_LIMIT}; ${UNREACHABLE}: ${describe(last)}` : WAIT_LIMIT;
    } else if (e instanceof Cause) cause = e.message;
    else if (e instanceof TypeError && !(e as { cause?: unknown }).cause) throw e;
    else cause = describe(refused(e));
    if (rec && !TERMINAL.has(rec.status)) {
      try {
        rec = await this.cancel(rec.id);
      } catch {
        // best effort: the request expires at its (shortened) deadline
      }
    }
    if (abandoned) return this.outcome("cancelled", rec, cause, true);
    return this.outcome("unavailable", rec, cause);
  }

  /** posts the call with its Idempotency-Key until the server answers (adapter/requests.go submit) */
  async submit(): Promise<RequestRecord> {
    const until = Date.now() + this.o.unreachableMs;
    const bo = new Backoff(this.o.backoffMinMs, this.o.backoffMaxMs);
    let dials = 0;
    for (;;) {
      try {
        const r = await this.exchange("POST", "/v1/requests", this.body, { "Idempotency-Key": this.key });
        this.last = undefined;
        return decodeRecord(r.body, "");
      } catch (e) {
        if (e instanceof Stopped) throw e;
        if (!transient(e)) throw refused(e);
        this.last = e;
        let delay = bo.next(retryAfter(e));
        if (connectFailed(e)) {
          dials++;
          if (dials > this.o.connectRetriesMs.length) throw new Cause("unavailable", `${UNREACHABLE} (${dials} connection attempts): ${describe(e)}`);
          delay = this.o.connectRetriesMs[dials - 1]!;
        } else dials = 0;
        if (Date.now() + delay >= until) throw new Cause("unavailable", `${UNREACHABLE} (for ${seconds(this.o.unreachableMs)}): ${describe(e)}`);
        await sleep(delay, this.wait);
      }
    }
  }

  /** long-polls until rec is terminal; seen gets each record */
  async await(rec: RequestRecord, seen: (r: RequestRecord) => void): Promise<RequestRecord> {
    const bo = new Backoff(this.o.backoffMinMs, this.o.backoffMaxMs);
    while (!TERMINAL.has(rec.status)) {
      try {
        const wait = Math.max(1000, this.o.pollWaitMs);
        const r = await this.exchange("GET", `/v1/requests/${encodeURIComponent(rec.id)}?wait=${seconds(wait)}`, undefined, undefined, wait + this.o.requestTimeoutMs);
        rec = decodeRecord(r.body, rec.id);
        seen(rec);
        this.last = undefined;
        bo.reset();
      } catch (e) {
        if (e instanceof Stopped) throw e;
        if (!transient(e)) throw refused(e);
        this.last = e;
        await sleep(bo.next(retryAfter(e)), this.wait);
      }
    }
    return rec;
  }

  /** checks an approval against this call and the server's clock, right before the claim */
  check(rec: RequestRecord): Approved | Outcome<never> {
    if (rec.edited && this.opts.acceptEdits === false)
      return this.outcome("unavailable", rec, "the call was approved only with edits this harness cannot apply");
    const args = rec.edited ? rec.arguments : this.call.arguments;
    let digest: string;
    try {
      digest = callDigest({
        tenant: rec.tenant, agent: rec.agent, session: this.call.session, turn: this.call.turn, tool_call_id: this.toolCallId,
        capability: this.call.tool ? { action: "tools.call", target: this.call.tool } : this.call.capability!,
        arguments: args, connection: this.call.connection ?? null,
      });
    } catch (e) {
      return this.outcome("unavailable", rec, `countersign answered nonsense: edited arguments: ${describe(e)}`);
    }
    if (rec.call_digest !== digest)
      return this.outcome("unavailable", rec, `the approval is for a different call: approved ${rec.call_digest}, about to run ${digest}`);
    if (this.clock.until(rec.decision!.expires_at!) <= 0) return this.outcome("approval_expired", rec, "the approval expired before the call could start");
    return { kind: "approved", request: rec, arguments: args, message: message("ran", rec) };
  }

  /** checks, claims and runs */
  async use<T, A>(got: Approved, fn: ToolFn<A, T>): Promise<Outcome<T>> {
    try {
      const checked = this.check(got.request);
      if (checked.kind !== "approved") return checked;
      let claimed: RequestRecord;
      try {
        claimed = await this.claim(got.request.id, got.request.call_digest);
      } catch (e) {
        if (e instanceof Cause) return this.outcome(e.kind, got.request, e.message);
        const abandoned = this.user?.aborted === true;
        const last = (e as Stopped).last;
        const cause = abandoned ? "the call was abandoned" : last ? `${WAIT_LIMIT}; ${UNREACHABLE}: ${describe(last)}` : WAIT_LIMIT;
        return this.outcome(abandoned ? "cancelled" : "unavailable", got.request, cause, abandoned);
      }
      if (this.user?.aborted) return this.outcome("cancelled", claimed, "the call was abandoned", true);
      this.done();
      const value = await fn(structuredClone(checked.arguments) as A, { request: claimed, edited: !!claimed.edited, signal: this.user });
      return { kind: "ran", message: message("ran", claimed), request: claimed, value };
    } finally {
      this.done();
    }
  }

  /** spends the approval: one compare-and-set on the server */
  async claim(id: string, digest: string): Promise<RequestRecord> {
    const bo = new Backoff(this.o.backoffMinMs, this.o.backoffMaxMs);
    for (;;) {
      try {
        const r = await this.exchange("POST", `/v1/requests/${encodeURIComponent(id)}/claim`, { call_digest: digest });
        const rec = decodeRecord(r.body, id);
        if (rec.status !== "approved" || !rec.claimed_at)
          throw new BadResponseError(`claim answered status ${JSON.stringify(rec.status)}, claimed_at ${rec.claimed_at}`);
        return rec;
      } catch (e) {
        if (e instanceof Stopped) throw e;
        if (e instanceof CountersignError && e.status === 409) {
          switch (e.problem.reason) {
            case "already_claimed":
              throw new Cause("unavailable", "the approval was already used");
            case "approval_expired":
              throw new Cause("approval_expired", "the approval expired before the call could start");
            case "digest_mismatch":
              throw new Cause("unavailable", "the approval is for a different call");
            case "not_approved":
              throw new Cause("unavailable", "the request is not approved");
          }
        }
        if (!transient(e)) throw refused(e);
        await sleep(bo.next(retryAfter(e)), this.wait);
      }
    }
  }

  /** best-effort cancel with its own short timeout, even after the caller gave up */
  async cancel(id: string): Promise<RequestRecord> {
    const signal = AbortSignal.timeout(this.o.cancelTimeoutMs);
    const bo = new Backoff(this.o.backoffMinMs, this.o.backoffMaxMs);
    for (;;) {
      try {
        const r = await this.exchange("POST", `/v1/requests/${encodeURIComponent(id)}/cancel`, {}, undefined, this.o.cancelTimeoutMs, signal);
        return decodeRecord(r.body, id);
      } catch (e) {
        if (!transient(e) || signal.aborted) throw e;
        await sleep(bo.next(retryAfter(e)), signal);
      }
    }
  }
}

const STATUSES = new Set(["pending", ...TERMINAL]);

/** checks what the client relies on in a record; nonsense fails closed */
function decodeRecord(body: unknown, want: string): RequestRecord {
  const r = body as RequestRecord;
  if (typeof r !== "object" || r === null || typeof r.id !== "string" || !r.id || (want && r.id !== want))
    throw new BadResponseError(`record ${JSON.stringify((r as { id?: unknown })?.id)}, want ${JSON.stringify(want)}`);
  if (!STATUSES.has(r.status)) throw new BadResponseError(`unknown status ${JSON.stringify(r.status)}`);
  if (r.status === "approved" && !r.decision?.expires_at) throw new BadResponseError("an approval without decision.expires_at");
  if (typeof r.call_digest !== "string" || typeof r.arguments !== "object" || r.arguments === null)
    throw new BadResponseError("a record without call_digest or arguments");
  return r;
}
