/**
 * The Connect facet's edge: reads the message (size-limited, after gzip),
 * authenticates, runs the operation in-process through the engine under the
 * call's deadline, and writes the Connect response (ETag and Cache-Control on
 * GET). Everything it decides is delegated to the pure codec.
 *
 * @module
 */
import {
  authenticate,
  type AuthState,
  checkRequirement,
  type OperationRequirement,
  type VerifiedToken,
} from "../auth/mod.ts";
import type { Config } from "../config/types.ts";
import type { AuthError } from "../errors.ts";
import {
  type Engine,
  execute,
  mergeCacheControl,
  prepare,
  type ResponseHeaderCollector,
} from "../engine/mod.ts";
import type { ExecutionResult } from "../engine/types.ts";
import { readGzipLimited, utf8Length } from "../limited_body.ts";
import { onAbort, signalOf } from "../cancellation.ts";
import { bodyOf, requestIdOf } from "../request/context.ts";
import type { Logger } from "../log/mod.ts";
import type { OperationRegistry } from "../operations/mod.ts";
import {
  cacheControl,
  type CodecResult,
  type ConnectCall,
  decodeCallMessage,
  matchesEtag,
  resolveCall,
} from "./codec.ts";
import {
  codeOfGraphQLErrors,
  connectErrorResponse,
  type ConnectFailure,
  connectFailure,
  failureOfRouterError,
  primaryError,
} from "./errors.ts";
import { encodeResponseMessage } from "./json.ts";
import { decodeRequestEnvelope } from "./stream.ts";
import {
  connectStreamFailure,
  connectStreamResponse,
  type ConnectSubscribe,
  failureOfResultErrors,
} from "./stream_response.ts";
import type { ContractModel } from "./model.ts";
import type { Telemetry } from "../telemetry/mod.ts";
import { withBodySize } from "../telemetry/access_log.ts";

/** Compiled Connect methods (built once per router state). */
export interface ConnectState {
  /** `/<package>.<Service>/`. */
  readonly prefix: string;
  /** The contract: methods, messages, enums. */
  readonly contract: ContractModel;
  /** `@authenticated` / `@requiresScopes` of each method (by RPC name). */
  readonly requirements: ReadonlyMap<string, OperationRequirement>;
  /** Token verification, when authentication is configured; else null. */
  readonly auth: Promise<AuthState> | null;
  /** `connect_rpc.max_message_bytes`. */
  readonly maxMessageBytes: number;
  /** `connect_rpc.get_cache_max_age`, seconds. */
  readonly cacheMaxAge: number;
  /**
   * What a cacheable GET answer depends on besides its URL (see
   * {@linkcode cacheKeyHeaders}): its `Vary` names, and whether a header
   * rule matches names by pattern (then no shared cache may keep it).
   */
  readonly cacheKey: CacheKeyHeaders;
}

/** The request headers a Connect GET answer may depend on. */
export interface CacheKeyHeaders {
  /** Lower-case names: the token header, and every header a `named` rule forwards to subgraphs. */
  readonly vary: readonly string[];
  /** True when a `matching` rule forwards headers by pattern (a Vary cannot name them). */
  readonly byPattern: boolean;
}

/**
 * The headers a Connect GET answer depends on: a subgraph may answer
 * differently for every header the router forwards to it, so a shared cache
 * must key on them (`Vary`) or not keep the answer at all.
 * @param config The router config.
 * @returns The names and whether any rule matches by pattern.
 */
export function cacheKeyHeaders(config: Config): CacheKeyHeaders {
  const vary = new Set(["authorization"]);
  const header = config.authentication.jwt.header_name;
  if (header) vary.add(header.toLowerCase());
  let byPattern = false;
  const rules = [config.headers.all, ...Object.values(config.headers.subgraphs)]
    .flatMap((group) => group.request);
  for (const rule of rules) {
    if (rule.op !== "propagate") continue;
    if (rule.named !== undefined) vary.add(rule.named.toLowerCase());
    if (rule.matching !== undefined) byPattern = true;
  }
  return { vary: [...vary], byPattern };
}

