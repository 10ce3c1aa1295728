/**
 * A small LRU map (insertion order of `Map` as recency).
 *
 * @module
 */

/** Least-recently-used cache with a fixed capacity. */
export class Lru<K, V> {
  readonly #map = new Map<K, V>();
  readonly #capacity: number;

  /** @param capacity Maximum entries (at least 1). */
  constructor(capacity: number) {
    this.#capacity = Math.max(1, Math.floor(capacity));
  }

  /**
   * Reads an entry and marks it recent.
   * @param key The key.
   * @returns The value, or undefined.
   */
  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value === undefined) return undefined;
    this.#map.delete(key);
    this.#map.set(key, value);
    return value;
  }

  /**
   * Stores an entry, evicting the oldest when full.
   * @param key The key.
   * @param value The value.
   */
  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#capacity) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.#map.delete(oldest.value);
    }
  }

  /** Number of entries. */
  get size(): number {
    return this.#map.size;
  }
}
