/**
 * The in-memory {@linkcode SharedStore}: values in an LRU bounded in bytes
 * (each entry's key and value length), expiring by TTL; rate-limit TATs in an
 * LRU bounded in keys (a key that falls out starts with a full bucket).
 *
 * @module
 */
import { Lru } from "../engine/mod.ts";
import { type GcraDecision, type GcraLimit, gcraStep } from "./gcra.ts";
import type { SharedStore } from "./types.ts";

/** Options for {@linkcode MemoryStore}. */
export interface MemoryStoreOptions {
  /** Bytes of values kept (keys and values, UTF-16 length × 2 + 64 per entry). */
  readonly maxBytes: number;
  /** Rate-limit keys kept. @default 100000 */
  readonly maxKeys?: number;
  /**
   * Bytes of the tag indexes (64 + 2 × length per tag and per key held).
   * @default {maxBytes / 4}
   */
  readonly maxTagIndexBytes?: number;
  /** Live keys one tag index holds. @default 10000 */
  readonly maxKeysPerTag?: number;
  /** The clock, ms. @default Date.now */
  readonly now?: () => number;
}

/**
 * One replica's store.
 *
 * @example Values expire; the byte bound holds
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore } from "./memory.ts";
 * let now = 0;
 * const store = new MemoryStore({ maxBytes: 1000, now: () => now });
 * await store.set("a", "1", 100);
 * assert.equal(await store.get("a"), "1");
 * now = 100;
 * assert.equal(await store.get("a"), null);
 * await store.set("big", "x".repeat(1000), 100);
 * assert.equal(await store.get("big"), null);
 * ```
 */
export class MemoryStore implements SharedStore {
  /** Always `memory`. */
  readonly kind = "memory" as const;
  readonly #values: Lru<string, { readonly value: string; readonly expires: number }>;
  readonly #tats: Lru<string, { readonly tat: number; readonly expires: number }>;
  readonly #now: () => number;
  /** Tag index → key → its expiry. */
  readonly #tags = new Map<string, Map<string, number>>();
  #tagBytes = 0;
  readonly #maxTagBytes: number;
  readonly #maxKeysPerTag: number;
  readonly #maxBytes: number;

  /** @param options Bounds and clock. */
  constructor(options: MemoryStoreOptions) {
    this.#maxBytes = options.maxBytes;
    this.#maxTagBytes = options.maxTagIndexBytes ?? Math.floor(options.maxBytes / 4);
    this.#maxKeysPerTag = options.maxKeysPerTag ?? 10_000;
    this.#values = new Lru({ maxBytes: options.maxBytes });
    const maxKeys = options.maxKeys ?? 100_000;
    this.#tats = new Lru({ maxBytes: maxKeys, maxEntries: maxKeys });
    this.#now = options.now ?? Date.now;
  }

  /**
   * Reads a value synchronously (null: absent or expired).
   * @param key The key.
   * @returns The value.
   */
  getNow(key: string): string | null {
    const entry = this.#values.get(key);
    if (entry === undefined) return null;
    // An expired entry stays until it is overwritten or the LRU drops it.
    return entry.expires <= this.#now() ? null : entry.value;
  }

  /**
   * Writes a value synchronously.
   * @param key The key.
   * @param value The value.
   * @param ttlMs Its time to live, ms.
   * @returns False when it is larger than the whole bound (not kept).
   */
  setNow(key: string, value: string, ttlMs: number): boolean {
    return this.#values.set(
      key,
      { value, expires: this.#now() + ttlMs },
      64 + 2 * (key.length + value.length),
    );
  }

  /**
   * One GCRA step synchronously.
   * @param key The client's key.
   * @param limit The limit.
   * @returns The decision.
   */
  rateLimitNow(key: string, limit: GcraLimit): GcraDecision {
    const now = this.#now();
    const entry = this.#tats.get(key);
    const stored = entry === undefined || entry.expires <= now ? null : entry.tat;
    const step = gcraStep(stored, now, limit);
    if (step.tat !== null) this.#tats.set(key, { tat: step.tat, expires: now + step.ttlMs }, 1);
    return step.decision;
  }

  /** {@inheritDoc SharedStore.get} */
  get(key: string): Promise<string | null> {
    return Promise.resolve(this.getNow(key));
  }

