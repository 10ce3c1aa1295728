/**
 * The one place where errors become HTTP responses: a status per
 * {@linkcode RouterErrorCode} and a GraphQL-shaped JSON body.
 *
 * @module
 */
import { AuthError, RouterError, type RouterErrorCode } from "../errors.ts";
import type { Logger } from "../log/mod.ts";
import { PluginRefusal } from "../plugins/mod.ts";

/** HTTP status per error code. A `Record` over the union: a new code does not compile without one. */
export const STATUS: Readonly<Record<RouterErrorCode, number>> = Object.freeze({
  CONFIG_INVALID: 500,
  SUPERGRAPH_INVALID: 500,
  COMPOSITION_FAILED: 500,
  OPERATION_INVALID: 400,
  BAD_REQUEST: 400,
  BATCHING_NOT_ENABLED: 400,
  BATCH_LIMIT_EXCEEDED: 400,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  NOT_ACCEPTABLE: 406,
  METHOD_NOT_ALLOWED: 405,
  GRAPHQL_PARSE_FAILED: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
  BAD_USER_INPUT: 400,
  PERSISTED_QUERY_NOT_FOUND: 400,
  PERSISTED_QUERY_NOT_IN_LIST: 400,
  PERSISTED_QUERY_HASH_MISMATCH: 400,
  RATE_LIMITED: 429,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  KEYS_UNAVAILABLE: 503,
  INVALID_TRACE_TOKEN: 400,
  NOT_FOUND: 404,
  SUBGRAPH_UNREACHABLE: 502,
  SUBGRAPH_ERROR: 502,
  DEADLINE_EXCEEDED: 504,
  SERVICE_OVERLOADED: 503,
  // Issue 42: the entity cache's Redis could not answer an invalidation.
  STORE_UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
  REQUEST_TIMEOUT: 408,
  RESPONSE_TOO_LARGE: 502,
  SUBGRAPH_CIRCUIT_OPEN: 503,
  // Only ever a field error (the subgraph's fields null): a status for completeness.
  SUBGRAPH_COST_ESTIMATED_TOO_EXPENSIVE: 400,
  SHUTTING_DOWN: 503,
  STARTING: 503,
  ISOLATE_ENDED: 503,
  // Issue 40: a plugin's or the coprocessor's refusal (its own status when it gives one),
  // a plugin hook that threw or ran out of time, a coprocessor that failed (fail closed).
  REFUSED: 403,
  PLUGIN_FAILED: 500,
  COPROCESSOR_FAILED: 502,
  INTERNAL: 500,
});

/** Options for {@linkcode errorResponse}. */
export interface ErrorResponseOptions {
  /** Where `INTERNAL` errors (and their causes) are logged; never echoed to the client. */
  readonly log?: Logger;
  /**
   * Media type of the body (the GraphQL facet passes the negotiated one).
   * @default {"application/json"}
   */
  readonly contentType?: string;
  /** Extra response headers. */
  readonly headers?: HeadersInit;
  /** The request's id: every error gets `extensions.request_id`, the log line `request_id`. */
  readonly requestId?: string | null;
}

/**
 * Turns any thrown value into a `Response`: a {@linkcode RouterError} keeps its
 * code, message and details (`details.allow` becomes the `Allow` header, an
 * {@linkcode AuthError} adds `WWW-Authenticate`); anything else is logged and
 * answered with a bare 500 `Internal server error`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RouterError } from "../errors.ts";
 * import { errorResponse } from "./errors.ts";
 * const response = errorResponse(
 *   new RouterError("METHOD_NOT_ALLOWED", "Mutations need POST", { details: { allow: "POST" } }),
 * );
 * assert.equal(response.status, 405);
 * assert.equal(response.headers.get("allow"), "POST");
 * const body = await response.json();
 * assert.equal(body.errors[0].extensions.code, "METHOD_NOT_ALLOWED");
 * ```
 * @param error The thrown value.
 * @param options Logger, media type, headers.
 * @returns The response.
 */