/** What the Connect handler reads from the router state. */
export interface ConnectDeps {
  /**
   * Starts a subscription (the engine's, handed in by the edge); absent or
   * null: server-streaming methods answer `unimplemented`.
   */
  readonly subscribe?: ConnectSubscribe | null;
  readonly config: Config;
  readonly engine: Engine;
  readonly operations: OperationRegistry;
  readonly connect: ConnectState | null;
  readonly log: Logger;
  /** Metrics and spans (`lib/telemetry`); absent or null when off. */
  readonly telemetry?: Telemetry | null;
}

const DECODER = new TextDecoder("utf-8", { fatal: true });
const ENCODER = new TextEncoder();

function tooLarge(limit: number): ConnectFailure {
  return connectFailure(
    "resource_exhausted",
    `The request message exceeds the limit of ${limit} bytes (measured after decompression)`,
  );
}

/** Gunzips `bytes`, refusing once the output passes `limit`. */
async function gunzipLimited(
  bytes: Uint8Array,
  limit: number,
): Promise<CodecResult<Uint8Array>> {
  const failures = {
    tooLarge: tooLarge(limit),
    malformed: connectFailure("invalid_argument", "Malformed gzip data in the request message"),
  };
  // Inflated in small slices and counted as it runs (one shared reader: lib/limited_body.ts).
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream();
  try {
    const value = await readGzipLimited(stream, limit, {
      tooLarge: () => new GunzipRefused(failures.tooLarge),
      broken: () => new GunzipRefused(failures.malformed),
    });
    return { ok: true, value };
  } catch (error) {
    if (error instanceof GunzipRefused) return { ok: false, failure: error.failure };
    throw error;
  }
}

/** Carries a Connect failure out of `readStreamLimited`. */
class GunzipRefused extends Error {
  readonly failure: ConnectFailure;
  constructor(failure: ConnectFailure) {
    super(failure.message);
    this.failure = failure;
  }
}

/**
 * The call's message as text, at most `limit` bytes after decompression.
 * The router's edge (`lib/http/`) has already buffered a POST body within
 * `max_request_body_bytes`, so only the Connect limit is checked here.
 */
async function readMessage(
  request: Request,
  call: ConnectCall,
  limit: number,
): Promise<CodecResult<string>> {
  const source = call.source;
  let raw: Uint8Array;
  let gzip = source.compression === "gzip";
  if (source.kind === "body") raw = await bodyOf(request);
  else if (source.kind === "envelope") {
    const envelope = decodeRequestEnvelope(await bodyOf(request), {
      limit,
      compression: source.compression,
    });
    if (!envelope.ok) return envelope;
    raw = envelope.value.data;
    gzip = envelope.value.compressed;
  } else if (typeof source.message !== "string") raw = source.message;
  else {
    return ENCODER.encode(source.message).byteLength > limit
      ? { ok: false, failure: tooLarge(limit) }
      : { ok: true, value: source.message };
  }
  const bytes: CodecResult<Uint8Array> = gzip
    ? await gunzipLimited(raw, limit)
    : raw.byteLength > limit
    ? { ok: false, failure: tooLarge(limit) }
    : { ok: true, value: raw };
  if (!bytes.ok) return bytes;
  try {
    return { ok: true, value: DECODER.decode(bytes.value) };
  } catch {
    return {
      ok: false,
      failure: connectFailure("invalid_argument", "The request message is not valid UTF-8"),
    };
  }
}

/** The caller's identity (null: anonymous), or the failure to answer with. */
async function checkAccess(
  request: Request,
  state: ConnectState,
  call: ConnectCall,
  config: Config,
): Promise<{ readonly failure: ConnectFailure } | { readonly token: VerifiedToken | null }> {
  let token: VerifiedToken | null = null;
  if (state.auth !== null) {
    let auth: AuthState;
    try {
      auth = await state.auth;
    } catch {
      return {
        failure: connectFailure(
          "unavailable",
          "Token verification is unavailable: its key sources failed to load",
        ),
      };
    }
    const verified = await authenticate(request, auth);
    if (!verified.ok) return { failure: authFailure(verified.error) };
    token = verified.token;
  }
  const { require_authentication, reject_operation_if_unauthorized } = config.authorization;
  const requirement = reject_operation_if_unauthorized
    ? state.requirements.get(call.method.name) ?? NO_REQUIREMENT
    : NO_REQUIREMENT;
  const refused = checkRequirement(token, {
    requirement: token === null && require_authentication ? AUTHENTICATED : requirement,
    subject: `Method ${call.method.name}`,
  });
  return refused === null ? { token } : { failure: authFailure(refused) };
}

