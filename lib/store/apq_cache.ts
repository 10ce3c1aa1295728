/**
 * Where APQ registrations live (`automatic_persisted_queries`): this replica's
 * byte-bounded memory LRU, and the shared store when one is named. A hash's
 * document never changes (the hash is verified on registration), so a copy
 * in memory is always right: reads try memory first, then the shared store;
 * while the shared store is unavailable reads and writes stay in memory.
 *
 * @module
 */
import type { MemoryStore } from "./memory.ts";
import type { SharedStore } from "./types.ts";

/** Options for {@linkcode ApqCache}. */
export interface ApqCacheOptions {
  /** This replica's copies. */
  readonly memory: MemoryStore;
  /** The shared store (Redis), or null for memory only. */
  readonly shared: SharedStore | null;
  /** Prefix of shared keys (`automatic_persisted_queries.storage.key_prefix`). */
  readonly prefix: string;
  /** How long a registration lives, ms. */
  readonly ttlMs: number;
  /** Told each call the shared store could not answer (memory answered instead). */
  readonly onFallback?: () => void;
  /**
   * Longer documents run but are not registered (`engine.max_cached_document_bytes`):
   * a client cannot fill the shared store with a few huge texts. @default Infinity
   */
  readonly maxDocumentLength?: number;
}

/**
 * APQ documents by SHA-256.
 *
 * @example Memory only
 * ```ts
 * import assert from "node:assert/strict";
 * import { ApqCache } from "./apq_cache.ts";
 * import { MemoryStore } from "./memory.ts";
 * const apq = new ApqCache({ memory: new MemoryStore({ maxBytes: 10_000 }), shared: null, prefix: "apq", ttlMs: 60_000 });
 * await apq.set("ab12", "{ a }");
 * assert.equal(await apq.get("ab12"), "{ a }");
 * ```
 */
export class ApqCache {
  readonly #options: ApqCacheOptions;

  /** @param options Stores, key prefix, TTL. */
  constructor(options: ApqCacheOptions) {
    this.#options = options;
  }

  /**
   * The document registered under a hash.
   * @param hash The SHA-256, lower-case hex.
   * @returns The document, or null.
   */
  async get(hash: string): Promise<string | null> {
    const { memory, shared, prefix, ttlMs } = this.#options;
    const local = memory.getNow(hash);
    if (local !== null || shared === null) return local;
    try {
      const value = await shared.get(`${prefix}:${hash}`);
      if (value !== null) memory.setNow(hash, value, ttlMs);
      return value;
    } catch {
      this.#options.onFallback?.();
      return null;
    }
  }

  /**
   * Registers a document (its hash already verified); one over `maxDocumentLength` is not.
   * @param hash The SHA-256, lower-case hex.
   * @param query The document.
   */
  async set(hash: string, query: string): Promise<void> {
    const { memory, shared, prefix, ttlMs } = this.#options;
    if (query.length > (this.#options.maxDocumentLength ?? Infinity)) return;
    memory.setNow(hash, query, ttlMs);
    if (shared === null) return;
    try {
      await shared.set(`${prefix}:${hash}`, query, ttlMs);
    } catch {
      this.#options.onFallback?.();
    }
  }
}
