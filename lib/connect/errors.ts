/**
 * Connect error codes, the Connect protocol's HTTP status table, error bodies
 * `{code, message, details?}`, and the mapping of GraphQL errors to a code.
 * Pure: no I/O.
 *
 * @module
 */
import type { GraphQLFormattedError } from "graphql";
import { RouterError } from "../errors.ts";
import { utf8Length } from "../limited_body.ts";
import { withBodySize, withErrorCode } from "../telemetry/access_log.ts";

/** The sixteen Connect error codes (their wire spelling). */
export type ConnectCode =
  | "canceled"
  | "unknown"
  | "invalid_argument"
  | "deadline_exceeded"
  | "not_found"
  | "already_exists"
  | "permission_denied"
  | "resource_exhausted"
  | "failed_precondition"
  | "aborted"
  | "out_of_range"
  | "unimplemented"
  | "internal"
  | "unavailable"
  | "data_loss"
  | "unauthenticated";

/**
 * HTTP status of each code, as the current Connect protocol specifies it
 * (`canceled` 499, `deadline_exceeded` 504, `unimplemented` 501, …).
 */
export const CONNECT_HTTP_STATUS: Readonly<Record<ConnectCode, number>> = Object.freeze({
  canceled: 499,
  unknown: 500,
  invalid_argument: 400,
  deadline_exceeded: 504,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  resource_exhausted: 429,
  failed_precondition: 400,
  aborted: 409,
  out_of_range: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  data_loss: 500,
  unauthenticated: 401,
});

/** A Connect error about to be sent: code, message and what the body and headers add. */
export interface ConnectFailure {
  readonly code: ConnectCode;
  /** Sentence-case message naming what was wrong. */
  readonly message: string;
  /** HTTP status when it differs from the table (404 for an unknown method, 405 for GET of a mutation). */
  readonly status?: number;
  /** Extra response headers (`Allow`, `Accept-Post`, `WWW-Authenticate`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The GraphQL errors behind the failure, sent as `graphql_errors`. */
  readonly graphqlErrors?: readonly GraphQLFormattedError[];
}

/** The JSON body of a Connect error. */
export interface ConnectErrorBody {
  readonly code: ConnectCode;
  readonly message: string;
  readonly graphql_errors?: readonly GraphQLFormattedError[];
}

/**
 * Builds a failure value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { connectFailure } from "./errors.ts";
 * assert.deepEqual(connectFailure("invalid_argument", "Bad message"), {
 *   code: "invalid_argument",
 *   message: "Bad message",
 * });
 * ```
 * @param code The Connect code.
 * @param message What was wrong.
 * @param extra Status override, headers, GraphQL errors.
 * @returns The failure.
 */
export function connectFailure(
  code: ConnectCode,
  message: string,
  extra: Omit<ConnectFailure, "code" | "message"> = {},
): ConnectFailure {
  return { code, message, ...extra };
}

/**
 * The Connect code of a refusal's HTTP status (a plugin's or the coprocessor's
 * `{"break": status}`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { connectCodeOfStatus } from "./errors.ts";
 * assert.equal(connectCodeOfStatus(401), "unauthenticated");
 * assert.equal(connectCodeOfStatus(418), "permission_denied");
 * assert.equal(connectCodeOfStatus(503), "unavailable");
 * ```
 * @param status The HTTP status (4xx or 5xx).
 * @returns The code.
 */
export function connectCodeOfStatus(status: number): ConnectCode {
  switch (status) {
    case 400:
      return "invalid_argument";
    case 401:
      return "unauthenticated";
    case 404:
      return "not_found";
    case 408:
    case 504:
      return "deadline_exceeded";
    case 429:
      return "resource_exhausted";
    case 501:
      return "unimplemented";
    case 502:
    case 503:
      return "unavailable";
    default:
      return status < 500 ? "permission_denied" : "internal";
  }
}

/**
 * The HTTP status of a failure: its override, else the Connect table.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { connectStatus } from "./errors.ts";
 * assert.equal(connectStatus({ code: "unimplemented", message: "x" }), 501);
 * assert.equal(connectStatus({ code: "unimplemented", message: "x", status: 404 }), 404);
 * ```
 * @param failure The failure.
 * @returns The HTTP status.
 */
