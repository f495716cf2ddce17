// What an outcome says, in the Go adapter's words (adapter/outcome.go).
import type { Decision, Outcome, RequestRecord } from "./types.js";

/** Go's strconv.Quote: printable runes kept, the rest escaped. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === "\\") out += "\\" + ch;
    else if (c >= 0xd800 && c <= 0xdfff) out += "\\ufffd";
    else if (ch === " " || (c > 0x20 && /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(ch))) out += ch;
    else if (c === 7) out += "\\a";
    else if (c === 8) out += "\\b";
    else if (c === 12) out += "\\f";
    else if (c === 10) out += "\\n";
    else if (c === 13) out += "\\r";
    else if (c === 9) out += "\\t";
    else if (c === 11) out += "\\v";
    else if (c < 0x80) out += "\\x" + c.toString(16).padStart(2, "0");
    else if (c < 0x10000) out += "\\u" + c.toString(16).padStart(4, "0");
    else out += "\\U" + c.toString(16).padStart(8, "0");
  }
  return out + '"';
}

/** An RFC 3339 time as Go's time.RFC3339 writes it in UTC: whole seconds. */
export function rfc3339(t: string): string {
  const ms = parseTime(t);
  if (Number.isNaN(ms)) return t;
  return new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
}

/** Milliseconds since the epoch of an RFC 3339 time (fraction truncated to ms). */
export function parseTime(t: string): number {
  return Date.parse(t.replace(/(\.\d{3})\d+/, "$1"));
}

export function by(d: Decision | null | undefined): string {
  if (!d) return "an unknown decider";
  const id = d.by.id ?? "";
  switch (d.by.kind) {
    case "person":
      return "person " + id;
    case "agent":
      return "agent " + id;
    case "policy":
      return "the policy of member " + id;
    case "read":
      return "the read rule " + id;
    case "own_subagent":
      return "delegation to the agent's own subagent";
    case "grant":
      return "the kept grant " + id;
    case "rule":
      return d.quoted_rule ? "the rule " + goQuote(d.quoted_rule) : "the rule " + id;
  }
  return (d.by.kind + " " + id).trim();
}

function note(d: Decision | null | undefined): string {
  return d?.note ? " with the note " + goQuote(d.note) : "";
}

function ref(r: RequestRecord | null): string {
  return r?.id ? " (request " + r.id + ")" : "";
}

/**
 * The words an outcome carries. cause is the reason an unavailable outcome
 * could not obtain approval; abandoned says a cancelled call was given up by
 * its caller (rather than cancelled by its requester elsewhere).
 */
export function message(kind: Outcome["kind"], r: RequestRecord | null, cause?: string, abandoned?: boolean): string {
  const d = r?.decision ?? null;
  switch (kind) {
    case "ran":
      if (r?.edited)
        return "countersign: approved with edits by " + by(d) + note(d) + ref(r) +
          "; the approval is claimed for the edited call, which runs instead";
      return "countersign: approved by " + by(d) + note(d) + ref(r) + "; the approval is claimed for this call";
    case "denied":
      return "countersign: denied by " + by(d) + note(d) + ref(r) + "; the call did not run";
    case "expired":
      return "countersign: no decision was made in time" + ref(r) +
        (r?.deadline_at ? " before its deadline " + rfc3339(r.deadline_at) : "") +
        "; nobody denied the call, and it did not run";
    case "approval_expired":
      return "countersign: the approval by " + by(d) + ref(r) + " expired" +
        (d?.expires_at ? " at " + rfc3339(d.expires_at) : "") +
        " before the call could start; the call did not run";
    case "cancelled": {
      if (!abandoned)
        return "countersign: the request" + ref(r) + " was cancelled by its requester before the call ran" +
          "; nobody denied the call, and it did not run";
      let s = "countersign: the call was abandoned before it ran" + ref(r);
      if (r?.status === "cancelled") s += ", and its request was cancelled";
      return s + "; nobody denied the call";
    }
    case "unavailable":
      return "countersign: approval could not be obtained" + ref(r) + ": " + (cause || "no valid decision") +
        "; nobody denied the call, and it did not run";
  }
}
