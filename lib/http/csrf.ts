/**
 * CSRF prevention, Apollo's rule: a request a browser may send cross-origin
 * without a CORS preflight (a GET, or a POST whose `Content-Type` is missing
 * or CORS-simple) runs only when it carries one of the required headers with
 * a non-empty value; a browser cannot add such a header without a preflight.
 *
 * @module
 */
import type { CsrfPreventionConfig } from "../config/types.ts";
import { RouterError } from "../errors.ts";

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
 * import { isSimpleRequest } from "./csrf.ts";
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
 * The refusal of a request that could be a cross-site request forgery, or
 * null when it may run (guard off, a preflighted request, or one of the
 * required headers present and non-empty).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { csrfRefusal } from "./csrf.ts";
 * const policy = { enabled: true, required_headers: ["apollo-require-preflight"] };
 * const bare = new Request("http://r/graphql?query={a}");
 * assert.equal(csrfRefusal(bare, policy)?.code, "BAD_REQUEST");
 * const marked = new Request("http://r/graphql?query={a}", { headers: { "apollo-require-preflight": "1" } });
 * assert.equal(csrfRefusal(marked, policy), null);
 * ```
 * @param request The request.
 * @param policy `csrf_prevention`.
 * @returns The error (400 `BAD_REQUEST`, naming the headers), or null.
 */
export function csrfRefusal(request: Request, policy: CsrfPreventionConfig): RouterError | null {
  if (!policy.enabled || !isSimpleRequest(request)) return null;
  for (const name of policy.required_headers) {
    const value = request.headers.get(name);
    if (value !== null && value.trim() !== "") return null;
  }
  return new RouterError(
    "BAD_REQUEST",
    "This operation has been blocked as a potential Cross-Site Request Forgery (CSRF). " +
      "Send a Content-Type other than application/x-www-form-urlencoded, multipart/form-data " +
      `or text/plain, or a non-empty value for one of these headers: ${
        policy.required_headers.join(", ")
      }`,
    { details: { required_headers: [...policy.required_headers] } },
  );
}
