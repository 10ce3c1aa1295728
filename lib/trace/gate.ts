/**
 * The ART gate, in the order DESIGN §3 fixes: `engine.enable_request_tracing`
 * → a trace requested (`X-GW-Trace` / `gw_trace`) → `dev_mode` or the force
 * flag → an `X-GW-Token` to verify. Pure: verification is the caller's step.
 *
 * @module
 */
import { readTraceOptions, type TraceOptions } from "./options.ts";
import { TRACE_TOKEN_HEADER } from "./token.ts";

/** How requests are admitted once ART is enabled. */
export type TraceAdmission = "dev_mode" | "forced" | "token";

/** The gate's inputs fixed at start-up. */
export interface TraceGateConfig {
  /** `engine.enable_request_tracing`. */
  readonly enabled: boolean;
  /** `dev_mode` → `dev_mode`; the force flag → `forced`; else `token`. */
  readonly admission: TraceAdmission;
}

/** The gate's verdict before any token is verified. */
export type TraceGateDecision =
  | { readonly kind: "off" }
  | { readonly kind: "on"; readonly options: TraceOptions }
  | { readonly kind: "verify"; readonly options: TraceOptions; readonly token: string };

const OFF: TraceGateDecision = Object.freeze({ kind: "off" });

/**
 * Decides what to do with a request. A token is looked at only when a trace
 * is requested and neither dev mode nor the force flag admits it; no token
 * means no trace (a normal response), never an error.
 *
 * @example The gate rows
 * ```ts
 * import assert from "node:assert/strict";
 * import { decideTrace } from "./gate.ts";
 * const traced = new Headers({ "x-gw-trace": "true" });
 * const url = "http://r/graphql";
 * assert.equal(decideTrace({ enabled: false, admission: "dev_mode" }, traced, url).kind, "off");
 * assert.equal(decideTrace({ enabled: true, admission: "dev_mode" }, traced, url).kind, "on");
 * assert.equal(decideTrace({ enabled: true, admission: "token" }, traced, url).kind, "off");
 * traced.set("x-gw-token", "eyJhbGciOiJFUzI1NiJ9.e30.sig");
 * assert.equal(decideTrace({ enabled: true, admission: "token" }, traced, url).kind, "verify");
 * ```
 *
 * @param config Enabled flag and admission mode.
 * @param headers The request headers.
 * @param url The request URL.
 * @returns The decision.
 */
export function decideTrace(
  config: TraceGateConfig,
  headers: Headers,
  url: string,
): TraceGateDecision {
  if (!config.enabled) return OFF;
  const options = readTraceOptions(headers, url);
  if (options === null) return OFF;
  if (config.admission !== "token") return { kind: "on", options };
  const token = headers.get(TRACE_TOKEN_HEADER)?.trim() ?? "";
  return token === "" ? OFF : { kind: "verify", options, token };
}

/**
 * The admission mode from the two flags (dev mode first, as the spec lists it).
 * @param devMode `dev_mode` / `DEV_MODE`.
 * @param force `engine.force_unauthenticated_request_tracing`.
 * @returns The mode.
 */
export function traceAdmission(devMode: boolean, force: boolean): TraceAdmission {
  return devMode ? "dev_mode" : force ? "forced" : "token";
}
