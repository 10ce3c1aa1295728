/**
 * Where the entity cache keeps its entries (`entity_cache.storage`): this
 * replica's byte-bounded memory, or Redis shared by every replica. With Redis
 * there is no copy in memory, so one invalidation reaches every replica.
 * While Redis is unavailable reads miss and writes are dropped: fetches go to
 * the subgraphs (counted as fallbacks; the provider's state change is logged
 * once each way by `stores.ts`).
 *
 * @module
 */
import type { SharedStore } from "./types.ts";

/** Options for {@linkcode EntityCacheStore}. */
export interface EntityCacheStoreOptions {
  /** Memory or Redis. */
  readonly store: SharedStore;
  /** Prefix of every key (`entity_cache.storage.key_prefix`). */
  readonly prefix: string;
  /** Told each call the store could not answer (the subgraph answered instead). */
  readonly onFallback?: () => void;
}

/**
 * Entity cache entries, by key (after the prefix).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EntityCacheStore } from "./entity_cache_store.ts";
 * import { MemoryStore } from "./memory.ts";
 * const cache = new EntityCacheStore({ store: new MemoryStore({ maxBytes: 10_000 }), prefix: "gw_entity" });
 * await cache.set("products:Product:ab:cd", "entry", 60_000);
 * assert.deepEqual(await cache.getMany(["products:Product:ab:cd", "x"]), ["entry", null]);
 * assert.equal(await cache.invalidate("products:Product:"), 1);
 * assert.deepEqual(await cache.getMany(["products:Product:ab:cd"]), [null]);
 * ```
 */
export class EntityCacheStore {
  readonly #options: EntityCacheStoreOptions;

  /** @param options The store and key prefix. */
  constructor(options: EntityCacheStoreOptions) {
    this.#options = options;
  }

  /** `memory` or `redis`. */
  get kind(): "memory" | "redis" {
    return this.#options.store.kind;
  }

  /**
   * Reads entries; an unavailable store misses them all.
   * @param keys The keys.
   * @returns Each entry, or null.
   */
  async getMany(keys: readonly string[]): Promise<(string | null)[]> {
    const { store, prefix } = this.#options;
    try {
      return await store.getMany(keys.map((key) => `${prefix}:${key}`));
    } catch {
      this.#options.onFallback?.();
      return keys.map(() => null);
    }
  }

  /**
   * Writes an entry; an unavailable store drops it.
   * @param key The key.
   * @param value The entry.
   * @param ttlMs Its time to live, ms.
   */
  async set(key: string, value: string, ttlMs: number): Promise<void> {
    const { store, prefix } = this.#options;
    try {
      await store.set(`${prefix}:${key}`, value, ttlMs);
    } catch {
      this.#options.onFallback?.();
    }
  }

  /**
   * Deletes every entry under a key prefix.
   * @param keyPrefix The prefix (after the store's).
   * @returns How many went.
   * @throws {StoreUnavailable} When Redis cannot answer (nothing is sure to be gone).
   */
  invalidate(keyPrefix: string): Promise<number> {
    const { store, prefix } = this.#options;
    return store.deletePrefix(`${prefix}:${keyPrefix}`);
  }
}