export function connectStatus(failure: ConnectFailure): number {
  return failure.status ?? CONNECT_HTTP_STATUS[failure.code];
}

/**
 * The JSON body of a failure: `{code, message}` plus `graphql_errors` when there are any.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { connectErrorBody } from "./errors.ts";
 * const body = connectErrorBody({ code: "unknown", message: "Boom", graphqlErrors: [{ message: "Boom" }] });
 * assert.deepEqual(body, { code: "unknown", message: "Boom", graphql_errors: [{ message: "Boom" }] });
 * ```
 * @param failure The failure.
 * @returns The body.
 */
export function connectErrorBody(failure: ConnectFailure): ConnectErrorBody {
  const body: { code: ConnectCode; message: string; graphql_errors?: GraphQLFormattedError[] } = {
    code: failure.code,
    message: failure.message,
  };
  if (failure.graphqlErrors !== undefined && failure.graphqlErrors.length > 0) {
    body.graphql_errors = [...failure.graphqlErrors];
  }
  return body;
}

/**
 * The HTTP response of a failure: Connect status, JSON body, extra headers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { connectErrorResponse } from "./errors.ts";
 * const response = connectErrorResponse({ code: "invalid_argument", message: "Missing message" });
 * assert.equal(response.status, 400);
 * assert.deepEqual(await response.json(), { code: "invalid_argument", message: "Missing message" });
 * ```
 * @param failure The failure.
 * @returns The response.
 */
export function connectErrorResponse(failure: ConnectFailure): Response {
  const headers = new Headers(failure.headers);
  headers.set("content-type", "application/json");
  const text = JSON.stringify(connectErrorBody(failure));
  const response = new Response(text, { status: connectStatus(failure), headers });
  // Telemetry labels and logs it from these marks, never by reading the body.
  return withErrorCode(withBodySize(response, utf8Length(text)), failure.code);
}

/**
 * The error a Connect failure reports: the first error, or, when it wraps a
 * subgraph's errors (`subgraph_error_propagation.mode: wrapped`), the first
 * of those (its code and message say what went wrong).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { primaryError } from "./errors.ts";
 * const inner = { message: "Rating too high", extensions: { code: "BAD_USER_INPUT" } };
 * const wrapped = { message: "Failed to fetch from Subgraph 'reviews'", extensions: { errors: [inner] } };
 * assert.equal(primaryError([wrapped]), inner);
 * assert.equal(primaryError([inner]), inner);
 * ```
 * @param errors The GraphQL errors.
 * @returns The error, or undefined for an empty list.
 */
export function primaryError(
  errors: readonly GraphQLFormattedError[],
): GraphQLFormattedError | undefined {
  const first = errors[0];
  const inner = first?.extensions?.["errors"];
  if (Array.isArray(inner) && typeof inner[0]?.message === "string") {
    return inner[0] as GraphQLFormattedError;
  }
  return first;
}

