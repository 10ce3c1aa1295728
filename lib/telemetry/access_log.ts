/**
 * The access log line: one JSON object per request at `info`. Only these
 * fields, by construction: no header values besides the client name and the
 * request id, no query text, no variables, no bodies, no query string.
 *
 * @module
 */

/** What the access log reads from a request's scope. */
export interface AccessLogScope {
  readonly requestId: string;
  readonly method: string;
  /** The route (never the query string, which may carry variables, nor a raw unmatched path). */
  readonly path: string;
  readonly bytesIn: number;
  readonly fetches: number;
  /** Entity cache lookups by outcome; absent when the cache was not asked. */
  readonly cache?: { readonly hit: number; readonly partial: number; readonly miss: number };
  readonly operation: {
    readonly name: string | null;
    readonly type: string | null;
    readonly hash: string | null;
  } | null;
  /** The cleaned, capped client name label, or null. */
  readonly clientName?: string | null;
  /** Demand control's figures (`cost_estimated`, `cost_actual`, `cost_result`); absent when off. */
  readonly cost?: {
    readonly estimated: number | null;
    readonly actual: number | null;
    readonly result: string;
  } | null;
}

/**
 * Builds the fields of an access log line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { accessLogRecord } from "./access_log.ts";
 * const record = accessLogRecord(
 *   { requestId: "r1", method: "POST", path: "/graphql", bytesIn: 10, fetches: 2,
 *     operation: { name: "GetUser", type: "query", hash: "abc" }, clientName: "web" },
 *   { status: 200, durationMs: 1.23456, bytesOut: 99 },
 * );
 * assert.deepEqual(record, {
 *   request_id: "r1", method: "POST", path: "/graphql", status: 200, duration_ms: 1.235,
 *   operation_name: "GetUser", operation_type: "query", operation_hash: "abc",
 *   client_name: "web", subgraph_fetches: 2, bytes_in: 10, bytes_out: 99,
 * });
 * ```
 * @param scope The request's scope.
 * @param outcome Status, duration and bytes sent.
 * @returns The fields (stable order).
 */
export function accessLogRecord(
  scope: AccessLogScope,
  outcome: { readonly status: number; readonly durationMs: number; readonly bytesOut: number },
): Record<string, unknown> {
  return {
    request_id: scope.requestId,
    method: scope.method,
    path: scope.path,
    status: outcome.status,
    duration_ms: Math.round(outcome.durationMs * 1000) / 1000,
    operation_name: scope.operation?.name ?? null,
    operation_type: scope.operation?.type ?? null,
    operation_hash: scope.operation?.hash ?? null,
    client_name: scope.clientName ?? null,
    subgraph_fetches: scope.fetches,
    ...(scope.cache
      ? {
        entity_cache_hits: scope.cache.hit,
        entity_cache_partial_hits: scope.cache.partial,
        entity_cache_misses: scope.cache.miss,
      }
      : {}),
    bytes_in: scope.bytesIn,
    bytes_out: outcome.bytesOut,
    ...(scope.cost
      ? {
        cost_estimated: scope.cost.estimated,
        cost_actual: scope.cost.actual,
        cost_result: scope.cost.result,
      }
      : {}),
  };
}

/** Where a facet leaves the byte size of a body it built (see {@linkcode withBodySize}). */
const BODY_SIZE: unique symbol = Symbol("gw.bodySize");

/**
 * Marks a response with the byte size of the body a facet built, so the
 * access log's `bytes_out` needs no copy of the body (a string body stays a
 * string, sent by Deno without an ArrayBuffer).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { knownBodySize, withBodySize } from "./access_log.ts";
 * const response = withBodySize(new Response("héllo"), 6);
 * assert.equal(knownBodySize(response), 6);
 * assert.equal(knownBodySize(new Response("x")), null);
 * ```
 * @param response The response, as built.
 * @param bytes The byte size of its body.
 * @returns The same response.
 */
export function withBodySize(response: Response, bytes: number): Response {
  (response as Response & { [BODY_SIZE]?: number })[BODY_SIZE] = bytes;
  return response;
}

/**
 * The byte size a facet left on a response with {@linkcode withBodySize}.
 * @param response The response.
 * @returns The size, or null when unknown.
 */
export function knownBodySize(response: Response): number | null {
  return (response as Response & { [BODY_SIZE]?: number })[BODY_SIZE] ?? null;
}

/** Where a facet leaves the error code of an answer it built (see {@linkcode withErrorCode}). */
const ERROR_CODE: unique symbol = Symbol("gw.errorCode");

/**
 * Marks an error answer with its code (a Connect error's `code`), so metrics
 * label it without reading the body: a wrapper never reads a body.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { knownErrorCode, withErrorCode } from "./access_log.ts";
 * const response = withErrorCode(new Response("{}", { status: 400 }), "invalid_argument");
 * assert.equal(knownErrorCode(response), "invalid_argument");
 * assert.equal(knownErrorCode(new Response("{}")), null);
 * ```
 * @param response The response, as built.
 * @param code Its error code.
 * @returns The same response.
 */
export function withErrorCode(response: Response, code: string): Response {
  (response as Response & { [ERROR_CODE]?: string })[ERROR_CODE] = code;
  return response;
}

/**
 * The error code a facet left on a response with {@linkcode withErrorCode}.
 * @param response The response.
 * @returns The code, or null when none was left.
 */
export function knownErrorCode(response: Response): string | null {
  return (response as Response & { [ERROR_CODE]?: string })[ERROR_CODE] ?? null;
}
