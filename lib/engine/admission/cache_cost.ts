/**
 * Size estimates of the engine's cache entries, so that the parse and plan
 * caches are bounded in bytes rather than in entries (issue 15): a cache of
 * 1 000 entries holds 1 000 × whatever size the documents have.
 *
 * Both entries grow with the document: the graphql-js AST (parsed without
 * locations) and the validation result for the parse cache; the normalized
 * selection, the fetch steps and their printed subgraph operations for the
 * plan cache. Measured with `Deno.memoryUsage()` around 300 entries of the
 * federation benchmark query: about 31 bytes of heap per byte of text for
 * each cache (AST with locations), 38 bytes per byte for a dense 72 KB
 * document without locations. {@linkcode BYTES_PER_TEXT_BYTE} errs high.
 *
 * @module
 */

/** Heap bytes per byte of document text, for either cache's entry. */
export const BYTES_PER_TEXT_BYTE = 40;

/** Fixed heap bytes of an entry (map slot, wrapper objects). */
export const ENTRY_OVERHEAD_BYTES = 512;

/**
 * The estimated heap size of a parse or plan cache entry for a document.
 *
 * @example A 1 000-character document costs about 40 KB
 * ```ts
 * import assert from "node:assert/strict";
 * import { entryCost } from "./cache_cost.ts";
 * assert.equal(entryCost("x".repeat(1000)), 40_512);
 * ```
 * @param key The cache key (the document text plus the operation name).
 * @returns Bytes.
 */
export function entryCost(key: string): number {
  return ENTRY_OVERHEAD_BYTES + BYTES_PER_TEXT_BYTE * key.length;
}
