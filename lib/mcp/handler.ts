/**
 * MCP Streamable HTTP on one path: POST (JSON-RPC; JSON responses, or SSE
 * when the client takes it and there is more than the answer to send, and for
 * `subscriptions/listen`), GET (the session's server-to-client SSE stream,
 * see `streams.ts`), DELETE (end a session). The HTTP-level scope
 * gates run before any JSON-RPC handling: gate 1 before the body is read,
 * gates 2–4 right after the method is known, gate 5 before an inline query runs.
 *
 * The message itself (media types, size, UTF-8, JSON, id) is read in
 * `_read_message.ts`. Over 600 lines on purpose: the five gates, the protocol
 * revision and the methods' answers read in the order a request meets them.
 *
 * @module
 */
import {
  authenticate,
  formatBearerChallenge,
  type RequestAuthorization,
  resolveIdentity,
} from "../auth/mod.ts";
import { AuthError, clipForMessage, type RouterError } from "../errors.ts";
import { callTool, toolText } from "./call.ts";
import { checkCallAllLevels, checkInitialize, checkRequest } from "./policy.ts";
import {
  ANONYMOUS,
  type Caller,
  isRecord,
  json,
  type JsonRpcId,
  rpcError as rpcErrorOf,
  scopeDenied,
  withCors,
} from "./respond.ts";
import { isLogLevel, logNotification, passes } from "./logging.ts";
import { issueSessionId, verifySessionId } from "./session.ts";
import { checkId, invalidMessage, isResponse, readMessage } from "./_read_message.ts";
import { streamOwner } from "./streams.ts";
import type { McpDeps, McpState } from "./state.ts";
import type { Telemetry } from "../telemetry/mod.ts";
import {
  checkSession,
  expiryOf,
  handleGet,
  sse,
  sseOf,
  subjectOf,
  tooManyStreams,
} from "./stream_http.ts";
import {
  MODERN_PROTOCOL_VERSION,
  SESSION_PROTOCOL_VERSIONS,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "./versions.ts";

/** Session revisions with structured tool output (`outputSchema`, `structuredContent`). */
const STRUCTURED_VERSIONS: ReadonlySet<string> = new Set(["2025-11-25", "2025-06-18"]);

const PROTOCOL_META = "io.modelcontextprotocol/protocolVersion";
/** Longest error text put in a log notification (the whole text is in the result). */
const LOG_TEXT_LIMIT = 2000;
const SERVER_INFO = { name: "gw-router", version: "0.43.0" } as const;

/** Loopback origins cannot be forged by DNS rebinding; local browser clients use them. */
const LOOPBACK_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/;

function rpcError(
  request: Request,
  id: JsonRpcId,
  status: number,
  code: number,
  message: string,
  options: { readonly headers?: HeadersInit; readonly data?: unknown } = {},
): Response {
  return rpcErrorOf(request, id, { status, code, message, ...options });
}

function authErrorResponse(request: Request, error: AuthError): Response {
  const retryAfter = error.details.retry_after;
  const status = error.code === "KEYS_UNAVAILABLE" ? 503 : 400;
  return rpcError(request, null, status, status === 503 ? -32002 : -32600, error.message, {
    headers: {
      ...(error.challenge === "" ? {} : { "www-authenticate": error.challenge }),
      ...(typeof retryAfter === "number" ? { "retry-after": String(retryAfter) } : {}),
    },
  });
}

/**
 * Without `mcp.oauth`, who calls is settled as on `/graphql`: a token sent must
 * verify against `authentication.jwt` (its identity runs the tools), and
 * `authorization.require_authentication` needs one. No scope gates apply.
 */
async function routerIdentity(
  request: Request,
  authorization: RequestAuthorization | undefined,
  telemetry: Telemetry | null,
): Promise<Caller | Response> {
  if (authorization === undefined) return ANONYMOUS;
  // MCP authenticates with bearer tokens in the header only (OAuth 2.1 / MCP
  // authorization spec): never from a cookie, as never from the URL.
  const identity = await resolveIdentity(request, { authorization, cookie: false });
  if (identity.ok) {
    return identity.token === null
      ? ANONYMOUS
      : { token: identity.token, scopes: identity.token.scopeSet };
  }
  return identityRefused(request, identity.error, telemetry);
}

/** 401 (no or a bad token), 400 (token in two places), else 503 (keys not loaded, or failed). */
function identityRefused(
  request: Request,
  error: RouterError,
  telemetry: Telemetry | null,
): Response {
  if (error.code !== "UNAUTHENTICATED") {
    if (error instanceof AuthError) return authErrorResponse(request, error);
    return rpcError(request, null, 503, -32002, error.message);
  }
  telemetry?.metrics?.mcpDenied("token");
  const challenge = error instanceof AuthError ? error.challenge : "";
  return rpcError(request, null, 401, -32001, error.message, {
    headers: challenge === "" ? {} : { "www-authenticate": challenge },
  });
}

/** Gate 1 and authentication. Returns the caller or the 401/403 response. */
async function authorize(
  request: Request,
  deps: McpDeps,
  mcp: McpState,
): Promise<Caller | Response> {
  const telemetry = deps.telemetry ?? null;
  if (!mcp.oauth || mcp.auth === null) {
    return await routerIdentity(request, deps.authorization, telemetry);
  }
  const result = await authenticate(request, mcp.auth);
  if (!result.ok && result.error.code !== "UNAUTHENTICATED") {
    // 400 invalid_request (token in header and query) or 503 (no signing keys yet).
    return authErrorResponse(request, result.error);
  }
  if (!result.ok || result.token === null) {
    const description = result.ok ? "A bearer token is required" : result.error.message;
    const challenge = formatBearerChallenge(mcp.policy.initialize, {
      ...(result.ok ? {} : { error: "invalid_token" as const, errorDescription: description }),
      resourceMetadata: mcp.resourceMetadataUrl,
    });
    telemetry?.metrics?.mcpDenied("token");
    return rpcError(request, null, 401, -32001, description, {
      headers: { "www-authenticate": challenge },
    });
  }
  const caller = { token: result.token, scopes: result.token.scopeSet };
  const decision = checkInitialize(mcp.policy, caller.scopes);
  return decision.allow
    ? caller
    : scopeDenied(request, { mcp, caller, decision, id: null, telemetry });
}

function negotiate(requested: unknown): string {
  return typeof requested === "string" &&
      (SESSION_PROTOCOL_VERSIONS as readonly string[]).includes(requested)
    ? requested
    : SESSION_PROTOCOL_VERSIONS[0];
}

/** Session revisions: tool-list changes on the GET stream, and the logging utility. */
const SESSION_CAPABILITIES = Object.freeze({ tools: { listChanged: true }, logging: {} });
/** 2026-07-28: tool-list changes on `subscriptions/listen` streams. */
const MODERN_CAPABILITIES = Object.freeze({ tools: { listChanged: true } });

function metaVersion(params: unknown): string | undefined {
  if (!isRecord(params) || !isRecord(params._meta)) return undefined;
  const version = params._meta[PROTOCOL_META];
  return typeof version === "string" ? version : undefined;
}

/**
 * A POST: the message read (media types, size, UTF-8, depth, JSON, one key a
 * name, JSON-RPC 2.0), its id checked, the protocol revision and session
 * settled, the scope gates passed, then the method answered.
 */
async function handlePost(
  request: Request,
  deps: McpDeps,
  mcp: McpState,
  caller: Caller,
): Promise<Response> {
  const msg = await readMessage(request, {
    maxBodyBytes: mcp.maxBodyBytes,
    limits: deps.engine.limits,
  });
  if (msg instanceof Response) return msg;
  const rawId = msg.id;
  const isRequest = rawId !== undefined;
  const badId = checkId(request, rawId);
  if (badId !== null) return badId;
  const id: JsonRpcId = isRequest ? rawId as string | number : null;
  if (msg.method === undefined && isResponse(msg)) {
    // A response or error from the client: nothing to do.
    return new Response(null, { status: 202, headers: withCors(request, new Headers()) });
  }
  if (typeof msg.method !== "string") {
    return rpcError(request, null, 400, -32600, invalidMessage(msg.method !== undefined));
  }
  const method = msg.method;
  const params = msg.params;
  const protocol = await settleProtocol(request, { mcp, caller, id, method, params });
  if (protocol instanceof Response) return protocol;
  if (!isRequest) {
    return new Response(null, { status: 202, headers: withCors(request, new Headers()) });
  }
  const { modern, headerVersion } = protocol;
  // Without the header a session client speaks 2025-03-26 (transport spec).
  const structured = modern || (headerVersion !== null && STRUCTURED_VERSIONS.has(headerVersion));
  const toolName = method === "tools/call" && isRecord(params) && typeof params.name === "string"
    ? params.name
    : undefined;
  if (mcp.oauth) {
    const decision = mcp.challengeAllLevels && method === "tools/call"
      ? checkCallAllLevels(mcp.policy, caller.scopes, toolName)
      : checkRequest(mcp.policy, caller.scopes, method, toolName);
    if (!decision.allow) {
      return scopeDenied(request, { mcp, caller, decision, id, telemetry: deps.telemetry ?? null });
    }
  }
  return await answerMethod({
    request,
    deps,
    mcp,
    caller,
    id,
    method,
    params,
    modern,
    structured,
    session: protocol.session,
    toolName,
  });
}

/** The protocol a message speaks: the stateless revision, or a session revision and its session. */
interface Protocol {
  /** The stateless revision (`MODERN_PROTOCOL_VERSION`). */
  readonly modern: boolean;
  /** The verified session (session revisions, after initialize). */
  readonly session: string | null;
  readonly headerVersion: string | null;
}

/**
 * The message's protocol revision: the stateless one (its routing headers
 * agreeing with the body, its version the one served), `initialize`, or a
 * session revision with a verified session; else the error response.
 */
async function settleProtocol(
  request: Request,
  message: {
    readonly mcp: McpState;
    readonly caller: Caller;
    readonly id: JsonRpcId;
    readonly method: string;
    readonly params: unknown;
  },
): Promise<Protocol | Response> {
  const { mcp, caller, id, method } = message;
  const headerVersion = request.headers.get("mcp-protocol-version");
  const requestedMeta = metaVersion(message.params);
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
      const shown = clipForMessage(String(requested));
      return rpcError(request, id, 400, -32022, `Unsupported protocol version: ${shown}`, {
        data: { supported: [...SUPPORTED_PROTOCOL_VERSIONS], requested: shown },
      });
    }
    return { modern, session: null, headerVersion };
  }
  // Sessions start at initialize: nothing to check.
  if (method === "initialize") return { modern, session: null, headerVersion };
  if (
    headerVersion !== null &&
    !(SESSION_PROTOCOL_VERSIONS as readonly string[]).includes(headerVersion)
  ) {
    return rpcError(
      request,
      id,
      400,
      -32600,
      `Unsupported MCP-Protocol-Version: ${clipForMessage(headerVersion)}`,
    );
  }
  const checked = await checkSession(request, { mcp, caller, id });
  if (checked instanceof Response) return checked;
  return { modern, session: checked, headerVersion };
}