const AUTH_CODES = {
  UNAUTHENTICATED: "unauthenticated",
  FORBIDDEN: "permission_denied",
  BAD_REQUEST: "invalid_argument",
  KEYS_UNAVAILABLE: "unavailable",
} as const;

function authFailure(error: AuthError): ConnectFailure {
  const code = AUTH_CODES[error.code as keyof typeof AUTH_CODES] ?? "permission_denied";
  const retryAfter = error.details.retry_after;
  return connectFailure(code, error.message, {
    headers: {
      ...(error.challenge === "" ? {} : { "www-authenticate": error.challenge }),
      ...(typeof retryAfter === "number" ? { "retry-after": String(retryAfter) } : {}),
    },
  });
}

const AUTHENTICATED: OperationRequirement = Object.freeze({ authenticated: true, scopes: [] });
const NO_REQUIREMENT: OperationRequirement = Object.freeze({ authenticated: false, scopes: [] });

function deadlineFailure(timeoutMs: number | null): ConnectFailure {
  return connectFailure(
    "deadline_exceeded",
    `The call exceeded its deadline (Connect-Timeout-Ms: ${timeoutMs ?? "?"})`,
  );
}

/** What a call runs with: its decoded message and its caller. */
interface CallInput {
  readonly variables: Record<string, unknown>;
  readonly identity: VerifiedToken | null;
  /** Where the subgraph answer headers go (`headers.*.response`); absent: not read. */
  readonly collected?: ResponseHeaderCollector;
}

async function run(
  request: Request,
  call: ConnectCall,
  input: CallInput,
  deps: ConnectDeps,
): Promise<CodecResult<ExecutionResult>> {
  const operation = call.method.operation;
  const prepared = prepare(deps.engine, { query: operation.text, operationName: operation.name });
  if (!prepared.ok) {
    return {
      ok: false,
      failure: connectFailure(
        codeOfGraphQLErrors(prepared.errors, { requestError: true }),
        prepared.errors[0]?.message ?? "The operation is invalid",
        { graphqlErrors: prepared.errors },
      ),
    };
  }
  // A zero budget has passed already: nothing runs (a timer would let a fast answer win).
  if (call.timeoutMs === 0) return { ok: false, failure: deadlineFailure(0) };
  // The deadline (or the client going away) aborts the engine's subgraph fetches and
  // answers at once, without waiting for the engine to notice.
  const controller = new AbortController();
  const stopped = Promise.withResolvers<null>();
  let expired = false;
  const stop = () => {
    controller.abort();
    stopped.resolve(null);
  };
  const timer = call.timeoutMs === null ? undefined : setTimeout(() => {
    expired = true;
    stop();
  }, call.timeoutMs);
  const offClient = onAbort(signalOf(request), stop);
  try {
    const hooks = deps.telemetry?.scopeOf(request)?.hooks;
    const execution = execute(deps.engine, prepared.operation, {
      variables: input.variables,
      identity: input.identity,
      headers: request.headers,
      requestId: requestIdOf(request),
      signal: controller.signal,
      ...(hooks ? { hooks } : {}),
      ...(input.collected ? { subgraphHeaders: input.collected.add } : {}),
    });
    execution.catch(() => {}); // a rejection after the deadline is not an unhandled one
    const outcome = await Promise.race([execution, stopped.promise]);
    if (outcome !== null) {
      deps.telemetry?.operation(request, { prepared, result: outcome, query: operation.text });
    }
    if (outcome !== null && !controller.signal.aborted) return { ok: true, value: outcome };
    return {
      ok: false,
      failure: expired
        ? deadlineFailure(call.timeoutMs)
        : connectFailure("canceled", "The client canceled the call"),
    };
  } catch (error) {
    if (expired) return { ok: false, failure: deadlineFailure(call.timeoutMs) };
    // The engine's own refusals (RESPONSE_TOO_LARGE, …) say what was wrong.
    const known = failureOfRouterError(error);
    if (known !== null) return { ok: false, failure: known };
    deps.log.error("Connect call failed", { method: call.method.name, error: String(error) });
    return { ok: false, failure: connectFailure("internal", "Internal error") };
  } finally {
    clearTimeout(timer);
    offClient();
  }
}

