/**
 * The one error family of GW Router. Every error a client or operator can see
 * carries a stable machine-readable `code`; the HTTP mapping lives only in
 * `lib/http/errors.ts` (and the Connect table in `lib/connect/`).
 *
 * @module
 */

/** Stable error codes. A new code must get an HTTP status in `lib/http/errors.ts`. */
export type RouterErrorCode =
  | "CONFIG_INVALID"
  | "SUPERGRAPH_INVALID"
  | "COMPOSITION_FAILED"
  | "OPERATION_INVALID"
  | "BAD_REQUEST"
  | "BATCHING_NOT_ENABLED"
  | "BATCH_LIMIT_EXCEEDED"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "NOT_ACCEPTABLE"
  | "METHOD_NOT_ALLOWED"
  | "GRAPHQL_PARSE_FAILED"
  | "GRAPHQL_VALIDATION_FAILED"
  | "BAD_USER_INPUT"
  | "PERSISTED_QUERY_NOT_FOUND"
  | "PERSISTED_QUERY_NOT_IN_LIST"
  | "PERSISTED_QUERY_HASH_MISMATCH"
  | "RATE_LIMITED"
  | "UNAUTHENTICATED"
  | "FORBIDDEN"
  | "KEYS_UNAVAILABLE"
  | "INVALID_TRACE_TOKEN"
  | "NOT_FOUND"
  | "SUBGRAPH_UNREACHABLE"
  | "SUBGRAPH_ERROR"
  | "DEADLINE_EXCEEDED"
  | "SERVICE_OVERLOADED"
  | "STORE_UNAVAILABLE"
  | "GATEWAY_TIMEOUT"
  | "REQUEST_TIMEOUT"
  | "RESPONSE_TOO_LARGE"
  | "SUBGRAPH_CIRCUIT_OPEN"
  | "SUBGRAPH_COST_ESTIMATED_TOO_EXPENSIVE"
  | "SHUTTING_DOWN"
  | "STARTING"
  | "ISOLATE_ENDED"
  | "REFUSED"
  | "PLUGIN_FAILED"
  | "COPROCESSOR_FAILED"
  | "INTERNAL";

/** Options for {@linkcode RouterError}. */
export interface RouterErrorOptions extends ErrorOptions {
  /** Client-safe structured details, e.g. `{ path: "mcp.enabled" }`. */
  details?: Record<string, unknown>;
}

/**
 * Base error of the router: a code, a sentence-case message, client-safe details.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RouterError } from "./errors.ts";
 * const error = new RouterError("CONFIG_INVALID", 'Cannot read "mcp.enabled": expected a boolean', {
 *   details: { path: "mcp.enabled" },
 * });
 * assert.equal(error.code, "CONFIG_INVALID");
 * assert.equal(error.details.path, "mcp.enabled");
 * ```
 */
export class RouterError extends Error {
  /** Stable machine-readable code. */
  readonly code: RouterErrorCode;
  /** Client-safe structured details. */
  readonly details: Readonly<Record<string, unknown>>;

  /**
   * @param code Stable code.
   * @param message Sentence-case message without a final period.
   * @param options Cause and details.
   */
  constructor(code: RouterErrorCode, message: string, options: RouterErrorOptions = {}) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.details = Object.freeze({ ...(options.details ?? {}) });
  }
}

/**
 * A 401/403 that carries its RFC 6750 `WWW-Authenticate` challenge.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AuthError } from "./errors.ts";
 * const error = new AuthError("FORBIDDEN", "Insufficient scope", 'Bearer error="insufficient_scope"');
 * assert.equal(error.challenge, 'Bearer error="insufficient_scope"');
 * ```
 */
export class AuthError extends RouterError {
  /** The `WWW-Authenticate` header value. */
  readonly challenge: string;

  /**
   * @param code `UNAUTHENTICATED` (401), `FORBIDDEN` (403), `BAD_REQUEST` (400,
   * RFC 6750 `invalid_request`) or `KEYS_UNAVAILABLE` (503: no signing keys yet).
   * @param message Sentence-case message.
   * @param challenge The `WWW-Authenticate` header value.
   * @param options Details (`retry_after` seconds becomes `Retry-After`).
   */
  constructor(
    code: "UNAUTHENTICATED" | "FORBIDDEN" | "BAD_REQUEST" | "KEYS_UNAVAILABLE",
    message: string,
    challenge: string,
    options: RouterErrorOptions = {},
  ) {
    super(code, message, options);
    this.challenge = challenge;
  }
}

/** Longest piece of a client's input an error message quotes ({@linkcode clipForMessage}). */
export const MAX_QUOTED_LENGTH = 100;

/**
 * A client's text as an error message quotes it: whole up to
 * {@linkcode MAX_QUOTED_LENGTH} characters, else its start and an ellipsis,
 * so an answer never echoes a request's megabytes back.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { clipForMessage } from "./errors.ts";
 * assert.equal(clipForMessage("GetUser"), "GetUser");
 * assert.equal(clipForMessage("x".repeat(5000)).length, 101);
 * ```
 * @param text The client's text.
 * @returns The text to put in a message.
 */
export function clipForMessage(text: string): string {
  return text.length > MAX_QUOTED_LENGTH ? `${text.slice(0, MAX_QUOTED_LENGTH)}…` : text;
}

/**
 * The fields a log line gives an error: message, and for a {@linkcode RouterError}
 * its code and details.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeError, RouterError } from "./errors.ts";
 * assert.deepEqual(describeError(new RouterError("NOT_FOUND", "No route")), { error: "No route", code: "NOT_FOUND" });
 * ```
 * @param error Anything thrown.
 * @returns Log fields.
 */
export function describeError(error: unknown): Record<string, unknown> {
  if (error instanceof RouterError) {
    return { error: error.message, code: error.code, ...error.details };
  }
  return { error: error instanceof Error ? error.message : String(error) };
}

/**
 * The start-up error of a listener that cannot bind: it names the address, the
 * config key and its env variable (`Address already in use` alone says none).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { listenError } from "./errors.ts";
 * const error = listenError(new Deno.errors.AddrInUse("Address already in use (os error 98)"), {
 *   key: "listen_addr",
 *   address: "127.0.0.1:3002",
 * });
 * assert.equal(error.code, "CONFIG_INVALID");
 * assert.match(error.message, /127\.0\.0\.1:3002.*"listen_addr".*LISTEN_ADDR.*already in use/);
 * ```
 * @param error What `Deno.listen`/`Deno.serve` threw.
 * @param where The config key and the address it holds.
 * @returns A `CONFIG_INVALID` error with `details.path` the key and `details.env` its variable.
 */
export function listenError(
  error: unknown,
  where: { readonly key: string; readonly address: string },
): RouterError {
  const env = where.key.toUpperCase().replaceAll(".", "_");
  const reason = error instanceof Deno.errors.AddrInUse
    ? "the address is already in use (another process listens there: stop it, or choose another port)"
    : error instanceof Deno.errors.PermissionDenied
    ? "permission denied (ports below 1024 need privileges: choose a port from 1024, or put a proxy in front)"
    : error instanceof Deno.errors.AddrNotAvailable
    ? "the address is not one of this machine's (use 127.0.0.1, 0.0.0.0 or an address of an interface)"
    : error instanceof Error
    ? error.message
    : String(error);
  return new RouterError(
    "CONFIG_INVALID",
    `Cannot listen on ${where.address} ("${where.key}", env ${env}): ${reason}`,
    { cause: error, details: { path: where.key, env, address: where.address } },
  );
}
