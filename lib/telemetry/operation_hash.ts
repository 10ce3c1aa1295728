/**
 * The operation hash of access logs and spans: cyrb53 (a public-domain 53-bit
 * string hash built on `Math.imul`) of the query text, as 14 hex digits. Not
 * a security hash: it names a document in logs without showing it.
 *
 * @module
 */

/**
 * Hashes an operation's text.
 *
 * @example Stable and text-sensitive
 * ```ts
 * import assert from "node:assert/strict";
 * import { operationHash } from "./operation_hash.ts";
 * assert.match(operationHash("{ a }"), /^[0-9a-f]{14}$/);
 * assert.equal(operationHash("{ a }"), operationHash("{ a }"));
 * assert.notEqual(operationHash("{ a }"), operationHash("{ b }"));
 * ```
 * @param text The query text.
 * @returns 14 lower-case hex digits.
 */
export function operationHash(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const value = 4294967296 * (2097151 & h2) + (h1 >>> 0);
  return value.toString(16).padStart(14, "0");
}