/** A JSON-RPC request past the gates, with what its method's answer needs. */
interface MethodCall {
  readonly request: Request;
  readonly deps: McpDeps;
  readonly mcp: McpState;
  readonly caller: Caller;
  readonly id: JsonRpcId;
  readonly method: string;
  readonly params: unknown;
  readonly modern: boolean;
  /** The revision has structured tool output. */
  readonly structured: boolean;
  readonly session: string | null;
  readonly toolName: string | undefined;
}

/** The 200 with `result` (marked complete on the stateless revision). */
function resultResponse(
  call: MethodCall,
  result: Record<string, unknown>,
  headers: HeadersInit = {},
): Response {
  return json(
    call.request,
    {
      jsonrpc: "2.0",
      id: call.id,
      result: call.modern ? { resultType: "complete", ...result } : result,
    },
    { status: 200, headers },
  );
}

/** Answers a request by its method. */
async function answerMethod(call: MethodCall): Promise<Response> {
  const { request, deps, mcp, id, method } = call;
  switch (method) {
    case "initialize": {
      const params = call.params;
      const version = negotiate(isRecord(params) ? params.protocolVersion : undefined);
      const sessionId = await issueSessionId(mcp.sessionKey, subjectOf(call.caller), {
        now: mcp.now(),
      });
      return resultResponse(call, {
        protocolVersion: version,
        capabilities: SESSION_CAPABILITIES,
        serverInfo: SERVER_INFO,
        instructions:
          `Tools execute GraphQL operations of the ${deps.config.mcp.graph_name} graph.`,
      }, { "mcp-session-id": sessionId });
    }
    case "server/discover":
      return resultResponse(call, {
        supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
        capabilities: MODERN_CAPABILITIES,
        serverInfo: SERVER_INFO,
        instructions:
          `Tools execute GraphQL operations of the ${deps.config.mcp.graph_name} graph.`,
        ttlMs: 0,
        cacheScope: "private",
        _meta: { "io.modelcontextprotocol/serverInfo": SERVER_INFO },
      });
    case "ping":
      return resultResponse(call, {});
    case "logging/setLevel":
      return setLogLevel(call);
    case "subscriptions/listen":
      return listen(call);
    case "tools/list":
      return resultResponse(
        call,
        call.modern
          ? { tools: mcp.toolList, ttlMs: 0, cacheScope: "private" }
          : { tools: call.structured ? mcp.toolList : mcp.legacyToolList },
      );
    case "tools/call":
      return await toolsCall(call);
    default:
      return rpcError(request, id, 200, -32601, `Method not found: ${method}`);
  }
}

