/**
 * The HTTP side of the server-to-client streams: session checks shared with
 * POST, SSE responses, and `GET` on the MCP path (the session's stream).
 *
 * @module
 */
import { clipForMessage } from "../errors.ts";
import { type Caller, type JsonRpcId, rpcError, withCors } from "./respond.ts";
import { verifySessionId } from "./session.ts";
import { messageEvent } from "./sse.ts";
import { streamOwner } from "./streams.ts";
import type { McpState } from "./state.ts";
import { MODERN_PROTOCOL_VERSION, SESSION_PROTOCOL_VERSIONS } from "./versions.ts";

/**
 * The session's owner as bound into its id (empty strings without OAuth).
 * @param caller The caller.
 * @returns Issuer and subject.
 */
export function subjectOf(caller: Caller): { issuer: string; subject: string } {
  return { issuer: caller.token?.issuer ?? "", subject: caller.token?.subject ?? "" };
}

/**
 * Verifies `Mcp-Session-Id`: present, not ended, signed for this caller.
 * @param request The request.
 * @param context MCP state, caller, and the JSON-RPC id for the error.
 * @returns The session id, or the 400/404 response.
 */
export async function checkSession(
  request: Request,
  context: { readonly mcp: McpState; readonly caller: Caller; readonly id: JsonRpcId },
): Promise<string | Response> {
  const { mcp, caller, id } = context;
  const sessionId = request.headers.get("mcp-session-id");
  if (sessionId === null) {
    return rpcError(request, id, {
      status: 400,
      code: -32600,
      message: "Bad request: Mcp-Session-Id header is required",
    });
  }
  const now = mcp.now();
  const valid = !mcp.revocations.has(sessionId, { now }) &&
    await verifySessionId(mcp.sessionKey, sessionId, subjectOf(caller), { now });
  return valid
    ? sessionId
    : rpcError(request, id, { status: 404, code: -32001, message: "Session not found" });
}

/**
 * When the caller's token expires, so that its streams close then.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { expiryOf } from "./stream_http.ts";
 * import type { Caller } from "./respond.ts";
 * assert.equal(expiryOf({ token: { claims: { exp: 10 } }, scopes: new Set() } as unknown as Caller), 10_000);
 * assert.equal(expiryOf({ token: null, scopes: new Set() }), null);
 * ```
 * @param caller The caller.
 * @returns Milliseconds since the epoch, or null without a token (or `exp`).
 */
export function expiryOf(caller: Caller): number | null {
  const exp = caller.token?.claims.exp;
  return typeof exp === "number" ? exp * 1000 : null;
}

/**
 * The answer when the stream limits are reached: 429 with `Retry-After`.
 * @param request The request.
 * @param id The JSON-RPC id (null for GET).
 * @returns The response.
 */
export function tooManyStreams(request: Request, id: JsonRpcId): Response {
  return rpcError(request, id, {
    status: 429,
    code: -32000,
    message: "Too many open streams; retry later",
    headers: { "retry-after": "5" },
  });
}

/**
 * An SSE response around a stream (no caching, no proxy buffering).
 * @param request The request (for CORS).
 * @param stream The event stream.
 * @returns The response.
 */
export function sse(request: Request, stream: ReadableStream<Uint8Array>): Response {
  const headers = withCors(
    request,
    new Headers({
      "content-type": "text/event-stream",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
    }),
  );
  return new Response(stream, { status: 200, headers });
}

/**
 * A finished SSE response: the messages as events, in order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sseOf } from "./stream_http.ts";
 * const response = sseOf(new Request("http://x/mcp"), [{ jsonrpc: "2.0", method: "m" }]);
 * assert.equal(response.headers.get("content-type"), "text/event-stream");
 * assert.equal(await response.text(), 'event: message\ndata: {"jsonrpc":"2.0","method":"m"}\n\n');
 * ```
 * @param request The request (for CORS).
 * @param messages JSON-RPC messages.
 * @returns The response.
 */
export function sseOf(request: Request, messages: readonly unknown[]): Response {
  const body = messages.map((message) => messageEvent(message, null)).join("");
  return sse(request, new Response(body).body!);
}

/**
 * `GET`: the session's server-to-client stream (revisions up to 2025-11-25),
 * with the same authentication and session rules as `POST` (gate 1 already
 * passed); `Last-Event-ID` resumes it. 2026-07-28 has no GET stream (405: it
 * uses `subscriptions/listen`).
 * @param request The request.
 * @param mcp The MCP state.
 * @param caller The authenticated caller.
 * @returns The SSE response, or 406/400/404/405/429.
 */
export async function handleGet(
  request: Request,
  mcp: McpState,
  caller: Caller,
): Promise<Response> {
  if (!/text\/event-stream/i.test(request.headers.get("accept") ?? "")) {
    return rpcError(request, null, {
      status: 406,
      code: -32600,
      message: "Accept must include text/event-stream",
    });
  }
  const version = request.headers.get("mcp-protocol-version");
  if (version !== null && !(SESSION_PROTOCOL_VERSIONS as readonly string[]).includes(version)) {
    return rpcError(request, null, {
      status: version === MODERN_PROTOCOL_VERSION ? 405 : 400,
      code: -32600,
      message: version === MODERN_PROTOCOL_VERSION
        ? "2026-07-28 has no GET stream: use subscriptions/listen"
        : `Unsupported MCP-Protocol-Version: ${clipForMessage(version)}`,
      headers: { allow: "POST, GET, DELETE" },
    });
  }
  const session = await checkSession(request, { mcp, caller, id: null });
  if (session instanceof Response) return session;
  const opened = mcp.streams.open(session, {
    lastEventId: request.headers.get("last-event-id"),
    expiresAt: expiryOf(caller),
    owner: streamOwner(caller.token),
  });
  return opened.ok ? sse(request, opened.stream) : tooManyStreams(request, null);
}