  /** {@inheritDoc SharedStore.getMany} */
  getMany(keys: readonly string[]): Promise<(string | null)[]> {
    return Promise.resolve(keys.map((key) => this.getNow(key)));
  }

  /** {@inheritDoc SharedStore.set} */
  set(key: string, value: string, ttlMs: number): Promise<boolean> {
    return Promise.resolve(this.setNow(key, value, ttlMs));
  }

  /** {@inheritDoc SharedStore.deletePrefix} */
  deletePrefix(prefix: string): Promise<number> {
    let deleted = 0;
    const now = this.#now();
    for (const key of this.#values.keys()) {
      if (!key.startsWith(prefix)) continue;
      const entry = this.#values.get(key);
      // Expired entries go too, uncounted: they were gone already.
      if (this.#values.delete(key) && entry !== undefined && entry.expires > now) deleted++;
    }
    return Promise.resolve(deleted);
  }

  /** {@inheritDoc SharedStore.setTagged} */
  setTagged(
    key: string,
    value: string,
    options: { readonly ttlMs: number; readonly tagKeys: readonly string[] },
  ): Promise<"stored" | "index_full" | "too_large"> {
    if (64 + 2 * (key.length + value.length) > this.#maxBytes) return Promise.resolve("too_large");
    const expires = this.#now() + options.ttlMs;
    let needed = 0;
    for (const tag of options.tagKeys) {
      let index = this.#tags.get(tag);
      if (index?.has(key)) continue;
      if (index !== undefined && index.size >= this.#maxKeysPerTag) {
        this.#prune(tag, index);
        index = this.#tags.get(tag);
        if (index !== undefined && index.size >= this.#maxKeysPerTag) {
          return Promise.resolve("index_full");
        }
      }
      needed += 64 + 2 * key.length + (index === undefined ? 64 + 2 * tag.length : 0);
    }
    if (this.#tagBytes + needed > this.#maxTagBytes) {
      for (const [tag, index] of this.#tags) this.#prune(tag, index);
      if (this.#tagBytes + needed > this.#maxTagBytes) return Promise.resolve("index_full");
    }
    for (const tag of options.tagKeys) {
      let index = this.#tags.get(tag);
      if (index === undefined) {
        this.#tags.set(tag, index = new Map());
        this.#tagBytes += 64 + 2 * tag.length;
      }
      if (!index.has(key)) this.#tagBytes += 64 + 2 * key.length;
      index.set(key, Math.max(index.get(key) ?? 0, expires));
    }
    this.setNow(key, value, options.ttlMs);
    return Promise.resolve("stored");
  }

  /** Drops the keys of a tag index that expired or left the LRU. */
  #prune(tag: string, index: Map<string, number>): void {
    const now = this.#now();
    for (const [key, expires] of index) {
      if (expires > now && this.#values.has(key)) continue;
      index.delete(key);
      this.#tagBytes -= 64 + 2 * key.length;
    }
    if (index.size === 0) this.#dropIndex(tag);
  }

  #dropIndex(tag: string): void {
    const index = this.#tags.get(tag);
    if (index === undefined) return;
    for (const key of index.keys()) this.#tagBytes -= 64 + 2 * key.length;
    this.#tags.delete(tag);
    this.#tagBytes -= 64 + 2 * tag.length;
  }

  /** {@inheritDoc SharedStore.deleteTagged} */
  deleteTagged(tagKey: string): Promise<number> {
    const index = this.#tags.get(tagKey);
    if (index === undefined) return Promise.resolve(0);
    const now = this.#now();
    let deleted = 0;
    for (const key of index.keys()) {
      const entry = this.#values.get(key);
      if (this.#values.delete(key) && entry !== undefined && entry.expires > now) deleted++;
    }
    this.#dropIndex(tagKey);
    return Promise.resolve(deleted);
  }

  /** Bytes the tag indexes hold (64 + 2 × length per tag and per key). */
  get tagIndexBytes(): number {
    return this.#tagBytes;
  }

  /** {@inheritDoc SharedStore.rateLimit} */
  rateLimit(key: string, limit: GcraLimit): Promise<GcraDecision> {
    return Promise.resolve(this.rateLimitNow(key, limit));
  }

  /** Nothing to close. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
