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
 * An entry also has a fixed cost whatever its text (issue 34: tiny documents
 * were undercounted 3–4×): measured through the router (`Deno.memoryUsage()`
 * after GC around 3 000 distinct documents, both caches), a 17-character
 * query costs 1 758 heap bytes per entry and a 30-character one 1 955, so
 * about 950 bytes are fixed (the map slot and key, the prepared operation's
 * wrapper objects, the plan's steps); a 1.5 KB query costs 38 KB. With
 * {@linkcode ENTRY_OVERHEAD_BYTES} at 1 024 the estimate is 0.96× the heap for
 * the tiny documents and 1.6× for the large ones: the configured bytes
 * predict the caches' heap within 2× either way.
 *
 * Session 13 (`tests/e2e/_cache_heap_probe.ts`, heap after GC, both caches,
 * documents run through prepare + plan + execute): a 19-character document
 * costs 4 294 bytes per entry pair, a 1 183-character one with 60 aliased
 * fields 52 314 (22 bytes per byte of text per cache). At 40 bytes per byte
 * the large one was estimated at 2.03× its heap; at 32 the estimates are
 * 0.86× (tiny) and 1.64× (large), and 0.84× for the dense 72 KB document.
 *
 * @module
 */

/** Heap bytes per byte of document text, for either cache's entry. */
export const BYTES_PER_TEXT_BYTE = 32;

/** Fixed heap bytes of an entry (map slot, key, wrapper objects), measured. */
export const ENTRY_OVERHEAD_BYTES = 1_024;

/**
 * The estimated heap size of a parse or plan cache entry for a document.
 *
 * @example A 1 000-character document costs about 33 KB
 * ```ts
 * import assert from "node:assert/strict";
 * import { entryCost } from "./cache_cost.ts";
 * assert.equal(entryCost("x".repeat(1000)), 33_024);
 * ```
 * @param key The cache key (the document text plus the operation name).
 * @returns Bytes.
 */
export function entryCost(key: string): number {
  return ENTRY_OVERHEAD_BYTES + BYTES_PER_TEXT_BYTE * key.length;
}
