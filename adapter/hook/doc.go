// Package hook answers the command hooks that agent harnesses run before a
// tool call — Claude Code's PreToolUse, Codex CLI's PreToolUse and Gemini
// CLI's BeforeTool — by asking countersign through the adapter.
//
// The hook reads the harness's JSON from stdin and writes exactly one JSON
// answer to stdout. It maps tool_name to the capability
// tools.call:<tool_name>, tool_input to the arguments, session_id to the
// session, tool_use_id to the tool-call id, and (Codex) turn_id to the turn;
// Claude Code sends no turn id, so its session_id is the turn. On a Stop
// event (Claude Code, Codex) it cancels the turn's waiting requests and
// answers {}. A person's approval with edits runs in Claude Code, whose
// allow carries them as updatedInput; the others are denied, saying so.
// It says allow only after the approval was claimed for exactly this call
// (adapter.Ran); the harness then runs the call. Every other outcome, and
// every error — bad input, no token, countersign down, a panic — is an
// explicit deny with a reason that says which it was: a hook that fails is
// taken as "go ahead" by some harnesses, so this one never fails.
//
// Formats:
//
//   - claude: {"hookSpecificOutput": {"hookEventName": "PreToolUse",
//     "permissionDecision": "allow"|"deny", "permissionDecisionReason": "…"}}
//   - codex: a deny as for claude; an allow is {} (Codex accepts
//     permissionDecision "allow" only with updatedInput, and no objection
//     lets the call proceed).
//   - gemini: {"decision": "allow"|"deny", "reason": "…"}. Gemini CLI sends no
//     tool-call id, so requests carry none.
package hook
