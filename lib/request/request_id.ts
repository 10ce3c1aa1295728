/**
 * Request ids: the client's `X-Request-Id` when it is safe to echo and log,
 * else a fresh one. Pure (the generator is injected).
 *
 * @module
 */

/** The header carrying the request id, both ways (lower case, as `Headers` gives it). */
export const REQUEST_ID_HEADER = "x-request-id";

/** Longest accepted client request id; a longer one is replaced, never truncated. */
export const MAX_REQUEST_ID_LENGTH = 128;

/**
 * Characters a client request id may use: letters, digits and `-_.:+/=@`
 * (UUIDs, ULIDs, base64 and Cosmo/Envoy-style ids), nothing that could split
 * a log line, a header or a label.
 */
const ALLOWED = /^[A-Za-z0-9\-_.:+/=@]+$/;

/** Options for {@linkcode acceptRequestId}. */
export interface AcceptRequestIdOptions {
  /**
   * Makes a new id when the client sent none or an unusable one.
   * @default {() => crypto.randomUUID()}
   */
  readonly generate?: () => string;
}

/**
 * The request id of a request: the client's value when it has 1 to
 * {@linkcode MAX_REQUEST_ID_LENGTH} allowed characters, otherwise a new one.
 *
 * @example A valid id is kept, a hostile one replaced
 * ```ts
 * import assert from "node:assert/strict";
 * import { acceptRequestId } from "./request_id.ts";
 * const generate = () => "generated";
 * assert.equal(acceptRequestId("abc-123", { generate }), "abc-123");
 * assert.equal(acceptRequestId("a\nb", { generate }), "generated");
 * assert.equal(acceptRequestId(null, { generate }), "generated");
 * ```
 * @param value The `X-Request-Id` header value, or null.
 * @param options The id generator.
 * @returns The id to use.
 */
export function acceptRequestId(
  value: string | null,
  options: AcceptRequestIdOptions = {},
): string {
  if (value !== null && value.length <= MAX_REQUEST_ID_LENGTH && ALLOWED.test(value)) return value;
  return (options.generate ?? defaultGenerate)();
}

function defaultGenerate(): string {
  return crypto.randomUUID();
}

/** A GraphQL error as it is serialized (`GraphQLFormattedError`-like). */
export interface ErrorWithExtensions {
  readonly message: string;
  readonly extensions?: { readonly [key: string]: unknown };
}

/**
 * Copies errors with `extensions.request_id` set (the inputs are left as they are).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withRequestId } from "./request_id.ts";
 * const errors = withRequestId([{ message: "x", extensions: { code: "C" } }], "r1");
 * assert.deepEqual(errors, [{ message: "x", extensions: { code: "C", request_id: "r1" } }]);
 * ```
 * @param errors The errors.
 * @param requestId The request id.
 * @returns New error objects.
 */
export function withRequestId<E extends ErrorWithExtensions>(
  errors: readonly E[],
  requestId: string,
): E[] {
  return errors.map((error) => ({
    ...error,
    extensions: { ...error.extensions, request_id: requestId },
  }));
}
