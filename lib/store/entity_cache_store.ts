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
import type { EntityCacheWrite } from "../engine/mod.ts";
import type { SharedStore } from "./types.ts";

/** Options for {@linkcode EntityCacheStore}. */
export interface EntityCacheStoreOptions {
  /** Memory or Redis. */
  readonly store: SharedStore;
  /** Prefix of every key (`entity_cache.storage.key_prefix`). */
  readonly prefix: string;
  /** Told each call the store could not answer (the subgraph answered instead). */
  readonly onFallback?: () => void;
  /** UTF-8 bytes of the largest entry stored (`max_entry_bytes`). @default Infinity */
  readonly maxEntryBytes?: number;
}

/** The longest tag kept (UTF-16 units); an entry with a longer one is not stored. */
export const MAX_TAG_LENGTH = 1_024;

/**
 * UTF-8 length of a text, without encoding it.
 * @param text The text.
 * @returns Its bytes.
 */
function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    // Two bytes below 0x800; three for the rest (a surrogate pair: 2 + 2 = 4).
    bytes += code < 0x800 || (code >= 0xd800 && code < 0xe000) ? 1 : 2;
  }
  return bytes;
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
 * await cache.set("products:Product:ab:cd", "entry", 60_000, { subgraph: "products", tags: ["p-1"] });
 * assert.deepEqual(await cache.getMany(["products:Product:ab:cd", "x"]), ["entry", null]);
 * assert.equal(await cache.invalidateTag("reviews", "p-1"), 0);
 * assert.equal(await cache.invalidateTag("products", "p-1"), 1);
 * await cache.set("products:Product:ab:cd", "entry", 60_000);
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
   * Writes an entry, indexed under its tags; an unavailable store drops it, as
   * it does an entry over `maxEntryBytes`, one with a tag over
   * {@linkcode MAX_TAG_LENGTH} and one a full tag index cannot take.
   * @param key The key.
   * @param value The entry.
   * @param ttlMs Its time to live, ms.
   * @param tagged Its subgraph and `@cacheTag` tags.
   * @returns What became of it.
   */
  async set(
    key: string,
    value: string,
    ttlMs: number,
    tagged?: { readonly subgraph: string; readonly tags: readonly string[] },
  ): Promise<EntityCacheWrite> {
    const { store, prefix } = this.#options;
    const bytes = utf8Length(value);
    if (bytes > (this.#options.maxEntryBytes ?? Infinity)) {
      return { stored: false, reason: "too_large" };
    }
    const tags = tagged?.tags ?? [];
    if (tags.some((tag) => tag.length > MAX_TAG_LENGTH)) {
      return { stored: false, reason: "too_large" };
    }
    try {
      if (tags.length === 0) {
        // Memory: an entry larger than the whole bound is not kept.
        if (!await store.set(`${prefix}:${key}`, value, ttlMs)) {
          return { stored: false, reason: "too_large" };
        }
        return { stored: true, bytes };
      }
      const tagKeys = tags.map((tag) => this.#tagKey(tagged!.subgraph, tag));
      const outcome = await store.setTagged(`${prefix}:${key}`, value, { ttlMs, tagKeys });
      if (outcome === "stored") return { stored: true, bytes };
      return { stored: false, reason: outcome === "index_full" ? "tag_index_full" : "too_large" };
    } catch {
      this.#options.onFallback?.();
      return { stored: false, reason: "unavailable" };
    }
  }

  /**
   * The key of a subgraph's tag index: `<prefix>:#tag:<subgraph>:<tag>` (no
   * subgraph is named `#tag`, so no invalidation prefix reaches it).
   */
  #tagKey(subgraph: string, tag: string): string {
    return `${this.#options.prefix}:#tag:${subgraph}:${tag}`;
  }

  /**
   * Deletes the entries of a subgraph that carry a tag.
   * @param subgraph The subgraph.
   * @param tag The tag.
   * @returns How many went.
   * @throws {StoreUnavailable} When Redis cannot answer (nothing is sure to be gone).
   */
  invalidateTag(subgraph: string, tag: string): Promise<number> {
    return this.#options.store.deleteTagged(this.#tagKey(subgraph, tag));
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
