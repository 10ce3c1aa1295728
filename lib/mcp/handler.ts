/**
 * MCP Streamable HTTP on one path: POST (JSON-RPC, JSON responses), DELETE
 * (end a session), GET (405: no server-initiated stream). The HTTP-level scope
 * gates run before any JSON-RPC handling: gate 1 before the body is read,
 * gates 2–4 right after the method is known, gate 5 before an inline query runs.
 *
 * @module
 */
import { parse, printSchema } from "graphql";
import {
  authenticate,
  challengeScopes,
  formatBearerChallenge,
  operationAccess,
  type OperationAccessResult,
  type VerifiedToken,
} from "../auth/mod.ts";
import { execute, type ExecutionResult, prepare, type PrepareResult } from "../engine/mod.ts";
import { validateArguments } from "../operations/mod.ts";
import { checkInitialize, checkRequest, checkRuntime, type GateDecision } from "./policy.ts";
import { issueSessionId, verifySessionId } from "./session.ts";
import type { McpDeps, McpState } from "./state.ts";
import { formatOperationInfo, type McpTool } from "./tools.ts";

/** The revision without sessions (`server/discover`, per-request `_meta`). */
export const MODERN_PROTOCOL_VERSION = "2026-07-28";
/** Revisions negotiated by `initialize`, newest first. */
export const SESSION_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"] as const;
/** Every revision served. */
export const SUPPORTED_PROTOCOL_VERSIONS = [
  MODERN_PROTOCOL_VERSION,
  ...SESSION_PROTOCOL_VERSIONS,
] as const;

const PROTOCOL_META = "io.modelcontextprotocol/protocolVersion";
const SERVER_INFO = { name: "gw-router", version: "0.43.0" } as const;
const EXPOSE = "Mcp-Session-Id, WWW-Authenticate, MCP-Protocol-Version";

/** Loopback origins cannot be forged by DNS rebinding; local browser clients use them. */
const LOOPBACK_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/;

type JsonRpcId = string | number | null;

interface JsonRpcMessage {
  readonly jsonrpc?: unknown;
  readonly id?: unknown;
  readonly method?: unknown;
  readonly params?: unknown;
}

interface Caller {
  readonly token: VerifiedToken | null;
  readonly scopes: ReadonlySet<string>;
}

const ANONYMOUS: Caller = { token: null, scopes: new Set() };

function withCors(request: Request, headers: Headers): Headers {
  if (request.headers.has("origin") && !headers.has("access-control-expose-headers")) {
    headers.set("access-control-expose-headers", EXPOSE);
  }
  return headers;
}

function json(request: Request, body: unknown, status: number, extra: HeadersInit = {}): Response {
  const headers = withCors(request, new Headers(extra));
  headers.set("content-type", "application/json");
  return new Response(JSON.stringify(body), { status, headers });
}

function rpcError(
  request: Request,
  id: JsonRpcId,
  status: number,
  code: number,
  message: string,
  options: { readonly headers?: HeadersInit; readonly data?: unknown } = {},
): Response {
  const error = options.data === undefined
    ? { code, message }
    : { code, message, data: options.data };
  return json(request, { jsonrpc: "2.0", id, error }, status, options.headers ?? {});
}

function scopeDenied(
  request: Request,
  mcp: McpState,
  caller: Caller,
  decision: Exclude<GateDecision, { allow: true }>,
  id: JsonRpcId,
  reason?: string,
): Response {
  const scopes = challengeScopes(
    decision.scopes,
    caller.token?.scopes ?? [],
    mcp.includeTokenScopes,
  );
  const description = reason ??
    `Insufficient scope for ${decision.level} level: requires ${decision.scopes.join(" ")}`;
  const challenge = formatBearerChallenge(scopes, {
    error: "insufficient_scope",
    resourceMetadata: mcp.resourceMetadataUrl,
    errorDescription: description,
  });
  return rpcError(request, id, 403, -32003, description, {
    headers: { "www-authenticate": challenge },
  });
}

