/**
 * The Connect facet's edge: reads the message (size-limited, after gzip),
 * authenticates, runs the operation in-process through the engine under the
 * call's deadline, and writes the Connect response (ETag and Cache-Control on
 * GET). Everything it decides is delegated to the pure codec.
 *
 * @module
 */
import {
  authenticationRequired,
  authorizeOperation,
  type RequestAuthorization,
  resolveIdentity,
  type VerifiedToken,
} from "../auth/mod.ts";
import type { Config } from "../config/mod.ts";
import { AuthError, type RouterError } from "../errors.ts";
import { operationStage, PluginRefusal, pluginRequestOf } from "../plugins/mod.ts";
import {
  type Engine,
  execute,
  mergeCacheControl,
  prepare,
  type PrepareResult,
  type ResponseHeaderCollector,
} from "../engine/mod.ts";
import type { ExecutionResult } from "../engine/mod.ts";
import { utf8Length } from "../limited_body.ts";
import { onAbort, signalOf } from "../cancellation.ts";
import { requestIdOf } from "../request/mod.ts";
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
  connectCodeOfStatus,
  connectErrorResponse,
  type ConnectFailure,
  connectFailure,
  failureOfRouterError,
  primaryError,
} from "./errors.ts";
import { encodeResponseMessage } from "./json.ts";
import { readMessage } from "./_read_message.ts";
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
  /**
   * The state's authorization (token verification, `require_authentication`,
   * `reject_operation_if_unauthorized`); absent: every caller is anonymous.
   */
  readonly authorization?: RequestAuthorization;
}

const ENCODER = new TextEncoder();

/**
 * The caller's identity (null: anonymous) and the method's prepared operation,
 * or the failure to answer with: the identity settled, then the one
 * authorization door (`authorizeOperation`). The plugins' operation stage runs
 * once the message is decoded (it sees the variables).
 */
async function checkAccess(
  request: Request,
  call: ConnectCall,
  deps: ConnectDeps,
): Promise<
  | { readonly failure: ConnectFailure }
  | { readonly token: VerifiedToken | null; readonly prepared: PreparedCall }
> {
  let token: VerifiedToken | null = null;
  const authorization = deps.authorization;
  if (authorization !== undefined) {
    const resolved = await resolveIdentity(request, { authorization });
    if (!resolved.ok) return { failure: authFailure(resolved.error) };
    token = resolved.token;
  }
  const operation = call.method.operation;
  const prepared = prepare(deps.engine, { query: operation.text, operationName: operation.name });
  if (!prepared.ok) {
    return {
      failure: connectFailure(
        codeOfGraphQLErrors(prepared.errors, { requestError: true }),
        prepared.errors[0]?.message ?? "The operation is invalid",
        { graphqlErrors: prepared.errors },
      ),
    };
  }
  const refused = authorizeOperation(prepared.operation, {
    identity: token,
    authorization,
    supergraph: deps.engine.model,
    subject: `Method ${call.method.name}`,
  });
  if (refused !== null) return { failure: authFailure(refused) };
  return { token, prepared };
}

/** A plugin's refusal (coded by its status) or failure as a Connect failure. */
function stageFailure(error: RouterError): ConnectFailure {
  if (!(error instanceof PluginRefusal)) {
    return failureOfRouterError(error) ?? connectFailure("internal", "Internal error");
  }
  return connectFailure(connectCodeOfStatus(error.status), error.message, {
    status: error.status,
    graphqlErrors: error.errors,
  });
}

const AUTH_CODES = {
  UNAUTHENTICATED: "unauthenticated",
  FORBIDDEN: "permission_denied",
  BAD_REQUEST: "invalid_argument",
  KEYS_UNAVAILABLE: "unavailable",
  // Key sources that failed to load: verification is unavailable.
  INTERNAL: "unavailable",
} as const;

function authFailure(error: RouterError): ConnectFailure {
  const code = AUTH_CODES[error.code as keyof typeof AUTH_CODES] ?? "permission_denied";
  const retryAfter = error.details.retry_after;
  const challenge = error instanceof AuthError ? error.challenge : "";
  return connectFailure(code, error.message, {
    headers: {
      ...(challenge === "" ? {} : { "www-authenticate": challenge }),
      ...(typeof retryAfter === "number" ? { "retry-after": String(retryAfter) } : {}),
    },
  });
}

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
  /** The method's operation, prepared and authorized. */
  readonly prepared: PreparedCall;
  /** The `@policy` names the plugins' operation stage granted. */
  readonly policies?: ReadonlySet<string>;
  /** Where the subgraph answer headers go (`headers.*.response`); absent: not read. */
  readonly collected?: ResponseHeaderCollector;
}

