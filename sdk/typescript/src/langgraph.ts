// countersign for LangGraph (@langchain/langgraph, an optional peer
// dependency): a tool node whose interrupt waits on countersign, and a driver
// that resumes the graph when countersign has decided. The request is found
// again by its Idempotency-Key (session and tool call id) whenever the node
// runs, so a graph resumed from its checkpointer in another process finds the
// same request; the resume value only wakes the node: what runs is decided by
// countersign's record and Client.run's claim, never by the resume value.
import { Command, interrupt, isInterrupted, type BaseCheckpointSaver } from "@langchain/langgraph";
import { ToolMessage, type AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { Client } from "./client.js";
import type { Call, RequestRecord } from "./types.js";

/** A tool as LangChain has it: a name and invoke. */
export interface LangChainTool {
  name: string;
  invoke(args: unknown, config?: unknown): Promise<unknown>;
}

export interface ToolNodeOptions {
  /** the countersign session of a thread (default: the thread_id of the run's config) */
  session?: (config: { configurable?: Record<string, unknown> }) => string | undefined;
  timeout?: string;
  reason?: (toolName: string, args: Record<string, unknown>) => string | undefined;
}

/** What the node interrupts with: the countersign request it waits on. */
export interface CountersignInterrupt {
  countersign: { request_id: string; call: Call };
}

/**
 * A LangGraph node running the tool calls of the last AI message, each only
 * through countersign: a call still waiting for a decision interrupts the
 * graph (resumeGated resumes it once countersign decided); a decided one
 * runs through Client.run's claim with the approved arguments, or answers a
 * ToolMessage with the outcome's message.
 */
export function countersignToolNode(client: Client, tools: LangChainTool[], o: ToolNodeOptions = {}) {
  const byName = new Map(tools.map((t) => [t.name, t]));
  return async (state: { messages: BaseMessage[] }, config: { configurable?: Record<string, unknown> } = {}) => {
    const last = state.messages[state.messages.length - 1] as AIMessage | undefined;
    const out: ToolMessage[] = [];
    for (const tc of last?.tool_calls ?? []) {
      const id = tc.id ?? "";
      const t = byName.get(tc.name);
      if (!t) {
        out.push(new ToolMessage({ content: `no tool ${JSON.stringify(tc.name)}`, tool_call_id: id, status: "error" }));
        continue;
      }
      const session = o.session ? o.session(config) : (config.configurable?.thread_id as string | undefined);
      const call: Call = { tool: tc.name, arguments: tc.args, toolCallId: id, session, timeout: o.timeout, reason: o.reason?.(tc.name, tc.args) };
      const rec = await client.submit(call);
      if ("status" in rec && rec.status === "pending") interrupt({ countersign: { request_id: rec.id, call } } satisfies CountersignInterrupt);
      const res = await client.run(call, (args) => t.invoke(args));
      const content = res.kind === "ran" ? (typeof res.value === "string" ? res.value : JSON.stringify(res.value)) : res.message;
      out.push(new ToolMessage({ content, tool_call_id: id, name: tc.name, status: res.kind === "ran" ? "success" : "error" }));
    }
    return { messages: out };
  };
}

interface Graph {
  invoke(input: unknown, config: unknown): Promise<unknown>;
  getState(config: unknown): Promise<{ tasks: { interrupts?: { value?: unknown }[] }[] }>;
}

/**
 * graph.invoke(input, config), resumed each time the graph stops at a
 * countersign interrupt, once countersign has decided it (the decision goes
 * in as the resume value), until the graph finishes or stops at another
 * interrupt. Given input null, it resumes a thread that stopped earlier,
 * perhaps in another process: it needs only the thread's checkpointer.
 */
export async function resumeGated(client: Client, graph: Graph, input: unknown, config: { configurable: { thread_id: string } & Record<string, unknown>; signal?: AbortSignal }) {
  let result = input === null ? undefined : await graph.invoke(input, config);
  for (;;) {
    const snap = await graph.getState(config);
    const waits = snap.tasks.flatMap((t) => t.interrupts ?? []).map((i) => i.value as CountersignInterrupt | undefined).filter((v) => v?.countersign);
    if (!waits.length) return result ?? (await graph.invoke(null, config));
    const w = waits[0]!.countersign;
    const d = await client.decide(w.call, { signal: config.signal });
    const decision: RequestRecord | null = d.request;
    result = await graph.invoke(new Command({ resume: { request_id: w.request_id, status: decision?.status ?? d.kind } }), config);
  }
}

export type { BaseCheckpointSaver };
export { isInterrupted };
