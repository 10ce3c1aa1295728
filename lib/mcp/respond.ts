/**
 * HTTP answers of the MCP endpoint: JSON bodies, JSON-RPC errors, CORS
 * exposure and the OAuth scope challenge (403 with `WWW-Authenticate`).
 *
 * @module
 */
import { challengeScopes, formatBearerChallenge, type VerifiedToken } from "../auth/mod.ts";
import type { GateDecision } from "./policy.ts";
import type { McpState } from "./state.ts";
import type { Telemetry } from "../telemetry/mod.ts";

/** A JSON-RPC id (null when unknown). */
export type JsonRpcId = string | number | null;

/** The authenticated caller of one request. */
export interface Caller {
  readonly token: VerifiedToken | null;
  readonly scopes: ReadonlySet<string>;
}

/** The caller when OAuth is off. */
export const ANONYMOUS: Caller = Object.freeze({ token: null, scopes: new Set<string>() });

const EXPOSE = "Mcp-Session-Id, WWW-Authenticate, MCP-Protocol-Version, X-Request-Id";

/**
 * Tells whether a value is a plain JSON object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isRecord } from "./respond.ts";
 * assert.equal(isRecord({}), true);
 * assert.equal(isRecord([]), false);
 * ```
 * @param value Any value.
 * @returns True for a non-null, non-array object.
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Exposes the MCP headers to browser clients (requests with `Origin`).
 * @param request The request.
 * @param headers Response headers (changed in place).
 * @returns The same headers.
 */
export function withCors(request: Request, headers: Headers): Headers {
  if (request.headers.has("origin") && !headers.has("access-control-expose-headers")) {
    headers.set("access-control-expose-headers", EXPOSE);
  }
  return headers;
}

/**
 * A JSON response.
 * @param request The request (for CORS).
 * @param body The body.
 * @param options Status and extra headers.
 * @returns The response.
 */
export function json(
  request: Request,
  body: unknown,
  options: { readonly status: number; readonly headers?: HeadersInit },
): Response {
  const headers = withCors(request, new Headers(options.headers ?? {}));
  headers.set("content-type", "application/json");
  return new Response(JSON.stringify(body), { status: options.status, headers });
}

/**
 * A JSON-RPC error response.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rpcError } from "./respond.ts";
 * const response = rpcError(new Request("http://x/mcp"), 7, { status: 400, code: -32600, message: "Bad" });
 * assert.deepEqual(await response.json(), { jsonrpc: "2.0", id: 7, error: { code: -32600, message: "Bad" } });
 * ```
 * @param request The request (for CORS).
 * @param id The request id.
 * @param error HTTP status, JSON-RPC code and message, optional data and headers.
 * @returns The response.
 */
export function rpcError(
  request: Request,
  id: JsonRpcId,
  error: {
    readonly status: number;
    readonly code: number;
    readonly message: string;
    readonly headers?: HeadersInit;
    readonly data?: unknown;
  },
): Response {
  const body = error.data === undefined
    ? { code: error.code, message: error.message }
    : { code: error.code, message: error.message, data: error.data };
  return json(request, { jsonrpc: "2.0", id, error: body }, {
    status: error.status,
    headers: error.headers ?? {},
  });
}

/**
 * The 403 of a failed scope gate: `WWW-Authenticate: Bearer error="insufficient_scope"`
 * naming the scopes to ask for (plus the token's own with
 * `scope_challenge_include_token_scopes`).
 * @param request The request.
 * @param context MCP state, caller, the denial, the request id and an optional description.
 * @returns The response.
 */
export function scopeDenied(
  request: Request,
  context: {
    readonly mcp: McpState;
    readonly caller: Caller;
    readonly decision: Exclude<GateDecision, { allow: true }>;
    readonly id: JsonRpcId;
    readonly reason?: string;
    /** Counts the denial by its gate level (`gw_router_mcp_denied_total`). */
    readonly telemetry?: Telemetry | null;
  },
): Response {
  const { mcp, caller, decision } = context;
  context.telemetry?.metrics?.mcpDenied(decision.level);
  const scopes = challengeScopes(
    decision.scopes,
    caller.token?.scopes ?? [],
    mcp.includeTokenScopes,
  );
  const levels = decision.levels ?? [decision.level];
  const description = context.reason ??
    `Insufficient scope for ${levels.join(" and ")} level${
      levels.length > 1 ? "s" : ""
    }: requires ${decision.scopes.join(" ")}`;
  const challenge = formatBearerChallenge(scopes, {
    error: "insufficient_scope",
    resourceMetadata: mcp.resourceMetadataUrl,
    errorDescription: description,
  });
  return rpcError(request, context.id, {
    status: 403,
    code: -32003,
    message: description,
    headers: { "www-authenticate": challenge },
  });
}
