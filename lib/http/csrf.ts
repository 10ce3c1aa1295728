/**
 * CSRF prevention, Apollo's rule: a request a browser may send cross-origin
 * without a CORS preflight (a GET, or a POST whose `Content-Type` is missing
 * or CORS-simple) runs only when it carries one of the required headers with
 * a non-empty value; a browser cannot add such a header without a preflight.
 *
 * @module
 */
import type { CsrfPreventionConfig } from "../config/mod.ts";
import { RouterError } from "../errors.ts";
import { hasPreflightHeader, isSimpleRequest } from "../request/mod.ts";

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
  if (hasPreflightHeader(request, policy.required_headers)) return null;
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
