// countersign for the OpenAI Agents SDK (@openai/agents, an optional peer
// dependency): a function tool whose needsApproval asks countersign, whose
// run's interruptions are answered from countersign's decision, and whose
// execute runs only through Client.run's claim.
import { run as agentsRun, tool, type Agent, type RunContext, type RunResult, type RunToolApprovalItem } from "@openai/agents";
import { approvedAtSubmit, type Client } from "./client.js";
import type { Call } from "./types.js";

type ToolParams = Parameters<typeof tool>[0];

export interface GatedToolOptions<A> {
  name: string;
  description: string;
  /** a zod object or a JSON schema, as tool() takes */
  parameters: ToolParams["parameters"];
  strict?: boolean;
  /** the tool itself; it gets the approved arguments (a person's edits, if any) */
  execute: (args: A, context: RunContext<unknown> | undefined) => unknown;
  /** the countersign session of a call, from the run's context (default: none) */
  session?: string | ((context: unknown) => string | undefined);
  /** the reason shown to deciders, from the call's arguments */
  reason?: string | ((args: A) => string | undefined);
  /** a Go duration for the request's timeout */
  timeout?: string;
}

const gated = new Map<string, (args: Record<string, unknown>, callId: string, context: unknown) => Call>();
const submitted = new Map<string, Call>(); // by tool call id, until the call ran

/** A function tool gated by countersign. */
export function gatedTool<A extends Record<string, unknown>>(client: Client, o: GatedToolOptions<A>) {
  const callOf = (args: Record<string, unknown>, callId: string, context: unknown): Call => ({
    tool: o.name,
    arguments: args,
    toolCallId: callId,
    session: typeof o.session === "function" ? o.session(context) : o.session,
    reason: typeof o.reason === "function" ? o.reason(args as A) : o.reason,
    timeout: o.timeout,
  });
  gated.set(o.name, callOf);
  return tool({
    name: o.name,
    description: o.description,
    parameters: o.parameters,
    strict: o.strict,
    // Every call asks countersign. A call decided at submit (policy, a read
    // rule, a grant, a rule) needs no interruption when it was approved;
    // anything else interrupts the run, and answerInterruptions answers it.
    needsApproval: async (rc: RunContext<unknown>, input: unknown, callId?: string) => {
      if (!callId) return true;
      const call = callOf(input as Record<string, unknown>, callId, rc.context);
      submitted.set(callId, call);
      const rec = await client.submit(call);
      return !approvedAtSubmit(rec);
    },
    execute: async (input: unknown, rc?: RunContext<unknown>, details?: { toolCall?: { callId?: string }; signal?: AbortSignal }) => {
      const callId = details?.toolCall?.callId;
      if (!callId) return "countersign: the call has no tool call id, so no approval can be bound to it; it did not run";
      const call = submitted.get(callId) ?? callOf(input as Record<string, unknown>, callId, rc?.context);
      const out = await client.run(call, (args) => o.execute(args as A, rc), { signal: details?.signal });
      submitted.delete(callId);
      return out.kind === "ran" ? out.value : out.message;
    },
  } as ToolParams);
}

/** The countersign call behind one interruption of a gated tool, or undefined. */
function callOfItem(item: RunToolApprovalItem, context: unknown): Call | undefined {
  const raw = item.rawItem as { callId?: string; arguments?: string };
  const callOf = item.name ? gated.get(item.name) : undefined;
  if (!callOf || !raw.callId) return undefined;
  return submitted.get(raw.callId) ?? callOf(JSON.parse(raw.arguments ?? "{}"), raw.callId, context);
}

/**
 * Answers each interruption of a gated tool from countersign's decision:
 * approve when countersign approved (execute then claims and runs), reject
 * with the outcome's message otherwise (the model reads who said no and why,
 * or that no decision was made). Other interruptions are left as they are.
 */
export async function answerInterruptions(client: Client, result: RunResult<unknown, Agent<any, any>>, opts: { signal?: AbortSignal } = {}) {
  const context = (result.state as unknown as { _context?: { context?: unknown } })._context?.context;
  let others = 0;
  for (const item of result.interruptions ?? []) {
    const call = callOfItem(item, context);
    if (!call) {
      others++;
      continue;
    }
    const d = await client.decide(call, opts);
    if (d.kind === "approved") result.state.approve(item);
    else result.state.reject(item, { message: d.message });
  }
  return { state: result.state, others };
}

/**
 * run(agent, input) from @openai/agents, with every interruption of a gated
 * tool answered from countersign until the run finishes (or stops at an
 * interruption that is not countersign's).
 */
export async function runGated(client: Client, agent: Agent<any, any>, input: Parameters<typeof agentsRun>[1], options: { context?: unknown; maxTurns?: number; signal?: AbortSignal } = {}) {
  let result = (await agentsRun(agent, input, { context: options.context, maxTurns: options.maxTurns, signal: options.signal } as never)) as RunResult<unknown, Agent<any, any>>;
  for (;;) {
    if (!result.interruptions?.length) return result;
    const { state, others } = await answerInterruptions(client, result, { signal: options.signal });
    if (others) return result;
    result = (await agentsRun(agent, state, { maxTurns: options.maxTurns, signal: options.signal } as never)) as RunResult<unknown, Agent<any, any>>;
  }
}
