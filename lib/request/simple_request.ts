/**
 * Which requests a browser sends cross-origin without a CORS preflight (Fetch
 * standard): the shared test of CSRF prevention (`lib/http/csrf.ts`) and of the
 * cookie token source (`lib/auth/jwt.ts`).
 *
 * @module
 */

/** Content types a browser sends cross-origin without a preflight (Fetch standard). */
const SIMPLE_CONTENT_TYPES: ReadonlySet<string> = new Set([
  "application/x-www-form-urlencoded",
  "multipart/form-data",
  "text/plain",
]);

/**
 * Whether a browser could have sent this request without a CORS preflight.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isSimpleRequest } from "./simple_request.ts";
 * assert.equal(isSimpleRequest(new Request("http://r/graphql?query={a}")), true);
 * const json = new Request("http://r/graphql", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
 * assert.equal(isSimpleRequest(json), false);
 * const text = new Request("http://r/graphql", { method: "POST", headers: { "content-type": "text/plain; charset=utf-8" }, body: "{}" });
 * assert.equal(isSimpleRequest(text), true);
 * ```
 * @param request The request.
 * @returns True for a GET/HEAD, or a request with no or a CORS-simple `Content-Type`.
 */
export function isSimpleRequest(request: Request): boolean {
  if (request.method === "GET" || request.method === "HEAD") return true;
  const contentType = request.headers.get("content-type");
  if (contentType === null) return true;
  const essence = contentType.split(";")[0]!.trim().toLowerCase();
  return SIMPLE_CONTENT_TYPES.has(essence);
}

/**
 * Whether the request carries one of `names` with a non-empty value (a
 * browser cannot add such a header cross-origin without a preflight).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hasPreflightHeader } from "./simple_request.ts";
 * const marked = new Request("http://r/", { headers: { "graphql-preflight": "1" } });
 * assert.equal(hasPreflightHeader(marked, ["graphql-preflight"]), true);
 * assert.equal(hasPreflightHeader(new Request("http://r/"), ["graphql-preflight"]), false);
 * ```
 * @param request The request.
 * @param names Header names (`csrf_prevention.required_headers`).
 * @returns True when one of them is present and non-empty.
 */
export function hasPreflightHeader(request: Request, names: readonly string[]): boolean {
  for (const name of names) {
    const value = request.headers.get(name);
    if (value !== null && value.trim() !== "") return true;
  }
  return false;
}
