/**
 * `WWW-Authenticate: Bearer …` values (RFC 6750 §3, RFC 9728 §5.1).
 *
 * @module
 */
import { isValidScope } from "./scope_grammar.ts";

/** Options for {@linkcode formatBearerChallenge}. */
export interface BearerChallengeOptions {
  /** RFC 6750 error code; unset when the request had no token (RFC 6750 §3.1). */
  error?: "invalid_token" | "insufficient_scope" | "invalid_request";
  /** RFC 9728 metadata URL, sent as `resource_metadata`. */
  resourceMetadata?: string;
  /** Human-readable `error_description` (quotes, backslashes and controls are removed). */
  errorDescription?: string;
}

/** RFC 6750 §3: `error_description` is `%x20-21 / %x23-5B / %x5D-7E`. */
function cleanDescription(text: string): string {
  return text.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, "");
}

/** A URL serialized by `URL` percent-encodes `"` and controls; refuse anything else. */
function cleanUrl(url: string): string {
  return /^[\x21\x23-\x5B\x5D-\x7E]+$/.test(url) ? url : "";
}

/**
 * Builds a `WWW-Authenticate` value; attributes always in the order `error`,
 * `scope`, `resource_metadata`, `error_description`. Scopes outside the RFC 6749
 * grammar are left out, so the value can never be broken or injected (and
 * `Headers` never throws on it).
 *
 * @example Insufficient scope
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatBearerChallenge } from "./challenge.ts";
 * const value = formatBearerChallenge(["a", "b"], { error: "insufficient_scope" });
 * assert.equal(value, 'Bearer error="insufficient_scope", scope="a b"');
 * assert.equal(formatBearerChallenge([]), "Bearer");
 * ```
 * @param scopes Scopes that would satisfy the request, in display order.
 * @param options Error code, metadata URL and description.
 * @returns The header value.
 */
export function formatBearerChallenge(
  scopes: readonly string[],
  options: BearerChallengeOptions = {},
): string {
  const params: string[] = [];
  if (options.error) params.push(`error="${options.error}"`);
  const safe = scopes.filter(isValidScope);
  if (safe.length > 0) params.push(`scope="${safe.join(" ")}"`);
  const metadata = options.resourceMetadata ? cleanUrl(options.resourceMetadata) : "";
  if (metadata) params.push(`resource_metadata="${metadata}"`);
  const description = options.errorDescription ? cleanDescription(options.errorDescription) : "";
  if (description) params.push(`error_description="${description}"`);
  return params.length === 0 ? "Bearer" : `Bearer ${params.join(", ")}`;
}