/** Gate 1 and authentication. Returns the caller or the 401/403 response. */
async function authorize(request: Request, mcp: McpState): Promise<Caller | Response> {
  if (!mcp.oauth || mcp.auth === null) return ANONYMOUS;
  const result = await authenticate(request, mcp.auth);
  if (!result.ok || result.token === null) {
    const description = result.ok ? "A bearer token is required" : result.error.message;
    const challenge = formatBearerChallenge(mcp.policy.initialize, {
      ...(result.ok ? {} : { error: "invalid_token" as const, errorDescription: description }),
      resourceMetadata: mcp.resourceMetadataUrl,
    });
    return rpcError(request, null, 401, -32001, description, {
      headers: { "www-authenticate": challenge },
    });
  }
  const caller = { token: result.token, scopes: result.token.scopeSet };
  const decision = checkInitialize(mcp.policy, caller.scopes);
  return decision.allow ? caller : scopeDenied(request, mcp, caller, decision, null);
}

function subjectOf(caller: Caller): { issuer: string; subject: string } {
  return { issuer: caller.token?.issuer ?? "", subject: caller.token?.subject ?? "" };
}

/** A tool result (`ok` adds `resultType` for 2026-07-28). */
function toolText(text: string, isError: boolean): Record<string, unknown> {
  return { content: [{ type: "text", text }], isError };
}

function resultText(result: ExecutionResult): { text: string; isError: boolean } {
  if (!result.errors || result.errors.length === 0) {
    return { text: JSON.stringify(result), isError: false };
  }
  const lines = ["GraphQL errors:", ...result.errors.map((e) => `- ${e.message}`)];
  if (result.data !== undefined && result.data !== null) {
    lines.push("", "Partial data:", JSON.stringify(result.data));
  }
  return { text: lines.join("\n"), isError: true };
}

async function runGraphQL(
  deps: McpDeps,
  request: Request,
  prepared: PrepareResult,
  variables: Record<string, unknown> | null,
): Promise<{ text: string; isError: boolean }> {
  if (!prepared.ok) {
    return resultText({ errors: [...prepared.errors] });
  }
  const hooks = deps.telemetry?.scopeOf(request)?.hooks;
  const result = await execute(deps.engine, prepared.operation, {
    variables,
    headers: request.headers,
    signal: request.signal,
    ...(hooks ? { hooks } : {}),
  });
  return resultText(result);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
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
  if (prepared.stage === "parse") return null;
  let document;
  try {
    document = parse(query, { maxTokens: 20_000 });
  } catch {
    return null;
  }
  return operationAccess(document, mcp.schema, mcp.access, options);
}

/** `tools/call`: returns the JSON-RPC result, or a Response for a runtime 403. */
async function callTool(
  deps: McpDeps,
  mcp: McpState,
  request: Request,
  caller: Caller,
  tool: McpTool,
  args: Record<string, unknown>,
  id: JsonRpcId,
): Promise<Record<string, unknown> | Response> {
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
      const out = await runGraphQL(deps, request, prepared, args);
      return toolText(out.text, out.isError);
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
      // The engine parses (and caches) the query once; the gate reuses its document.
      const prepared = prepare(deps.engine, { query, operationName: null, variables });
      if (mcp.oauth) {
        const access = runtimeAccess(mcp, prepared, query);
        // null: unparseable, spec §5.3 rule 6: the engine reports the syntax error.
        if (access !== null) {
          if (!access.ok) {
            // Fails closed: a requirement too large (or a bomb) is never executed.
            return scopeDenied(
              request,
              mcp,
              caller,
              {
                allow: false,
                level: "runtime",
                scopes: [],
              },
              id,
              `The query cannot be authorized (fails closed): ${access.reason}`,
            );
          }
          const decision = checkRuntime(access.requirement.scopes, caller.scopes);
          if (!decision.allow) return scopeDenied(request, mcp, caller, decision, id);
        }
      }
      const out = await runGraphQL(deps, request, prepared, variables);
      return toolText(out.text, out.isError);
    }
  }
}

