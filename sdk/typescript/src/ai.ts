// countersign for the Vercel AI SDK (ai 6.x, an optional peer dependency):
// a tool whose needsApproval asks countersign and whose execute runs only
// through Client.run's claim; the SDK's tool approval requests are answered
// from countersign's decision.
import { generateText, tool, type ModelMessage, type Tool, type ToolApprovalResponse, type ToolModelMessage } from "ai";
import { approvedAtSubmit, type Client } from "./client.js";
import type { Call } from "./types.js";

type ToolDef = Parameters<typeof tool>[0];

export interface GatedToolOptions<A> {
  /** the tool's name: its key in the tools object, and what countersign is asked about */
  name: string;
  description?: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  inputSchema: any;
  /** the tool itself; it gets the approved arguments (a person's edits, if any) */
  execute: (args: A, options: { toolCallId: string; abortSignal?: AbortSignal }) => unknown;
  /** the countersign session of a call, from experimental_context (default: none) */
  session?: string | ((context: unknown) => string | undefined);
  reason?: string | ((args: A) => string | undefined);
  timeout?: string;
}

const gated = new Map<string, (input: Record<string, unknown>, toolCallId: string, context: unknown) => Call>();

/** A tool gated by countersign. */
export function gatedTool<A extends Record<string, unknown>>(client: Client, o: GatedToolOptions<A>): Tool {
  const callOf = (input: Record<string, unknown>, toolCallId: string, context: unknown): Call => ({
    tool: o.name,
    arguments: input,
    toolCallId,
    session: typeof o.session === "function" ? o.session(context) : o.session,
    reason: typeof o.reason === "function" ? o.reason(input as A) : o.reason,
    timeout: o.timeout,
  });
  gated.set(o.name, callOf);
  return tool({
    description: o.description,
    inputSchema: o.inputSchema,
    // Every call asks countersign; one approved at submit (policy, a read
    // rule, a grant, a rule) needs no approval round.
    needsApproval: async (input: unknown, opts: { toolCallId: string; experimental_context?: unknown }) => {
      const rec = await client.submit(callOf(input as Record<string, unknown>, opts.toolCallId, opts.experimental_context));
      return !approvedAtSubmit(rec);
    },
    execute: async (input: unknown, opts: { toolCallId: string; abortSignal?: AbortSignal; experimental_context?: unknown }) => {
      const call = callOf(input as Record<string, unknown>, opts.toolCallId, opts.experimental_context);
      const out = await client.run(call, (args) => o.execute(args as A, { toolCallId: opts.toolCallId, abortSignal: opts.abortSignal }), { signal: opts.abortSignal });
      return out.kind === "ran" ? out.value : out.message;
    },
  } as unknown as ToolDef) as Tool;
}

interface ApprovalRequest {
  type: "tool-approval-request";
  approvalId: string;
  toolCall: { toolName: string; toolCallId: string; input: unknown };
}

/**
 * The tool message answering each approval request of a gated tool in
 * content (a generateText result's content) from countersign's decision:
 * approved when countersign approved (execute then claims and runs), denied
 * with the outcome's message otherwise, which the model reads as the tool's
 * result. Undefined when content holds no such request.
 */
export async function answerApprovals(client: Client, content: readonly unknown[], opts: { context?: unknown; signal?: AbortSignal } = {}): Promise<ToolModelMessage | undefined> {
  const answers: ToolApprovalResponse[] = [];
  for (const part of content as ApprovalRequest[]) {
    if (part.type !== "tool-approval-request") continue;
    const callOf = gated.get(part.toolCall.toolName);
    if (!callOf) continue;
    const d = await client.decide(callOf(part.toolCall.input as Record<string, unknown>, part.toolCall.toolCallId, opts.context), { signal: opts.signal });
    answers.push(d.kind === "approved" ? { type: "tool-approval-response", approvalId: part.approvalId, approved: true } : { type: "tool-approval-response", approvalId: part.approvalId, approved: false, reason: d.message });
  }
  return answers.length ? { role: "tool", content: answers } : undefined;
}

/**
 * generateText, with every approval request of a gated tool answered from
 * countersign, until the model is done (or stops at an approval request
 * that is not countersign's). The answer is the last generateText result and
 * the whole conversation.
 */
export async function generateGated(client: Client, options: Parameters<typeof generateText>[0] & { maxRounds?: number }) {
  const { prompt, messages: given, maxRounds = 10, ...rest } = options as Record<string, unknown> & { prompt?: string | ModelMessage[]; messages?: ModelMessage[]; maxRounds?: number };
  const messages: ModelMessage[] = [...(given ?? (typeof prompt === "string" ? [{ role: "user", content: prompt }] : (prompt ?? [])))];
  for (let round = 0; ; round++) {
    const result = await generateText({ ...rest, messages } as Parameters<typeof generateText>[0]);
    messages.push(...(result.response.messages as ModelMessage[]));
    const answer = round < maxRounds ? await answerApprovals(client, result.content, { context: rest.experimental_context, signal: rest.abortSignal as AbortSignal | undefined }) : undefined;
    if (!answer) return { result, messages };
    messages.push(answer);
  }
}
