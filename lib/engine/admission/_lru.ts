/**
 * A least-recently-used map bounded in bytes (and in entries): each entry
 * carries its estimated size, and the oldest entries go until both bounds
 * hold. An entry larger than the whole byte bound is never stored.
 *
 * @module
 */

/** Bounds of an {@linkcode Lru}. */
export interface LruOptions {
  /** Sum of the entries' sizes kept, bytes. */
  readonly maxBytes: number;
  /** Entries kept. @default Infinity */
  readonly maxEntries?: number;
}

/**
 * Least-recently-used cache bounded by the sum of its entries' sizes.
 *
 * @example The oldest entry goes when the bytes would pass the bound
 * ```ts
 * import assert from "node:assert/strict";
 * import { Lru } from "./_lru.ts";
 * const lru = new Lru<string, number>({ maxBytes: 100 });
 * lru.set("a", 1, 60);
 * lru.set("b", 2, 30);
 * lru.get("a"); // "a" is now the most recent
 * lru.set("c", 3, 40);
 * assert.equal(lru.get("b"), undefined);
 * assert.equal(lru.get("a"), 1);
 * assert.equal(lru.bytes, 100);
 * lru.set("huge", 4, 101);
 * assert.equal(lru.get("huge"), undefined);
 * ```
 */
export class Lru<K, V> {
  readonly #map = new Map<K, { value: V; bytes: number }>();
  readonly #maxBytes: number;
  readonly #maxEntries: number;
  #bytes = 0;

  /** @param options The byte bound (and an entry bound). */
  constructor(options: LruOptions) {
    this.#maxBytes = Math.max(0, options.maxBytes);
    this.#maxEntries = Math.max(1, Math.floor(options.maxEntries ?? Infinity));
  }

  /**
   * Reads an entry and marks it recent.
   * @param key The key.
   * @returns The value, or undefined.
   */
  get(key: K): V | undefined {
    const entry = this.#map.get(key);
    if (entry === undefined) return undefined;
    this.#map.delete(key);
    this.#map.set(key, entry);
    return entry.value;
  }

  /**
   * Stores an entry, evicting the oldest until both bounds hold; an entry over
   * the byte bound by itself is not stored (and replaces nothing).
   * @param key The key.
   * @param value The value.
   * @param bytes The entry's estimated size.
   * @returns Whether the entry was stored.
   */
  set(key: K, value: V, bytes: number): boolean {
    if (bytes > this.#maxBytes) return false;
    const old = this.#map.get(key);
    if (old !== undefined) {
      this.#map.delete(key);
      this.#bytes -= old.bytes;
    }
    this.#map.set(key, { value, bytes });
    this.#bytes += bytes;
    for (const [oldest, entry] of this.#map) {
      if (this.#bytes <= this.#maxBytes && this.#map.size <= this.#maxEntries) break;
      this.#map.delete(oldest);
      this.#bytes -= entry.bytes;
    }
    return true;
  }

  /**
   * Whether an entry is there (it is not marked recent).
   * @param key The key.
   * @returns Whether it is there.
   */
  has(key: K): boolean {
    return this.#map.has(key);
  }

  /**
   * Removes an entry.
   * @param key The key.
   * @returns Whether it was there.
   */
  delete(key: K): boolean {
    const entry = this.#map.get(key);
    if (entry === undefined) return false;
    this.#map.delete(key);
    this.#bytes -= entry.bytes;
    return true;
  }

  /** The keys, oldest first (a copy: safe to delete while iterating). */
  keys(): K[] {
    return [...this.#map.keys()];
  }

  /** Number of entries. */
  get size(): number {
    return this.#map.size;
  }

  /** Sum of the entries' estimated sizes, bytes. */
  get bytes(): number {
    return this.#bytes;
  }
}
