// countersign for the MCP TypeScript SDK's client (@modelcontextprotocol/sdk,
// an optional peer dependency): every tools/call goes through Client.run, so
// the upstream tool runs only with a valid, claimed approval, with the
// approved arguments.
import type { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import type { Client } from "./client.js";
import type { Call } from "./types.js";

type CallToolParams = Parameters<McpClient["callTool"]>[0];
type CallToolResult = Awaited<ReturnType<McpClient["callTool"]>>;

export interface GateOptions {
  /** the countersign session of every call */
  session?: string;
  turn?: string;
  timeout?: string;
  /** the reason for a call when it carries no countersign_reason argument */
  reason?: string;
  /** the tool call id of a call (default none: each call is a new request) */
  toolCallId?: (params: CallToolParams) => string | undefined;
  signal?: AbortSignal;
}

/** The argument an agent may add to say why (as the Go MCP proxy takes it); stripped before the call. */
export const REASON_ARGUMENT = "countersign_reason";

/**
 * mcp with callTool gated by countersign: a call that did not run answers
 * an MCP error result whose text is the outcome's message (who said no and
 * why, or that no decision was made), never the upstream tool's.
 */
export function gateMcpClient<C extends McpClient>(client: Client, mcp: C, o: GateOptions = {}): C {
  const callTool = mcp.callTool.bind(mcp);
  const gated = async (params: CallToolParams, resultSchema?: Parameters<McpClient["callTool"]>[1], options?: Parameters<McpClient["callTool"]>[2]): Promise<CallToolResult> => {
    const { [REASON_ARGUMENT]: why, ...args } = (params.arguments ?? {}) as Record<string, unknown>;
    const call: Call = {
      tool: params.name,
      arguments: args,
      session: o.session,
      turn: o.turn,
      toolCallId: o.toolCallId?.(params),
      timeout: o.timeout,
      reason: typeof why === "string" && why ? why : o.reason,
    };
    const out = await client.run(call, (approved) => callTool({ ...params, arguments: approved }, resultSchema, options), { signal: options?.signal ?? o.signal });
    if (out.kind === "ran") return out.value as CallToolResult;
    return { content: [{ type: "text", text: out.message }], isError: true } as CallToolResult;
  };
  return new Proxy(mcp, {
    get(target, prop, receiver) {
      if (prop === "callTool") return gated;
      const v = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}
