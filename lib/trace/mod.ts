/**
 * Advanced Request Tracing (ART): on request, the GraphQL response carries the
 * execution trace of its plan at `extensions.trace`, in Cosmo Router's layout.
 *
 * The GraphQL facet calls {@linkcode startTrace} per request. `off` costs one
 * header look-up (the engine gets no observer, so nothing is timed or
 * copied); `rejected` is answered with HTTP 400 (the token is never echoed or
 * logged); `on` carries the observer for the engine, and
 * {@linkcode finishTrace} puts the trace into the result. Traced responses
 * must be sent with `Cache-Control: no-store` ({@linkcode TRACED_RESPONSE_HEADERS}).
 *
 * @module
 */
import denoJson from "../../deno.json" with { type: "json" };
import { DEFAULT_UNMASKED_TRACE_HEADERS } from "../config/mod.ts";
import type { Config } from "../config/mod.ts";
import type { ExecutionObserver, ExecutionResult } from "../engine/mod.ts";
import { decideTrace, type TraceAdmission, traceAdmission } from "./gate.ts";
import { maskedHeaderSet, unmaskedHeaderSet } from "./headers.ts";
import type { TraceOptions } from "./options.ts";
import { createTraceRecorder, type InboundBody, type TraceRecorder } from "./recorder.ts";
import { importTraceVerificationKey, type TraceTokenClaims, verifyTraceToken } from "./token.ts";

export * from "./duration.ts";
export * from "./gate.ts";
export * from "./headers.ts";
export * from "./options.ts";
export * from "./recorder.ts";
export * from "./token.ts";
export type * from "./types.ts";

/** Compiled trace gate and recorder settings, built once per state. */
export interface TraceState {
  /** `engine.enable_request_tracing`. */
  readonly enabled: boolean;
  /** Who may trace: `dev_mode`, `forced` (no token) or `token`. */
  readonly admission: TraceAdmission;
  /** Key of `engine.request_tracing_public_key_file`, or null. */
  readonly verificationKey: CryptoKey | null;
  /** `engine.request_tracing_issuer` / `_audience` (null: not checked). */
  readonly claims: TraceTokenClaims;
  /** Lower-case header names masked in traces (even when allowed). */
  readonly maskedHeaders: ReadonlySet<string>;
  /** Lower-case header names whose values traces show (`request_tracing_unmasked_headers`). */
  readonly unmaskedHeaders: ReadonlySet<string>;
  /** Version shown in `info.router_version`. */
  readonly routerVersion: string;
  /** `engine.enable_single_flight`. */
  readonly singleFlight: boolean;
  /** Monotonic clock, nanoseconds. */
  readonly now: () => number;
  /** Wall clock. */
  readonly clock: () => Date;
}

/** Options for {@linkcode buildTraceState}. */
export interface BuildTraceStateOptions {
  /** The router version. @default {the `version` of deno.json} */
  readonly routerVersion?: string;
  /** Header names to mask besides the fixed list and the JWT header. */
  readonly maskedHeaders?: readonly string[];
  /** Monotonic clock in nanoseconds. @default {performance.now() in ns} */
  readonly now?: () => number;
  /** Wall clock. @default {() => new Date()} */
  readonly clock?: () => Date;
}

/** A request's trace decision. */
export type TraceStart =
  | { readonly kind: "off" }
  /** A rejected `X-GW-Token`: the facet answers 400 with this message. */
  | { readonly kind: "rejected"; readonly message: string; readonly code: "INVALID_TRACE_TOKEN" }
  | {
    readonly kind: "on";
    readonly observer: ExecutionObserver;
    readonly session: TraceRecorder;
    readonly options: TraceOptions;
  };

/** Headers a traced response must carry. */
export const TRACED_RESPONSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "cache-control": "no-store",
});

const OFF: TraceStart = Object.freeze({ kind: "off" });
const OFF_PROMISE: Promise<TraceStart> = Promise.resolve(OFF);

function monotonicNs(): number {
  return Math.round(performance.now() * 1e6);
}

function wallClock(): Date {
  return new Date();
}

