/**
 * `tools/call`: runs an operation tool or a built-in and shapes the MCP tool
 * result. Operation tools return the GraphQL response as text and, for
 * revisions 2025-06-18+, the `data` as `structuredContent` (it matches the
 * tool's `outputSchema`); GraphQL errors make `isError: true` with the
 * messages and any partial data, without `structuredContent`. Gate 5
 * (runtime scopes of `execute_graphql`) runs here, before the query does.
 *
 * @module
 */
import { RouterError } from "../errors.ts";
import { parse, printSchema } from "graphql";
import { authorizeOperation, operationAccess, type OperationAccessResult } from "../auth/mod.ts";
import { execute, type ExecutionResult, prepare, type PrepareResult } from "../engine/mod.ts";
import { validateArguments } from "../operations/mod.ts";
import { checkRuntime } from "./policy.ts";
import { type Caller, isRecord, type JsonRpcId, rpcError, scopeDenied } from "./respond.ts";
import { resolveDocument } from "../persisted/mod.ts";
import { operationStage, PluginRefusal, pluginRequestOf } from "../plugins/mod.ts";
import type { McpDeps, McpState } from "./state.ts";
import { formatOperationInfo, type McpTool } from "./tools.ts";
import { signalOf } from "../cancellation.ts";
import { requestIdOf } from "../request/mod.ts";

/** A tool result: text content, error flag, and structured content when offered. */
export interface ToolResult {
  readonly content: readonly { readonly type: "text"; readonly text: string }[];
  readonly isError: boolean;
  readonly structuredContent?: Record<string, unknown>;
}

/** What one `tools/call` needs besides the tool and its arguments. */
export interface CallContext {
  readonly deps: McpDeps;
  readonly mcp: McpState;
  readonly request: Request;
  readonly caller: Caller;
  readonly id: JsonRpcId;
  /** The revision has structured tool output (2025-06-18+). */
  readonly structured: boolean;
}

/**
 * A text-only tool result.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolText } from "./call.ts";
 * assert.deepEqual(toolText("hi", false), { content: [{ type: "text", text: "hi" }], isError: false });
 * ```
 * @param text The text.
 * @param isError Whether the tool failed.
 * @returns The result.
 */
export function toolText(text: string, isError: boolean): ToolResult {
  return { content: [{ type: "text", text }], isError };
}

/**
 * The tool result of a GraphQL response: the response as JSON text (and its
 * `data` as `structuredContent` when `structured`), or, with errors,
 * `isError: true`, the messages and the partial data.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { graphqlResult } from "./call.ts";
 * assert.deepEqual(graphqlResult({ data: { a: 1 } }, { structured: true }).structuredContent, { a: 1 });
 * assert.equal(graphqlResult({ errors: [{ message: "x" }] }, { structured: true }).structuredContent, undefined);
 * ```
 * @param result The execution result.
 * @param options `structured`: add `structuredContent`.
 * @returns The tool result.
 */
export function graphqlResult(
  result: ExecutionResult,
  options: { readonly structured: boolean },
): ToolResult {
  if (!result.errors || result.errors.length === 0) {
    const text = toolText(JSON.stringify(result), false);
    return options.structured && isRecord(result.data)
      ? { ...text, structuredContent: result.data }
      : text;
  }
  const lines = ["GraphQL errors:", ...result.errors.map(errorLine)];
  if (result.data !== undefined && result.data !== null) {
    lines.push("", "Partial data:", JSON.stringify(result.data));
  }
  return toolText(lines.join("\n"), true);
}

/**
 * One error as a line; a wrapped subgraph error (`subgraph_error_propagation`)
 * adds the messages it carries, already filtered, so an agent sees the cause.
 */
function errorLine(error: { readonly message: string; readonly extensions?: unknown }): string {
  const inner = isRecord(error.extensions) && Array.isArray(error.extensions.errors)
    ? error.extensions.errors.filter(isRecord).map((e) => String(e.message))
    : [];
  return inner.length === 0 ? `- ${error.message}` : `- ${error.message}: ${inner.join("; ")}`;
}

async function runGraphQL(
  context: CallContext,
  call: {
    readonly prepared: PrepareResult;
    readonly variables: Record<string, unknown> | null;
    /** The tool's name, in refusals. */
    readonly tool: string;
  },
): Promise<ExecutionResult> {
  const { prepared, variables } = call;
  if (!prepared.ok) return { errors: [...prepared.errors] };
  const { deps } = context;
  // The one authorization door (reject_operation_if_unauthorized), before anything runs.
  const refused = authorizeOperation(prepared.operation, {
    identity: context.caller.token,
    authorization: deps.authorization,
    supergraph: deps.engine.model,
    subject: `Tool ${call.tool}`,
  });
  if (refused !== null) {
    return { errors: [{ message: refused.message, extensions: { code: refused.code } }] };
  }
  // Plugins' operation stage (issue 40): nothing to await without an onOperation hook.
  const staged = operationStage(context.request, {
    operation: prepared.operation,
    identity: context.caller.token,
    variables,
  });
  const outcome = staged === null ? null : await staged;
  const refusal = outcome?.error;
  if (refusal) {
    return {
      errors: refusal instanceof PluginRefusal
        ? [...refusal.errors]
        : [{ message: refusal.message, extensions: { code: refusal.code } }],
    };
  }
  const policies = outcome?.policies;
  const stages = pluginRequestOf(context.request)?.stages;
  const hooks = deps.telemetry?.scopeOf(context.request)?.hooks;
  try {
    return await execute(deps.engine, prepared.operation, {
      ...(hooks ? { hooks } : {}),
      ...(stages ? { stages } : {}),
      ...(policies ? { policies } : {}),
      variables,
      identity: context.caller.token,
      headers: context.request.headers,
      requestId: requestIdOf(context.request),
      signal: signalOf(context.request),
    });
  } catch (error) {
    // The engine's own refusals (RESPONSE_TOO_LARGE, …) are the tool's error result.
    if (!(error instanceof RouterError)) throw error;
    if (error instanceof PluginRefusal) return { errors: [...error.errors] };
    return { errors: [{ message: error.message, extensions: { code: error.code } }] };
  }
}