function negotiate(requested: unknown): string {
  return typeof requested === "string" &&
      (SESSION_PROTOCOL_VERSIONS as readonly string[]).includes(requested)
    ? requested
    : SESSION_PROTOCOL_VERSIONS[0];
}

function capabilities(): Record<string, unknown> {
  return { tools: { listChanged: false } };
}

function metaVersion(params: unknown): string | undefined {
  if (!isRecord(params) || !isRecord(params._meta)) return undefined;
  const version = params._meta[PROTOCOL_META];
  return typeof version === "string" ? version : undefined;
}

/** Reads the body as UTF-8, or null once it exceeds `limit` bytes (the rest is not read). */
async function readLimited(request: Request, limit: number): Promise<string | null> {
  if (request.body === null) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

async function handlePost(
  request: Request,
  deps: McpDeps,
  mcp: McpState,
  caller: Caller,
): Promise<Response> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!/^application\/json\b/i.test(contentType)) {
    return rpcError(request, null, 415, -32600, "Content-Type must be application/json");
  }
  const accept = request.headers.get("accept");
  if (
    accept !== null && !/application\/json|\*\/\*|application\/\*|text\/event-stream/i.test(accept)
  ) {
    return rpcError(
      request,
      null,
      406,
      -32600,
      "Accept must include application/json or text/event-stream",
    );
  }
  const text = await readLimited(request, mcp.maxBodyBytes);
  if (text === null) {
    return rpcError(request, null, 413, -32600, "Request body is too large");
  }
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return rpcError(request, null, 400, -32700, "Parse error: the body is not JSON");
  }
  if (Array.isArray(message)) {
    return rpcError(request, null, 400, -32600, "Batch requests are not supported");
  }
  if (!isRecord(message) || message.jsonrpc !== "2.0") {
    return rpcError(request, null, 400, -32600, "Invalid request: expected a JSON-RPC 2.0 object");
  }
  const msg = message as JsonRpcMessage;
  const rawId = msg.id;
  const isRequest = rawId !== undefined;
  if (isRequest && typeof rawId !== "string" && typeof rawId !== "number") {
    return rpcError(request, null, 400, -32600, "Invalid request: id must be a string or a number");
  }
  const id: JsonRpcId = isRequest ? rawId as string | number : null;
  if (typeof msg.method !== "string") {
    // A response or error from the client: nothing to do.
    return new Response(null, { status: 202, headers: withCors(request, new Headers()) });
  }
  const method = msg.method;
  const params = msg.params;
  const headerVersion = request.headers.get("mcp-protocol-version");
  const requestedMeta = metaVersion(params);
  const modern = method !== "initialize" &&
    (requestedMeta !== undefined || headerVersion === MODERN_PROTOCOL_VERSION ||
      method === "server/discover");
  if (modern) {
    // SEP-2243: routing headers, when sent, must agree with the body.
    const headerMethod = request.headers.get("mcp-method");
    if (
      (headerMethod !== null && headerMethod !== method) ||
      (headerVersion !== null && requestedMeta !== undefined && headerVersion !== requestedMeta)
    ) {
      return rpcError(
        request,
        id,
        400,
        -32020,
        "Header mismatch: Mcp-Method or MCP-Protocol-Version disagrees with the body",
      );
    }
    const requested = requestedMeta ?? headerVersion ?? MODERN_PROTOCOL_VERSION;
    if (requested !== MODERN_PROTOCOL_VERSION) {
      return rpcError(request, id, 400, -32022, `Unsupported protocol version: ${requested}`, {
        data: { supported: [...SUPPORTED_PROTOCOL_VERSIONS], requested },
      });
    }
  } else if (method === "initialize") {
    // Sessions start here; nothing to check.
  } else {
    if (
      headerVersion !== null &&
      !(SESSION_PROTOCOL_VERSIONS as readonly string[]).includes(headerVersion)
    ) {
      return rpcError(
        request,
        id,
        400,
        -32600,
        `Unsupported MCP-Protocol-Version: ${headerVersion}`,
      );
    }
    const sessionId = request.headers.get("mcp-session-id");
    if (sessionId === null) {
      return rpcError(request, id, 400, -32600, "Bad request: Mcp-Session-Id header is required");
    }
    const now = mcp.now();
    const valid = !mcp.revocations.has(sessionId, { now }) &&
      await verifySessionId(mcp.sessionKey, sessionId, subjectOf(caller), { now });
    if (!valid) return rpcError(request, id, 404, -32001, "Session not found");
  }
  if (!isRequest) {
    return new Response(null, { status: 202, headers: withCors(request, new Headers()) });
  }
  const toolName = method === "tools/call" && isRecord(params) && typeof params.name === "string"
    ? params.name
    : undefined;
  if (mcp.oauth) {
    const decision = checkRequest(mcp.policy, caller.scopes, method, toolName);
    if (!decision.allow) return scopeDenied(request, mcp, caller, decision, id);
  }
  const ok = (result: Record<string, unknown>, headers: HeadersInit = {}) =>
    json(
      request,
      { jsonrpc: "2.0", id, result: modern ? { resultType: "complete", ...result } : result },
      200,
      headers,
    );
  switch (method) {
    case "initialize": {
      const version = negotiate(isRecord(params) ? params.protocolVersion : undefined);
      const sessionId = await issueSessionId(mcp.sessionKey, subjectOf(caller), { now: mcp.now() });
      return ok({
        protocolVersion: version,
        capabilities: capabilities(),
        serverInfo: SERVER_INFO,
        instructions:
          `Tools execute GraphQL operations of the ${deps.config.mcp.graph_name} graph.`,
      }, { "mcp-session-id": sessionId });
    }
    case "server/discover":
      return ok({
        supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
        capabilities: capabilities(),
        serverInfo: SERVER_INFO,
        instructions:
          `Tools execute GraphQL operations of the ${deps.config.mcp.graph_name} graph.`,
        ttlMs: 0,
        cacheScope: "private",
        _meta: { "io.modelcontextprotocol/serverInfo": SERVER_INFO },
      });
    case "ping":
      return ok({});
    case "tools/list":
      return ok(
        modern ? { tools: mcp.toolList, ttlMs: 0, cacheScope: "private" } : { tools: mcp.toolList },
      );
    case "tools/call": {
      const tool = toolName === undefined ? undefined : mcp.toolsByName.get(toolName);
      if (!tool) {
        return rpcError(request, id, 200, -32602, `Unknown tool: ${toolName ?? "(missing name)"}`);
      }
      const args = isRecord(params) && params.arguments !== undefined ? params.arguments : {};
      if (!isRecord(args)) {
        return ok(toolText("Invalid arguments: expected an object", true));
      }
      const result = await callTool(deps, mcp, request, caller, tool, args, id);
      return result instanceof Response ? result : ok(result);
    }
    default:
      return rpcError(request, id, 200, -32601, `Method not found: ${method}`);
  }
}

