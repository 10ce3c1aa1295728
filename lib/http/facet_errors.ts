/**
 * Errors the edge meets before a facet runs (body over the limit, body too
 * slow, queue full, deadline, shutdown), answered in the shape of the facet
 * the request was for: Connect's `{code, message}` and MCP's JSON-RPC error,
 * with the status and headers {@linkcode errorResponse} would give. A Connect
 * or MCP client reads the body's code; a GraphQL body there is unreadable.
 *
 * @module
 */
import {
  connectCodeOfStatus,
  connectErrorResponse,
  connectFailure,
  failureOfRouterError,
} from "../connect/errors.ts";
import { errorHeaders, type ErrorResponseOptions, knownError, statusOf } from "./errors.ts";

/**
 * The edge error as a Connect error body, with the edge's status and headers.
 *
 * @example A body over the limit is resource_exhausted
 * ```ts
 * import assert from "node:assert/strict";
 * import { RouterError } from "../errors.ts";
 * import { connectEdgeError } from "./facet_errors.ts";
 * const response = connectEdgeError(new RouterError("PAYLOAD_TOO_LARGE", "Too large"), {});
 * assert.equal(response.status, 413);
 * assert.deepEqual(await response.json(), { code: "resource_exhausted", message: "Too large" });
 * ```
 * @param error The thrown value.
 * @param options Logger and request id (internal errors are logged, never echoed).
 * @returns The response.
 */
export function connectEdgeError(error: unknown, options: ErrorResponseOptions): Response {
  const known = knownError(error, options);
  const failure = failureOfRouterError(known)!;
  const status = statusOf(known);
  // A refusal (a plugin's, the coprocessor's break) is coded by its status.
  const code = known.code === "REFUSED" ? connectCodeOfStatus(status) : failure.code;
  return connectErrorResponse(
    connectFailure(code, failure.message, {
      status,
      headers: Object.fromEntries(errorHeaders(known, options.headers)),
    }),
  );
}

/**
 * The edge error as a JSON-RPC error (id null: the message was not read),
 * with the edge's status and headers: -32600 for a client's fault (4xx),
 * -32603 for an internal error, -32000 for the server's state (503, 504).
 *
 * @example A full queue
 * ```ts
 * import assert from "node:assert/strict";
 * import { RouterError } from "../errors.ts";
 * import { mcpEdgeError } from "./facet_errors.ts";
 * const busy = new RouterError("SERVICE_OVERLOADED", "Busy", { details: { retry_after: 1 } });
 * const response = mcpEdgeError(busy, {});
 * assert.equal(response.status, 503);
 * assert.equal(response.headers.get("retry-after"), "1");
 * assert.deepEqual(await response.json(), {
 *   jsonrpc: "2.0",
 *   id: null,
 *   error: { code: -32000, message: "Busy" },
 * });
 * ```
 * @param error The thrown value.
 * @param options Logger and request id (internal errors are logged, never echoed).
 * @returns The response.
 */
export function mcpEdgeError(error: unknown, options: ErrorResponseOptions): Response {
  const known = knownError(error, options);
  const status = statusOf(known);
  const code = status < 500 ? -32600 : known.code === "INTERNAL" ? -32603 : -32000;
  const headers = errorHeaders(known, options.headers);
  headers.set("content-type", "application/json");
  const body = { jsonrpc: "2.0", id: null, error: { code, message: known.message } };
  return new Response(JSON.stringify(body), { status, headers });
}
