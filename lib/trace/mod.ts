/**
 * Advanced Request Tracing: options parser, gate, recorder. STUB: the ART
 * owner implements it. The GraphQL facet calls {@linkcode startTrace} per
 * request and {@linkcode finishTrace} on the result.
 *
 * @module
 */
import type { Config } from "../config/types.ts";
import type { ExecutionObserver, ExecutionResult } from "../engine/types.ts";

/** Compiled trace gate (verification key, flags). */
export interface TraceState {
  readonly enabled: boolean;
}

/** A request's trace decision. */
export type TraceStart =
  | { readonly kind: "off" }
  /** A rejected `X-GW-Token`: the facet answers 400 with this message. */
  | { readonly kind: "rejected"; readonly message: string }
  | { readonly kind: "on"; readonly observer: ExecutionObserver; readonly session: unknown };

/**
 * Builds the trace state (imports the verification key).
 * @param config The configuration.
 * @param _publicKeyPem PEM text of `engine.request_tracing_public_key_file`, if any.
 * @returns The state.
 */
export function buildTraceState(config: Config, _publicKeyPem: string | null): Promise<TraceState> {
  return Promise.resolve({ enabled: config.engine.enable_request_tracing });
}

/**
 * Start-up warnings while ART is on (level `warn`; each message begins with
 * `Advanced Request Tracing (ART) is enabled`).
 * @param config The configuration.
 * @returns Messages to log at `warn`, possibly none.
 */
export function traceStartupWarnings(config: Config): string[] {
  return config.engine.enable_request_tracing ? ["Advanced Request Tracing (ART) is enabled"] : [];
}

/**
 * Decides whether a request is traced.
 * @param _request The inbound request.
 * @param _state The trace state.
 * @returns The decision.
 */
export function startTrace(_request: Request, _state: TraceState): Promise<TraceStart> {
  return Promise.resolve({ kind: "off" });
}

/**
 * Puts the finished trace into `result.extensions.trace`.
 * @param _start The decision from {@linkcode startTrace}.
 * @param result The GraphQL response.
 * @returns The response with the trace.
 */
export function finishTrace(_start: TraceStart, result: ExecutionResult): ExecutionResult {
  return result;
}