export function errorResponse(error: unknown, options: ErrorResponseOptions = {}): Response {
  const known = knownError(error, options);
  const headers = errorHeaders(known, options.headers);
  headers.set("content-type", `${options.contentType ?? "application/json"}; charset=utf-8`);
  const { allow: _allow, ...details } = known.details;
  const extensions = options.requestId
    ? { code: known.code, ...details, request_id: options.requestId }
    : { code: known.code, ...details };
  const body = {
    errors: known instanceof PluginRefusal
      ? known.errors.map((e) =>
        options.requestId
          ? { ...e, extensions: { ...e.extensions, request_id: options.requestId } }
          : e
      )
      : [{ message: known.message, extensions }],
  };
  return new Response(JSON.stringify(body), { status: statusOf(known), headers });
}

/**
 * The HTTP status of an error: a refusal's own (a plugin's, the coprocessor's
 * `break`), else its code's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RouterError } from "../errors.ts";
 * import { PluginRefusal } from "../plugins/mod.ts";
 * import { statusOf } from "./errors.ts";
 * assert.equal(statusOf(new RouterError("FORBIDDEN", "No")), 403);
 * assert.equal(statusOf(new PluginRefusal({ errors: [{ message: "No" }], status: 401 }, "p")), 401);
 * ```
 * @param known The error.
 * @returns The status.
 */
export function statusOf(known: RouterError): number {
  return known instanceof PluginRefusal ? known.status : STATUS[known.code];
}

/**
 * Turns a thrown value into the {@linkcode RouterError} to answer: a
 * `RouterError` as it is; anything else logged (with the request id) and
 * replaced by `INTERNAL` "Internal server error".
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { knownError } from "./errors.ts";
 * assert.equal(knownError(new Error("bug")).code, "INTERNAL");
 * ```
 * @param error The thrown value.
 * @param options Logger and request id.
 * @returns The error to answer.
 */
export function knownError(error: unknown, options: ErrorResponseOptions = {}): RouterError {
  const known = error instanceof RouterError
    ? error
    : new RouterError("INTERNAL", "Internal server error", { cause: error });
  if (known.code === "INTERNAL") {
    const cause = known.cause ?? known;
    options.log?.error("Internal error", {
      ...(options.requestId ? { request_id: options.requestId } : {}),
      error: cause,
      ...(cause instanceof Error && cause.stack ? { stack: cause.stack } : {}),
    });
  }
  return known;
}

/**
 * The headers an error's details ask for, whatever the body's shape:
 * `WWW-Authenticate` of an {@linkcode AuthError}, `Allow` from `details.allow`,
 * `Retry-After` from `details.retry_after`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RouterError } from "../errors.ts";
 * import { errorHeaders } from "./errors.ts";
 * const error = new RouterError("SERVICE_OVERLOADED", "Busy", { details: { retry_after: 1 } });
 * assert.equal(errorHeaders(error).get("retry-after"), "1");
 * ```
 * @param known The error.
 * @param extra Headers to start from.
 * @returns The headers (a new object).
 */
export function errorHeaders(known: RouterError, extra?: HeadersInit): Headers {
  const headers = new Headers(extra);
  if (known instanceof AuthError && known.challenge !== "") {
    headers.set("www-authenticate", known.challenge);
  }
  const { allow, retry_after } = known.details;
  if (typeof allow === "string") headers.set("allow", allow);
  if (typeof retry_after === "number") headers.set("retry-after", String(retry_after));
  return headers;
}

/**
 * Answers an error met before a facet ran (body over the limit, body too
 * slow, queue full, deadline, shutdown) in the facet's own shape.
 * {@linkcode errorResponse} is the GraphQL one.
 */
export type EdgeErrorAnswer = (error: unknown, options: ErrorResponseOptions) => Response;
