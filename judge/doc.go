// Package judge reads an agent's plain-language rules and one request
// through a model, and keeps only the verdicts it can verify (SPEC §6). It
// also runs the built-in model reviewer for agent deciders (SPEC §3).
//
// It owns: the prompt (instructions in the system message, the rules and the
// request as delimited, escaped JSON data in the user message), the
// OpenAI-compatible chat-completions client ([ChatModel]), the local
// verification of the model's answer, a per-Judge circuit breaker, and
// [DisplayLine], the bound on any model text shown to people. It has no
// NATS and no state beyond the breaker; it never decides what happens to a
// request — the caller does, from the [Outcome] or [Review].
//
// # Security contract
//
// A model can allow or deny only by quoting one of the agent's rules
// verbatim. Whatever the model answers, Verdict is Allow or Deny only if,
// checked locally:
//   - the answer parses strictly as {"verdict", "quote", "evidence",
//     "rationale"} (one ```json fence tolerated; anything else is
//     "malformed");
//   - the quote equals the whole text of one of the agent's rules after
//     whitespace folding — not a substring, not a paraphrase
//     ("invalid_quote");
//   - that rule's Effect, if set, equals the verdict ("wrong_effect");
//   - evidence is non-empty and every item is a non-blank substring of a
//     stored argument value: a string, or a number or boolean exactly as
//     written in the JSON. Keys, the agent's reason, and values shadowed by a
//     duplicate key do not count ("bad_evidence").
//
// Every other result — malformed output, a refusal, a timeout, an HTTP or
// transport error, an open breaker, no rules — is Escalate (Judge) or
// Abstain (Review), never an allow. ReviewerReason and Note are display
// hints bounded by DisplayLine; they authorize nothing.
//
// # What an attacker controlling the arguments or the reason can do
//
// Cannot: get an allow without a verbatim quote of an existing rule whose
// effect fits, plus evidence present in the arguments. Text in the reason
// never counts as evidence, so an injection carried only in the reason
// cannot satisfy the evidence check with strings it invents. The closing
// tags of the data blocks are escaped, so data cannot pose as instructions
// by leaving its block.
//
// Can: induce the model to quote a real allow rule that is unrelated to the
// call, if the arguments contain strings that satisfy the evidence check
// (the attacker writes the arguments, so it can plant them). The guards are
// rule wording that names concrete values and conditions, so that a
// matching quote with honest evidence means something, the evidence check,
// and explicit rule effects. Rules that allow broadly ("routine requests may
// be approved") are exactly as strong as the model reading them.
//
// Can: make the judge escalate (malformed answers, refusals, slow calls that
// open the breaker): that is denial of automation — a person decides — never
// an allow by itself.
package judge