/**
 * A server-streaming call (a subscription): prepares the operation, starts it
 * through `deps.subscribe` and streams its results until they end, fail, the
 * deadline passes or the client leaves (which aborts the subscription's
 * signal and returns its iterator, so the engine ends the upstream).
 */
async function serveStream(
  request: Request,
  call: ConnectCall,
  input: CallInput,
  deps: ConnectDeps,
): Promise<Response> {
  const subscribe = deps.subscribe ?? null;
  if (subscribe === null) {
    return connectStreamFailure(connectFailure(
      "unimplemented",
      `Method ${call.method.name} is a subscription, and this router serves no subscriptions`,
    ));
  }
  const operation = call.method.operation;
  const prepared = prepare(deps.engine, { query: operation.text, operationName: operation.name });
  if (!prepared.ok) return connectStreamFailure(failureOfResultErrors(prepared.errors, true));
  if (call.timeoutMs === 0) return connectStreamFailure(deadlineFailure(0));
  const controller = new AbortController();
  const offClient = onAbort(signalOf(request), () => controller.abort());
  const stop = () => {
    controller.abort();
    offClient();
  };
  let started: Awaited<ReturnType<ConnectSubscribe>>;
  try {
    started = await subscribe({
      operation: prepared.operation,
      variables: input.variables,
      identity: input.identity,
      headers: request.headers,
      requestId: requestIdOf(request),
      signal: controller.signal,
    });
  } catch (error) {
    stop();
    const known = failureOfRouterError(error);
    if (known !== null) return connectStreamFailure(known);
    deps.log.error("Connect stream failed to start", {
      method: call.method.name,
      error: String(error),
    });
    return connectStreamFailure(connectFailure("internal", "Internal error"));
  }
  if (!(Symbol.asyncIterator in started)) {
    stop();
    const errors = started.errors ?? [];
    return connectStreamFailure(
      errors.length > 0
        ? failureOfResultErrors(errors, !("data" in started))
        : connectFailure("internal", "The subscription did not start"),
    );
  }
  return connectStreamResponse(started, {
    method: call.method,
    timeoutMs: call.timeoutMs,
    signal: controller.signal,
    onEnd: (end) => {
      stop();
      if (end.kind === "failed" && end.failure.code === "internal") {
        deps.log.error("Connect stream failed", {
          method: call.method.name,
          error: String(end.error ?? end.failure.message),
        });
      }
    },
  });
}

