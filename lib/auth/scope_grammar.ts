/**
 * RFC 6749 §3.3 scope grammar: `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`.
 * Every scope that can reach a `WWW-Authenticate` header passes through here
 * first, so a quote, backslash, space or line break can never break a challenge.
 *
 * @module
 */

const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * Tells whether a string is one RFC 6749 scope token.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isValidScope } from "./scope_grammar.ts";
 * assert.equal(isValidScope("read:users"), true);
 * assert.equal(isValidScope('a"b'), false);
 * assert.equal(isValidScope("a\r\nb"), false);
 * assert.equal(isValidScope(""), false);
 * ```
 * @param scope The candidate.
 * @returns True when it matches `scope-token`.
 */
export function isValidScope(scope: string): boolean {
  return SCOPE_TOKEN.test(scope);
}

/**
 * Reads a token's `scope` claim (spec §2.4): a single string of scopes separated by SP
 * (U+0020) only.
 * Any other type (an array, a number, absent) means no scopes (DESIGN §4); tokens
 * that break the RFC 6749 grammar are dropped, never echoed. First-seen order,
 * no duplicates.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseScopeClaim } from "./scope_grammar.ts";
 * assert.deepEqual(parseScopeClaim("a  b a"), ["a", "b"]);
 * assert.deepEqual(parseScopeClaim(["a", "b"]), []);
 * assert.deepEqual(parseScopeClaim('a b"c'), ["a"]);
 * ```
 * @param claim The raw claim value.
 * @returns The scopes.
 */
export function parseScopeClaim(claim: unknown): readonly string[] {
  if (typeof claim !== "string") return [];
  // A Set keeps claim order and drops repeats in linear time (a scan per scope was quadratic:
  // 50 000 scopes held the event loop for seconds).
  const seen = new Set<string>();
  // RFC 6749 §3.3: `scope-token *( SP scope-token )`. A tab or line break is no separator:
  // the token holding it breaks the grammar and is dropped, never split into two grants.
  for (const scope of claim.split(" ")) {
    if (scope !== "" && isValidScope(scope)) seen.add(scope);
  }
  return [...seen];
}