/**
 * Builds the trace state: flags, the verification key (imported once), the
 * masked header set (fixed list, `authentication.jwt.header_name`,
 * `engine.request_tracing_masked_headers` when configured, and the option).
 *
 * @example Dev mode admits without a token
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Config } from "../config/types.ts";
 * import { buildTraceState } from "./mod.ts";
 * const config = {
 *   dev_mode: true,
 *   authentication: { jwt: { header_name: "Authorization" } },
 *   engine: { enable_request_tracing: true, force_unauthenticated_request_tracing: false,
 *     request_tracing_issuer: "", request_tracing_audience: "", enable_single_flight: true },
 * } as unknown as Config;
 * const state = await buildTraceState(config, null, { routerVersion: "1.2.3" });
 * assert.equal(state.admission, "dev_mode");
 * assert.equal(state.routerVersion, "1.2.3");
 * ```
 *
 * @param config The configuration.
 * @param publicKeyPem PEM text of `engine.request_tracing_public_key_file`, if any.
 * @param options Version, extra masked headers, clocks.
 * @returns The state.
 * @throws {RouterError} `CONFIG_INVALID` when the PEM is not an ES256 SPKI key.
 */
export async function buildTraceState(
  config: Config,
  publicKeyPem: string | null,
  options: BuildTraceStateOptions = {},
): Promise<TraceState> {
  const engine = config.engine;
  const verificationKey = publicKeyPem !== null && publicKeyPem.trim() !== ""
    ? await importTraceVerificationKey(publicKeyPem)
    : null;
  const configured = (engine as Partial<{ request_tracing_masked_headers: readonly string[] }>)
    .request_tracing_masked_headers ?? [];
  const jwtHeader = config.authentication?.jwt?.header_name;
  return {
    enabled: engine.enable_request_tracing,
    admission: traceAdmission(config.dev_mode, engine.force_unauthenticated_request_tracing),
    verificationKey,
    claims: {
      issuer: engine.request_tracing_issuer || null,
      audience: engine.request_tracing_audience || null,
      maxTokenAgeSec: Math.floor((engine.request_tracing_max_token_age_ms ?? 3_600_000) / 1000),
    },
    unmaskedHeaders: unmaskedHeaderSet(
      engine.request_tracing_unmasked_headers ?? DEFAULT_UNMASKED_TRACE_HEADERS,
    ),
    maskedHeaders: maskedHeaderSet([
      ...(jwtHeader ? [jwtHeader] : []),
      ...configured,
      ...(options.maskedHeaders ?? []),
    ]),
    routerVersion: options.routerVersion ?? denoJson.version,
    singleFlight: engine.enable_single_flight === true,
    now: options.now ?? monotonicNs,
    clock: options.clock ?? wallClock,
  };
}

/** Start of every ART start-up warning (DESIGN §4). */
export const TRACE_WARNING_PREFIX = "Advanced Request Tracing (ART) is enabled";

/**
 * Start-up warnings while ART is on (level `warn`; each message begins with
 * `Advanced Request Tracing (ART) is enabled`): one saying so and how
 * requests are admitted, and, with the force flag, one naming what any client
 * can now read. None outside dev mode without a token key: the config's
 * start-up warning on `engine.request_tracing_public_key_file` covers it.
 *
 * @example The force flag adds its own warning
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Config } from "../config/types.ts";
 * import { traceStartupWarnings } from "./mod.ts";
 * const config = {
 *   dev_mode: false,
 *   engine: { enable_request_tracing: true, force_unauthenticated_request_tracing: true,
 *     request_tracing_public_key_file: "" },
 * } as unknown as Config;
 * const warnings = traceStartupWarnings(config);
 * assert.equal(warnings.length, 2);
 * assert.ok(warnings.every((w) => w.startsWith("Advanced Request Tracing (ART) is enabled")));
 * assert.match(warnings[1] ?? "", /subgraph URLs/);
 * ```
 *
 * @param config The configuration.
 * @returns Messages to log at `warn`, possibly none.
 */
export function traceStartupWarnings(config: Config): string[] {
  const engine = config.engine;
  if (!engine.enable_request_tracing) return [];
  const admission = traceAdmission(config.dev_mode, engine.force_unauthenticated_request_tracing);
  // No key outside dev mode: nothing can be traced; the config's own warning
  // (`startupWarnings`, key `engine.request_tracing_public_key_file`) says so, once.
  if (
    admission !== "dev_mode" && admission !== "forced" && !engine.request_tracing_public_key_file
  ) {
    return [];
  }
  const how = admission === "dev_mode"
    ? "dev_mode admits every request without a token"
    : admission === "forced"
    ? "requests are admitted without a token"
    : engine.request_tracing_public_key_file
    ? "requests need an X-GW-Token signed with the key of engine.request_tracing_public_key_file"
    : "no engine.request_tracing_public_key_file is set, so only dev_mode or the force flag admit requests";
  const warnings = [
    `${TRACE_WARNING_PREFIX}: requests with X-GW-Trace or gw_trace get their execution trace in extensions.trace; ${how} (set ENGINE_ENABLE_REQUEST_TRACING=false to disable)`,
  ];
  if (engine.force_unauthenticated_request_tracing) {
    warnings.push(
      `${TRACE_WARNING_PREFIX} without authentication (engine.force_unauthenticated_request_tracing): any client that can reach the router can read internal subgraph URLs, the graph topology, the requests sent to subgraphs (including propagated headers that may carry credentials), raw subgraph responses and per-fetch timings`,
    );
  }
  return warnings;
}