const CODE_OF_EXTENSION: Readonly<Record<string, ConnectCode>> = {
  GRAPHQL_PARSE_FAILED: "invalid_argument",
  GRAPHQL_VALIDATION_FAILED: "invalid_argument",
  BAD_USER_INPUT: "invalid_argument",
  BAD_REQUEST: "invalid_argument",
  OPERATION_INVALID: "invalid_argument",
  UNAUTHENTICATED: "unauthenticated",
  FORBIDDEN: "permission_denied",
  UNAUTHORIZED: "permission_denied",
  UNAUTHORIZED_FIELD_OR_TYPE: "permission_denied",
  SUBGRAPH_UNREACHABLE: "unavailable",
  DEADLINE_EXCEEDED: "deadline_exceeded",
  SUBGRAPH_CIRCUIT_OPEN: "unavailable",
  // Demand control (docs/demand-control.md): the client can ask for less.
  COST_ESTIMATED_TOO_EXPENSIVE: "resource_exhausted",
  COST_ACTUAL_TOO_EXPENSIVE: "resource_exhausted",
  SUBGRAPH_COST_ESTIMATED_TOO_EXPENSIVE: "resource_exhausted",
  COST_QUERY_PARSE_FAILURE: "invalid_argument",
  SERVICE_OVERLOADED: "unavailable",
  GATEWAY_TIMEOUT: "deadline_exceeded",
  REQUEST_TIMEOUT: "deadline_exceeded",
  RESPONSE_TOO_LARGE: "resource_exhausted",
  PAYLOAD_TOO_LARGE: "resource_exhausted",
  RATE_LIMITED: "resource_exhausted",
  PERSISTED_QUERY_NOT_IN_LIST: "invalid_argument",
  SHUTTING_DOWN: "unavailable",
  STARTING: "unavailable",
  ISOLATE_ENDED: "unavailable",
  KEYS_UNAVAILABLE: "unavailable",
  REFUSED: "permission_denied",
  PLUGIN_FAILED: "internal",
  COPROCESSOR_FAILED: "unavailable",
  INTERNAL: "internal",
  // Subscriptions (server-streaming methods): what ends or refuses a stream.
  SUBSCRIPTIONS_DISABLED: "unimplemented",
  SUBSCRIPTION_LIMIT_REACHED: "resource_exhausted",
  SUBSCRIPTION_CLIENT_TOO_SLOW: "resource_exhausted",
  SUBSCRIPTION_TOKEN_EXPIRED: "unauthenticated",
  SUBSCRIPTION_UPSTREAM_ERROR: "unavailable",
  SUBSCRIPTION_SCHEMA_RELOAD: "unavailable",
  SUBSCRIPTION_SERVER_SHUTDOWN: "unavailable",
};

/**
 * The Connect failure of an error the engine threw (a response over
 * `engine.max_response_bytes`, …): its code's Connect code and its message;
 * null for anything that is not a {@linkcode RouterError} (an internal error).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RouterError } from "../errors.ts";
 * import { failureOfRouterError } from "./errors.ts";
 * const failure = failureOfRouterError(new RouterError("RESPONSE_TOO_LARGE", "Too large"));
 * assert.equal(failure?.code, "resource_exhausted");
 * assert.equal(failureOfRouterError(new Error("bug")), null);
 * ```
 * @param error What the engine threw.
 * @returns The failure, or null.
 */
export function failureOfRouterError(error: unknown): ConnectFailure | null {
  if (!(error instanceof RouterError)) return null;
  return connectFailure(CODE_OF_EXTENSION[error.code] ?? "unknown", error.message);
}

/**
 * The Connect code of a GraphQL response's errors, decided by the first error
 * (its first wrapped subgraph error, see {@linkcode primaryError}) (DESIGN §4): validation → `invalid_argument`, unauthenticated →
 * `unauthenticated`, forbidden → `permission_denied`, subgraph unreachable →
 * `unavailable`, else `unknown`. A request error (no `data`) without a known
 * code is `invalid_argument`: it can only come from parsing, validation or
 * variable coercion.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { codeOfGraphQLErrors } from "./errors.ts";
 * const errors = [{ message: "No", extensions: { code: "FORBIDDEN" } }, { message: "x" }];
 * assert.equal(codeOfGraphQLErrors(errors, { requestError: false }), "permission_denied");
 * assert.equal(codeOfGraphQLErrors([{ message: "?" }], { requestError: false }), "unknown");
 * assert.equal(codeOfGraphQLErrors([{ message: "?" }], { requestError: true }), "invalid_argument");
 * ```
 * @param errors The GraphQL errors (at least one).
 * @param options Whether the response had no `data` (a request error).
 * @returns The code.
 */
export function codeOfGraphQLErrors(
  errors: readonly GraphQLFormattedError[],
  options: { readonly requestError: boolean },
): ConnectCode {
  const extension = primaryError(errors)?.extensions?.["code"];
  const known = typeof extension === "string" ? CODE_OF_EXTENSION[extension] : undefined;
  if (known !== undefined) return known;
  return options.requestError ? "invalid_argument" : "unknown";
}