/**
 * Gate 5's requirement of an inline query: from the engine's prepared document
 * (computed once per prepared operation), or, when validation failed, from a
 * parse of its own; null when the query does not parse.
 */
function runtimeAccess(
  mcp: McpState,
  prepared: PrepareResult,
  query: string,
): OperationAccessResult | null {
  const options = { maxCombinations: mcp.maxScopeCombinations };
  if (prepared.ok) {
    const known = mcp.runtimeAccess.get(prepared.operation);
    if (known !== undefined) return known;
    const access = operationAccess(prepared.operation.document, mcp.schema, mcp.access, options);
    mcp.runtimeAccess.set(prepared.operation, access);
    return access;
  }
  if (prepared.stage === "parse" || prepared.stage === "limits") return null;
  let document;
  try {
    document = parse(query, { maxTokens: 20_000 });
  } catch {
    return null;
  }
  return operationAccess(document, mcp.schema, mcp.access, options);
}

/**
 * Runs one tool.
 * @param context Router state, request, caller, request id, revision features.
 * @param call The tool and its (object) arguments.
 * @returns The tool result, or the 403 response of gate 5.
 */
export async function callTool(
  context: CallContext,
  call: { readonly tool: McpTool; readonly args: Record<string, unknown> },
): Promise<ToolResult | Response> {
  const { deps, mcp, request, caller } = context;
  const { tool, args } = call;
  const invalid = validateArguments(args, tool.inputSchema);
  if (invalid !== null) return toolText(invalid, true);
  switch (tool.kind) {
    case "operation": {
      const operation = tool.operation!;
      const prepared = prepare(deps.engine, {
        query: operation.text,
        operationName: operation.name,
        variables: args,
      });
      const result = await runGraphQL(context, { prepared, variables: args, tool: tool.name });
      return graphqlResult(result, {
        structured: context.structured && tool.outputSchema !== null,
      });
    }
    case "get_operation_info": {
      const target = mcp.toolsByOperation.get(String(args.operationName));
      if (!target) {
        return toolText(`Unknown operation "${String(args.operationName)}"`, true);
      }
      return toolText(formatOperationInfo(target, { graphqlUrl: mcp.graphqlUrl }), false);
    }
    case "get_schema":
      return toolText(printSchema(mcp.schema), false);
    case "execute_graphql": {
      const query = String(args.query);
      const variables = isRecord(args.variables) ? args.variables : null;
      // The safelist holds here too (issue 30): an inline query must be a trusted document.
      let trusted: PrepareResult | null = null;
      const persisted = deps.persisted;
      if (persisted !== undefined && (persisted.safelist || persisted.logUnknown)) {
        const resolved = await resolveDocument(persisted, {
          query,
          operationName: null,
          hash: null,
        });
        if (!resolved.ok) {
          return rpcError(request, context.id, {
            status: 400,
            code: -32602,
            message: resolved.error.message,
            data: { code: resolved.error.code },
          });
        }
        trusted = resolved.trusted;
      }
      // The engine parses (and caches) the query once; the gate reuses its document.
      const prepared = trusted ?? prepare(deps.engine, { query, operationName: null, variables });
      if (
        prepared.ok && prepared.operation.kind === "mutation" && deps.config.mcp.exclude_mutations
      ) {
        // Issue 34: the option covers every way in, not only the registered tools.
        return toolText("Mutations are not allowed here (mcp.exclude_mutations)", true);
      }
      if (mcp.oauth) {
        const access = runtimeAccess(mcp, prepared, query);
        // null: unparseable, spec §5.3 rule 6: the engine reports the syntax error.
        if (access !== null) {
          if (!access.ok) {
            // Fails closed: a requirement too large (or a bomb) is never executed.
            return scopeDenied(request, {
              mcp,
              caller,
              decision: { allow: false, level: "runtime", scopes: [] },
              id: context.id,
              reason: `The query cannot be authorized (fails closed): ${access.reason}`,
              telemetry: deps.telemetry ?? null,
            });
          }
          const decision = checkRuntime(access.requirement.scopes, caller.scopes);
          if (!decision.allow) {
            return scopeDenied(request, {
              mcp,
              caller,
              decision,
              id: context.id,
              telemetry: deps.telemetry ?? null,
            });
          }
        }
      }
      const result = await runGraphQL(context, { prepared, variables, tool: tool.name });
      return graphqlResult(result, { structured: false });
    }
  }
}