/** `logging/setLevel`: the session's level for log notifications. */
function setLogLevel(call: MethodCall): Response {
  const { request, id, session } = call;
  const level = isRecord(call.params) ? call.params.level : undefined;
  if (session === null) {
    return rpcError(request, id, 200, -32601, `Method not found: ${call.method}`);
  }
  if (!isLogLevel(level)) {
    return rpcError(
      request,
      id,
      200,
      -32602,
      "Invalid params: level must be an RFC 5424 level",
    );
  }
  call.mcp.streams.setLevel(session, level);
  return resultResponse(call, {});
}

/** `subscriptions/listen` (stateless revision): a stream of the notifications asked for. */
function listen(call: MethodCall): Response {
  const { request, id, mcp } = call;
  if (!call.modern) return rpcError(request, id, 200, -32601, `Method not found: ${call.method}`);
  // Its answer is an event stream: a client that cannot take one would wait on bytes it drops.
  const accept = request.headers.get("accept");
  if (accept !== null && !/text\/event-stream|\*\/\*|text\/\*/i.test(accept)) {
    return rpcError(
      request,
      id,
      406,
      -32600,
      "subscriptions/listen answers with an event stream: Accept must include text/event-stream",
    );
  }
  const filter = isRecord(call.params) ? call.params.notifications : undefined;
  if (!isRecord(filter)) {
    return rpcError(request, id, 200, -32602, "Invalid params: notifications is required");
  }
  const opened = mcp.streams.listen(id!, {
    toolsListChanged: filter.toolsListChanged === true,
    expiresAt: expiryOf(call.caller),
    owner: streamOwner(call.caller.token),
  });
  if (!opened.ok) return tooManyStreams(request, id);
  return sse(request, opened.stream);
}