/**
 * Decides whether a request is traced (gate order: enabled → requested →
 * dev mode or force flag → `X-GW-Token`), and when it is, starts its recorder.
 *
 * @example No trace header: off
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Config } from "../config/types.ts";
 * import { buildTraceState, startTrace } from "./mod.ts";
 * const config = {
 *   dev_mode: true,
 *   engine: { enable_request_tracing: true, force_unauthenticated_request_tracing: false,
 *     request_tracing_issuer: "", request_tracing_audience: "" },
 * } as unknown as Config;
 * const state = await buildTraceState(config, null);
 * const plain = await startTrace(new Request("http://r/graphql"), state);
 * assert.equal(plain.kind, "off");
 * const traced = await startTrace(new Request("http://r/graphql?gw_trace=true"), state);
 * assert.equal(traced.kind, "on");
 * ```
 *
 * @param request The inbound request (its body is not read).
 * @param state The trace state.
 * @returns The decision.
 */
export function startTrace(request: Request, state: TraceState): Promise<TraceStart> {
  if (!state.enabled) return OFF_PROMISE;
  const decision = decideTrace(state, request.headers, request.url);
  switch (decision.kind) {
    case "off":
      return OFF_PROMISE;
    case "on":
      return Promise.resolve(begin(request, state, decision.options));
    case "verify":
      return verifyTraceToken(decision.token, state.verificationKey, state.claims).then(
        (verdict): TraceStart =>
          verdict.ok
            ? begin(request, state, decision.options)
            : { kind: "rejected", message: verdict.reason, code: "INVALID_TRACE_TOKEN" },
      );
  }
}

function begin(request: Request, state: TraceState, options: TraceOptions): TraceStart {
  const session = createTraceRecorder({
    options,
    now: state.now,
    startedAt: state.clock(),
    routerVersion: state.routerVersion,
    maskedHeaders: state.maskedHeaders,
    unmaskedHeaders: state.unmaskedHeaders,
    singleFlight: state.singleFlight,
    request: { method: request.method, url: request.url, headers: request.headers },
  });
  return { kind: "on", observer: session.observer, session, options };
}

/**
 * A new trace with the decision of one already started: the next event of a traced
 * subscription gets its own trace (its fetches), under the same options.
 * @param request The inbound request.
 * @param state The trace state.
 * @param start The request's decision (`on`).
 * @returns A fresh `on` decision.
 */
export function traceAgain(
  request: Request,
  state: TraceState,
  start: Extract<TraceStart, { kind: "on" }>,
): TraceStart {
  return begin(request, state, start.options);
}

/** Options for {@linkcode finishTrace}. */
export interface FinishTraceOptions {
  /** The GraphQL request (query, operationName, variables) for `request.body`. */
  readonly request?: InboundBody;
}

/**
 * Puts the finished trace into `result.extensions.trace` (other extensions
 * kept). Results of requests that are not traced come back unchanged.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { finishTrace } from "./mod.ts";
 * const result = { data: { a: 1 } };
 * assert.equal(finishTrace({ kind: "off" }, result), result);
 * ```
 *
 * @param start The decision from {@linkcode startTrace}.
 * @param result The GraphQL response.
 * @param options The GraphQL request body, for the trace's `request`.
 * @returns The response with the trace.
 */
export function finishTrace(
  start: TraceStart,
  result: ExecutionResult,
  options: FinishTraceOptions = {},
): ExecutionResult {
  if (start.kind !== "on") return result;
  const trace = start.session.finish(options.request);
  return { ...result, extensions: { ...result.extensions, trace } };
}

/**
 * The GraphQL response for a rejected trace token (send with HTTP 400).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { traceRejectionResult } from "./mod.ts";
 * const body = traceRejectionResult({ kind: "rejected", message: "Trace token (X-GW-Token) has expired", code: "INVALID_TRACE_TOKEN" });
 * assert.equal(body.errors?.[0]?.extensions?.code, "INVALID_TRACE_TOKEN");
 * ```
 *
 * @param start The rejection.
 * @returns `{errors: [{message, extensions: {code: "INVALID_TRACE_TOKEN"}}]}`.
 */
export function traceRejectionResult(
  start: Extract<TraceStart, { kind: "rejected" }>,
): ExecutionResult {
  return { errors: [{ message: start.message, extensions: { code: start.code } }] };
}