/** A client that accepts only `text/event-stream` gets the one JSON-RPC message as an SSE event. */
async function asStream(request: Request, response: Response): Promise<Response> {
  const accept = request.headers.get("accept") ?? "";
  if (
    response.status !== 200 || !/text\/event-stream/i.test(accept) ||
    /application\/json|\*\/\*|application\/\*/i.test(accept)
  ) {
    return response;
  }
  const headers = new Headers(response.headers);
  headers.set("content-type", "text/event-stream");
  headers.set("cache-control", "no-cache");
  return new Response(`event: message\ndata: ${await response.text()}\n\n`, {
    status: 200,
    headers,
  });
}

/**
 * Handles a request on the MCP path.
 *
 * @example Without MCP state the path does not exist
 * ```ts
 * import assert from "node:assert/strict";
 * import { handleMcp } from "./handler.ts";
 * import type { McpDeps } from "./state.ts";
 * const response = await handleMcp(new Request("http://x/mcp", { method: "POST" }), { mcp: null } as unknown as McpDeps);
 * assert.equal(response.status, 404);
 * ```
 * @param request The request.
 * @param deps Router state.
 * @returns The response.
 */
export async function handleMcp(request: Request, deps: McpDeps): Promise<Response> {
  const mcp = deps.mcp;
  if (mcp === null) return rpcError(request, null, 404, -32601, "MCP is not enabled");
  const origin = request.headers.get("origin");
  if (origin !== null && !mcp.allowedOrigins.has(origin) && !LOOPBACK_ORIGIN.test(origin)) {
    // MCP transport security: validate Origin against DNS rebinding.
    await request.body?.cancel();
    return rpcError(request, null, 403, -32000, `Origin ${origin} is not allowed`);
  }
  if (request.method === "OPTIONS") {
    return new Response(null, {
      status: 204,
      headers: withCors(
        request,
        new Headers({
          "access-control-allow-origin": request.headers.get("origin") ?? "*",
          "access-control-allow-methods": "POST, GET, DELETE, OPTIONS",
          "access-control-allow-headers":
            "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID",
        }),
      ),
    });
  }
  const caller = await authorize(request, mcp);
  if (caller instanceof Response) {
    await request.body?.cancel();
    return caller;
  }
  switch (request.method) {
    case "POST":
      return asStream(request, await handlePost(request, deps, mcp, caller));
    case "DELETE": {
      const sessionId = request.headers.get("mcp-session-id");
      if (sessionId === null) {
        return rpcError(
          request,
          null,
          400,
          -32600,
          "Bad request: Mcp-Session-Id header is required",
        );
      }
      const now = mcp.now();
      if (
        mcp.revocations.has(sessionId, { now }) ||
        !await verifySessionId(mcp.sessionKey, sessionId, subjectOf(caller), { now })
      ) {
        return rpcError(request, null, 404, -32001, "Session not found");
      }
      mcp.revocations.add(sessionId, { now });
      return new Response(null, { status: 204, headers: withCors(request, new Headers()) });
    }
    default:
      await request.body?.cancel();
      return rpcError(
        request,
        null,
        405,
        -32000,
        `Method ${request.method} is not allowed on the MCP endpoint`,
        {
          headers: { allow: "POST, DELETE" },
        },
      );
  }
}

