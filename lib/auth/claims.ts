/**
 * Claim and header rules jose does not apply by itself (RFC 8725, RFC 9068):
 * a token whose `typ` names another kind of JWT is refused, `iat` may not lie
 * in the future beyond the clock skew. Pure.
 *
 * @module
 */

/** The access-token `typ` of RFC 9068. */
export const ACCESS_TOKEN_TYP = "at+jwt";

/**
 * Normalizes a `typ` header (RFC 7515 §4.1.9: `application/` may be omitted;
 * media types compare case-insensitively).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { normalizeTyp } from "./claims.ts";
 * assert.equal(normalizeTyp("application/AT+JWT"), "at+jwt");
 * assert.equal(normalizeTyp(undefined), "");
 * ```
 * @param typ The header value.
 * @returns The lower-cased media subtype, `""` when absent or not a string.
 */
export function normalizeTyp(typ: unknown): string {
  if (typeof typ !== "string") return "";
  const lower = typ.trim().toLowerCase();
  return lower.startsWith("application/") ? lower.slice("application/".length) : lower;
}

/**
 * Why a token's header or claims are refused beyond jose's checks, or null.
 *
 * - `typ` of the form `<kind>+jwt` other than `at+jwt` (an ID token, a logout
 *   token, a security event, a DPoP proof…: RFC 8725 §3.11 explicit typing)
 *   is always refused; plain `JWT` and no `typ` pass unless `requiredTyp` is set.
 * - `requiredTyp` (`jwks[].required_typ`) must then match exactly.
 * - `iat` later than `now + skew` is refused (a token from the future).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { refuseClaims } from "./claims.ts";
 * const now = 1_000_000;
 * assert.equal(refuseClaims({ typ: "JWT" }, { iat: now }, { nowSec: now, skewSec: 60 }), null);
 * assert.match(refuseClaims({ typ: "id_token+jwt" }, {}, { nowSec: now, skewSec: 60 }) ?? "", /id_token\+jwt/);
 * assert.match(refuseClaims({}, { iat: now + 61 }, { nowSec: now, skewSec: 60 }) ?? "", /future/);
 * assert.match(refuseClaims({ typ: "JWT" }, {}, { nowSec: now, skewSec: 0, requiredTyp: "at+jwt" }) ?? "", /at\+jwt/);
 * ```
 * @param header The protected header.
 * @param claims The verified payload.
 * @param options Clock (seconds), skew (seconds) and the required `typ`.
 * @returns A client-safe reason, or null when the token passes.
 */
export function refuseClaims(
  header: { readonly typ?: unknown },
  claims: { readonly iat?: unknown },
  options: { readonly nowSec: number; readonly skewSec: number; readonly requiredTyp?: string },
): string | null {
  const typ = normalizeTyp(header.typ);
  if (typ.endsWith("+jwt") && typ !== ACCESS_TOKEN_TYP) {
    return `The token's typ "${typ}" is not an access token`;
  }
  const required = normalizeTyp(options.requiredTyp);
  if (required !== "" && typ !== required) {
    return `The access token's typ must be "${required}"`;
  }
  if (typeof claims.iat === "number" && claims.iat > options.nowSec + options.skewSec) {
    return 'The access token\'s "iat" claim is in the future';
  }
  return null;
}