async function etagOf(body: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", ENCODER.encode(body));
  const hex = Array.from(
    new Uint8Array(digest).slice(0, 16),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
  return `"${hex}"`;
}

/**
 * Handles `POST/GET /<package>.<Service>/<Method>`: a Connect unary call of
 * one operation. Never throws: every failure is a Connect error response.
 *
 * @example Connect disabled: every path is an unknown method
 * ```ts
 * import assert from "node:assert/strict";
 * import { type ConnectDeps, handleConnect } from "./handler.ts";
 * const deps = { connect: null } as unknown as ConnectDeps;
 * const response = await handleConnect(new Request("http://localhost/a.v1.S/M"), deps);
 * assert.equal(response.status, 404);
 * assert.equal((await response.json()).code, "unimplemented");
 * ```
 * @param request The request.
 * @param deps Router state.
 * @returns The response.
 */
export async function handleConnect(request: Request, deps: ConnectDeps): Promise<Response> {
  try {
    return await serve(request, deps);
  } catch (error) {
    deps.log.error("Connect call failed", {
      path: new URL(request.url).pathname,
      error: String(error),
    });
    return connectErrorResponse(connectFailure("internal", "Internal error"));
  }
}

async function serve(request: Request, deps: ConnectDeps): Promise<Response> {
  const state = deps.connect;
  if (state === null) {
    return connectErrorResponse(
      connectFailure("unimplemented", "Connect RPC is disabled (connect_rpc.enabled)", {
        status: 404,
      }),
    );
  }
  const resolved = resolveCall(state.contract, state.prefix, {
    method: request.method,
    url: new URL(request.url),
    headers: request.headers,
  });
  if (!resolved.ok) {
    await request.body?.cancel().catch(() => {});
    return connectErrorResponse(resolved.failure);
  }
  const call = resolved.value;
  // A stream's protocol is agreed once resolveCall accepted it: its refusals ride in the stream.
  const refuse = call.method.streaming ? connectStreamFailure : connectErrorResponse;
  // Who calls is settled before the message is decoded: a bad token, or an anonymous
  // call that must authenticate, costs no decoding and learns nothing from its errors.
  const access = await checkAccess(request, state, call, deps.config);
  if ("failure" in access) return refuse(access.failure);
  const text = await readMessage(request, call, state.maxMessageBytes);
  if (!text.ok) return refuse(text.failure);
  const variables = decodeCallMessage(call.method, text.value, { limits: deps.engine.limits });
  if (!variables.ok) return refuse(variables.failure);
  if (call.method.streaming) {
    return await serveStream(request, call, {
      variables: variables.value,
      identity: access.token,
    }, deps);
  }
  const collected = deps.engine.responseHeaders?.collect();
  const executed = await run(
    request,
    call,
    { variables: variables.value, identity: access.token, ...(collected ? { collected } : {}) },
    deps,
  );
  if (!executed.ok) return connectErrorResponse(executed.failure);
  const result = executed.value;
  if (result.errors !== undefined && result.errors.length > 0) {
    const code = codeOfGraphQLErrors(result.errors, { requestError: !("data" in result) });
    // RFC 6750 §3: a caller who sent no token is told to authenticate (401 and a challenge),
    // not that it may not, when tokens are verified at all.
    const anonymous = access.token === null && state.auth !== null;
    const challenge = code === "permission_denied" && anonymous
      ? checkRequirement(null, {
        requirement: AUTHENTICATED,
        subject: `Method ${call.method.name}`,
      })
      : null;
    return connectErrorResponse(connectFailure(
      challenge === null ? code : "unauthenticated",
      primaryError(result.errors)!.message,
      {
        graphqlErrors: result.errors,
        ...(challenge?.challenge ? { headers: { "www-authenticate": challenge.challenge } } : {}),
      },
    ));
  }
  if (result.data === null || result.data === undefined) {
    return connectErrorResponse(connectFailure("internal", "The operation returned no data"));
  }
  const body = JSON.stringify(encodeResponseMessage(call.method.response, result.data));
  const headers = new Headers({ "content-type": "application/json" });
  // The subgraph answer headers the response header rules let through (issue 43).
  collected?.apply(headers);
  const fromSubgraphs = headers.get("cache-control");
  // A large answer goes out counted until its client took it (unsent_answers.ts).
  const size = utf8Length(body);
  // The size goes on the answer: the access log then wraps nothing.
  const sent = () =>
    withBodySize(new Response(deps.engine.unsent.body(body, size), { status: 200, headers }), size);
  if (!call.get) return sent();
  const etag = await etagOf(body);
  headers.set("etag", etag);
  // Shared caches must not answer a request with credentials, or with headers the
  // subgraphs see, from another request's copy.
  const { vary, byPattern } = state.cacheKey;
  headers.set("vary", vary.join(", "));
  const own = cacheControl({
    maxAge: state.cacheMaxAge,
    authorized: byPattern || vary.some((name) => request.headers.has(name)),
  });
  // A subgraph's Cache-Control can only make the router's more restrictive.
  headers.set(
    "cache-control",
    fromSubgraphs === null ? own : mergeCacheControl([own, fromSubgraphs]) ?? own,
  );
  if (matchesEtag(request.headers.get("if-none-match"), etag)) {
    headers.delete("content-type");
    return new Response(null, { status: 304, headers });
  }
  return sent();
}