/**
 * Serves the RFC 9728 protected-resource metadata
 * (`/.well-known/oauth-protected-resource/mcp`, also without `/mcp`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { handleProtectedResourceMetadata } from "./handler.ts";
 * import type { McpDeps } from "./state.ts";
 * const response = await handleProtectedResourceMetadata(new Request("http://x/"), { mcp: null } as unknown as McpDeps);
 * assert.equal(response.status, 404);
 * ```
 * @param request The request.
 * @param deps Router state.
 * @returns The response.
 */
export function handleProtectedResourceMetadata(
  request: Request,
  deps: McpDeps,
): Promise<Response> {
  const mcp = deps.mcp;
  if (mcp === null) {
    return Promise.resolve(
      json(request, { error: "not_found", error_description: "MCP is not enabled" }, 404),
    );
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    return Promise.resolve(
      json(request, { error: "method_not_allowed" }, 405, { allow: "GET, HEAD" }),
    );
  }
  const headers = new Headers({
    "content-type": "application/json",
    "cache-control": "public, max-age=300",
  });
  if (request.headers.has("origin")) headers.set("access-control-allow-origin", "*");
  return Promise.resolve(
    new Response(request.method === "HEAD" ? null : mcp.metadataJson, { status: 200, headers }),
  );
}
