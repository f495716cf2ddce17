// RFC 8785 (JCS) canonical JSON, and the strict reading of JSON texts that
// countersign applies to arguments (SPEC §4): no duplicate keys, no lone
// surrogates, and only numbers that round-trip through an IEEE double.
import { createHash } from "node:crypto";

/** A JSON value as canonicalize accepts it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Thrown for a value or text that has no canonical form. */
export class CanonicalError extends Error {
  override name = "CanonicalError";
}

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function str(s: string): string {
  if (loneSurrogate.test(s)) throw new CanonicalError("a string holds a lone surrogate");
  // JSON.stringify escapes exactly as RFC 8785 §3.2.2.2 says for
  // well-formed strings: \b \t \n \f \r \" \\, other controls as \u00xx.
  return JSON.stringify(s);
}

/**
 * The RFC 8785 canonical text of value: object keys sorted by UTF-16 code
 * units, numbers in ECMAScript's shortest form, no whitespace.
 */
export function canonicalize(value: unknown): string {
  switch (typeof value) {
    case "string":
      return str(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new CanonicalError(`the number ${value} is not JSON`);
      return Object.is(value, -0) ? "0" : String(value);
    case "object": {
      if (value === null) return "null";
      if (Array.isArray(value)) return "[" + value.map((v) => canonicalize(v === undefined ? null : v)).join(",") + "]";
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        const j = (value as { toJSON?: () => unknown }).toJSON;
        if (typeof j === "function") return canonicalize(j.call(value));
        throw new CanonicalError(`a ${proto?.constructor?.name ?? "value"} is not a JSON object`);
      }
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
      return "{" + keys.map((k) => str(k) + ":" + canonicalize(obj[k])).join(",") + "}";
    }
  }
  throw new CanonicalError(`a ${typeof value} is not JSON`);
}

/** sha256: and the lowercase hex SHA-256 of text's UTF-8 bytes. */
export function sha256(text: string): string {
  return "sha256:" + createHash("sha256").update(text, "utf8").digest("hex");
}

/** What a call_digest binds (SPEC §4, exact-call binding). */
export interface CallBinding {
  tenant: string;
  agent: string;
  session?: string;
  turn?: string;
  tool_call_id?: string;
  capability: { action: string; target: string };
  arguments: Record<string, unknown>;
  connection?: { id: string; revision: number } | null;
}

/** The canonical form of a binding: absent strings as "", no connection as null. */
export function canonicalBinding(b: CallBinding): string {
  return canonicalize({
    tenant: b.tenant ?? "",
    agent: b.agent ?? "",
    session: b.session ?? "",
    turn: b.turn ?? "",
    tool_call_id: b.tool_call_id ?? "",
    capability: { action: b.capability.action, target: b.capability.target },
    arguments: b.arguments,
    connection: b.connection ? { id: b.connection.id, revision: b.connection.revision } : null,
  });
}

/** The call_digest of a binding. */
export function callDigest(b: CallBinding): string {
  return sha256(canonicalBinding(b));
}

// ---- strict parsing ----

/**
 * parseJSON reads one JSON text as countersign does: it refuses duplicate
 * keys, lone surrogate escapes, numbers that do not round-trip through an
 * IEEE double, and anything JSON.parse would refuse.
 */
export function parseJSON(text: string): Json {
  const p = new Parser(text);
  p.ws();
  const v = p.value(0);
  p.ws();
  if (p.i !== text.length) p.fail("trailing data");
  return v;
}

const numberRe = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

class Parser {
  i = 0;
  constructor(readonly s: string) {}
  fail(what: string): never {
    throw new CanonicalError(`${what} at offset ${this.i}`);
  }
  ws() {
    while (this.i < this.s.length && " \t\n\r".includes(this.s[this.i]!)) this.i++;
  }
  value(depth: number): Json {
    if (depth > 1000) this.fail("nesting too deep");
    const c = this.s[this.i];
    if (c === "{") return this.object(depth);
    if (c === "[") return this.array(depth);
    if (c === '"') return this.string();
    for (const [w, v] of [["true", true], ["false", false], ["null", null]] as const) {
      if (this.s.startsWith(w, this.i)) {
        this.i += w.length;
        return v;
      }
    }
    return this.number();
  }
  object(depth: number): Json {
    this.i++;
    const out: Record<string, Json> = Object.create(null);
    this.ws();
    if (this.s[this.i] === "}") {
      this.i++;
      return { ...out };
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail("expected a key");
      const k = this.string();
      if (Object.prototype.hasOwnProperty.call(out, k)) this.fail(`duplicate key ${JSON.stringify(k)}`);
      this.ws();
      if (this.s[this.i++] !== ":") this.fail("expected ':'");
      this.ws();
      out[k] = this.value(depth + 1);
      this.ws();
      const c = this.s[this.i++];
      if (c === "}") break;
      if (c !== ",") this.fail("expected ',' or '}'");
    }
    const o: Record<string, Json> = {};
    for (const k of Object.keys(out)) Object.defineProperty(o, k, { value: out[k], enumerable: true, writable: true, configurable: true });
    return o;
  }
  array(depth: number): Json {
    this.i++;
    const out: Json[] = [];
    this.ws();
    if (this.s[this.i] === "]") {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      out.push(this.value(depth + 1));
      this.ws();
      const c = this.s[this.i++];
      if (c === "]") return out;
      if (c !== ",") this.fail("expected ',' or ']'");
    }
  }
  string(): string {
    const start = this.i;
    this.i++;
    for (;;) {
      const c = this.s.charCodeAt(this.i);
      if (Number.isNaN(c)) this.fail("unterminated string");
      if (c < 0x20) this.fail("control character in a string");
      if (c === 0x22) break;
      if (c === 0x5c) {
        const e = this.s[this.i + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(this.s.slice(this.i + 2, this.i + 6))) this.fail("bad \\u escape");
          this.i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) this.i += 2;
        else this.fail("bad escape");
        continue;
      }
      this.i++;
    }
    this.i++;
    const v = JSON.parse(this.s.slice(start, this.i)) as string;
    if (loneSurrogate.test(v)) {
      this.i = start;
      this.fail("a lone surrogate");
    }
    return v;
  }
  number(): number {
    numberRe.lastIndex = this.i;
    const m = numberRe.exec(this.s);
    if (!m) this.fail("invalid JSON");
    this.i += m[0].length;
    const n = Number(m[0]);
    if (!Number.isFinite(n) || !sameDecimal(m[0], n === 0 ? "0" : String(n))) {
      this.i -= m[0].length;
      this.fail(`the number ${m[0]} does not round-trip through an IEEE double`);
    }
    return n;
  }
}

// decimal normalizes a JSON number text to [sign, digits, exponent] with no
// leading or trailing zeros in digits; zero is ["", "", 0].
function decimal(t: string): [string, string, number] {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(t)!;
  let digits = m[2]! + (m[3] ?? "");
  let exp = Number(m[4] ?? 0) - (m[3]?.length ?? 0);
  digits = digits.replace(/^0+/, "");
  if (digits === "") return ["", "", 0];
  const trail = digits.length - digits.replace(/0+$/, "").length;
  digits = digits.slice(0, digits.length - trail);
  exp += trail;
  return [m[1]!, digits, exp];
}

function sameDecimal(a: string, b: string): boolean {
  const x = decimal(a), y = decimal(b);
  return x[0] === y[0] && x[1] === y[1] && x[2] === y[2];
}