/** `tools/call`: runs the tool; a failure is also logged to a session that asked for errors. */
async function toolsCall(call: MethodCall): Promise<Response> {
  const { request, deps, mcp, caller, id, toolName, session, params } = call;
  const tool = toolName === undefined ? undefined : mcp.toolsByName.get(toolName);
  if (!tool) {
    return rpcError(
      request,
      id,
      200,
      -32602,
      `Unknown tool: ${toolName === undefined ? "(missing name)" : clipForMessage(toolName)}`,
    );
  }
  const args = isRecord(params) && params.arguments !== undefined ? params.arguments : {};
  if (!isRecord(args)) {
    return resultResponse(call, { ...toolText("Invalid arguments: expected an object", true) });
  }
  const structured = call.structured;
  const result = await callTool({ deps, mcp, request, caller, id, structured }, { tool, args });
  if (result instanceof Response) return result;
  const response = resultResponse(call, { ...result });
  if (!result.isError || session === null || !passes("error", mcp.streams.level(session))) {
    return response;
  }
  // The session asked for error logs: the failure goes before the result
  // on this POST's own stream when the client takes one, else on its GET stream.
  const text = result.content[0]?.text ?? "";
  const note = logNotification("error", {
    tool: tool.name,
    message: text.length > LOG_TEXT_LIMIT ? `${text.slice(0, LOG_TEXT_LIMIT)}…` : text,
  });
  if (/text\/event-stream/i.test(request.headers.get("accept") ?? "")) {
    return sseOf(request, [note, await response.json()]);
  }
  mcp.streams.send(session, note);
  return response;
}

/** A client that accepts only `text/event-stream` gets the one JSON-RPC message as an SSE event. */
async function asStream(request: Request, response: Response): Promise<Response> {
  const accept = request.headers.get("accept") ?? "";
  if (
    response.status !== 200 || !/text\/event-stream/i.test(accept) ||
    response.headers.get("content-type") === "text/event-stream" ||
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
    return rpcError(request, null, 403, -32000, `Origin ${clipForMessage(origin)} is not allowed`);
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
  const caller = await authorize(request, deps, mcp);
  if (caller instanceof Response) {
    await request.body?.cancel();
    return caller;
  }
  switch (request.method) {
    case "POST":
      return asStream(request, await handlePost(request, deps, mcp, caller));
    case "GET":
      return handleGet(request, mcp, caller);
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
      mcp.streams.end(sessionId);
      return new Response(null, { status: 204, headers: withCors(request, new Headers()) });
    }
    default:
      await request.body?.cancel();
      return rpcError(
        request,
        null,
        405,
        -32000,
        `Method ${clipForMessage(request.method)} is not allowed on the MCP endpoint`,
        {
          headers: { allow: "POST, GET, DELETE" },
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
      json(request, { error: "not_found", error_description: "MCP is not enabled" }, {
        status: 404,
      }),
    );
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    return Promise.resolve(
      json(request, { error: "method_not_allowed" }, {
        status: 405,
        headers: { allow: "GET, HEAD" },
      }),
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