/** A method's operation, prepared. */
type PreparedCall = Extract<PrepareResult, { readonly ok: true }>;

async function run(
  request: Request,
  call: ConnectCall,
  input: CallInput,
  deps: ConnectDeps,
): Promise<CodecResult<ExecutionResult>> {
  const operation = call.method.operation;
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
    const stages = pluginRequestOf(request)?.stages;
    const execution = execute(deps.engine, input.prepared.operation, {
      variables: input.variables,
      identity: input.identity,
      headers: request.headers,
      requestId: requestIdOf(request),
      signal: controller.signal,
      ...(hooks ? { hooks } : {}),
      ...(stages ? { stages } : {}),
      ...(input.policies ? { policies: input.policies } : {}),
      ...(input.collected ? { subgraphHeaders: input.collected.add } : {}),
    });
    execution.catch(() => {}); // a rejection after the deadline is not an unhandled one
    const outcome = await Promise.race([execution, stopped.promise]);
    if (outcome !== null) {
      deps.telemetry?.operation(request, {
        prepared: input.prepared,
        result: outcome,
        query: operation.text,
      });
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
      operation: input.prepared.operation,
      variables: input.variables,
      identity: input.identity,
      headers: request.headers,
      requestId: requestIdOf(request),
      signal: controller.signal,
      plugin: pluginRequestOf(request),
      ...(input.policies ? { policies: input.policies } : {}),
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
  const access = await checkAccess(request, call, deps);
  if ("failure" in access) return refuse(access.failure);
  const text = await readMessage(request, call, state.maxMessageBytes);
  if (!text.ok) return refuse(text.failure);
  const variables = decodeCallMessage(call.method, text.value, { limits: deps.engine.limits });
  if (!variables.ok) return refuse(variables.failure);
  // Plugins' operation stage (issue 40): nothing to await without an onOperation hook.
  const staged = operationStage(request, {
    operation: access.prepared.operation,
    identity: access.token,
    variables: variables.value,
  });
  const outcome = staged === null ? null : await staged;
  if (outcome?.error) return refuse(stageFailure(outcome.error));
  const policies = outcome?.policies;
  if (call.method.streaming) {
    return await serveStream(request, call, {
      variables: variables.value,
      identity: access.token,
      prepared: access.prepared,
      ...(policies ? { policies } : {}),
    }, deps);
  }
  const collected = deps.engine.responseHeaders?.collect();
  const executed = await run(
    request,
    call,
    {
      variables: variables.value,
      identity: access.token,
      prepared: access.prepared,
      ...(policies ? { policies } : {}),
      ...(collected ? { collected } : {}),
    },
    deps,
  );
  if (!executed.ok) return connectErrorResponse(executed.failure);
  const failed = resultFailure(executed.value, { call, token: access.token, deps });
  if (failed !== null) return failed;
  return await unaryAnswer(request, {
    call,
    state,
    deps,
    data: executed.value.data!, // resultFailure answered a result without data
    collected,
  });
}

/**
 * A result that is not an answer: its GraphQL errors as a Connect error (an
 * anonymous caller denied is told to authenticate), or no data; else null.
 */
function resultFailure(
  result: ExecutionResult,
  at: {
    readonly call: ConnectCall;
    readonly token: VerifiedToken | null;
    readonly deps: ConnectDeps;
  },
): Response | null {
  const { call, deps } = at;
  if (result.errors !== undefined && result.errors.length > 0) {
    const code = codeOfGraphQLErrors(result.errors, { requestError: !("data" in result) });
    // RFC 6750 §3: a caller who sent no token is told to authenticate (401 and a challenge),
    // not that it may not, when tokens are verified at all.
    const anonymous = at.token === null && (deps.authorization?.auth ?? null) !== null;
    const challenge = code === "permission_denied" && anonymous
      ? authenticationRequired(`Method ${call.method.name}`)
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
  return null;
}

/**
 * A unary call's answer: the response message as JSON, with the subgraph
 * headers let through; over GET, also an ETag, `Vary` and `Cache-Control`
 * (a 304 when the client's copy matches).
 */
async function unaryAnswer(
  request: Request,
  answer: {
    readonly call: ConnectCall;
    readonly state: NonNullable<ConnectDeps["connect"]>;
    readonly deps: ConnectDeps;
    readonly data: NonNullable<ExecutionResult["data"]>;
    readonly collected: ResponseHeaderCollector | undefined;
  },
): Promise<Response> {
  const { call, state, deps, collected } = answer;
  const body = JSON.stringify(encodeResponseMessage(call.method.response, answer.data));
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
