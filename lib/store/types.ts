/**
 * The shared-state interface (issue 30): a key-value store with TTLs and an
 * atomic GCRA rate-limit check. In memory by default ({@linkcode MemoryStore}
 * in `memory.ts`), Redis across replicas (`redis.ts`).
 *
 * @module
 */
import type { GcraDecision, GcraLimit } from "./gcra.ts";

/** State behind one small interface; every call may fail with {@linkcode StoreUnavailable}. */
export interface SharedStore {
  /** `memory` or `redis`. */
  readonly kind: "memory" | "redis";
  /** Reads a value (null: absent or expired). */
  get(key: string): Promise<string | null>;
  /** Reads several values at once (Redis: one `MGET`; a cluster: one `GET` each). */
  getMany(keys: readonly string[]): Promise<(string | null)[]>;
  /**
   * Writes a value that expires after `ttlMs`.
   * @returns False when the store did not keep it (memory: larger than its whole bound).
   */
  set(key: string, value: string, ttlMs: number): Promise<boolean>;
  /**
   * Deletes every value whose key starts with `prefix` (the entity cache's
   * invalidation); with Redis, a bounded `SCAN` of the keyspace.
   * @returns How many went.
   */
  deletePrefix(prefix: string): Promise<number>;
  /**
   * Writes a value and adds its key to each tag index (`tagKeys`: one sorted
   * set of keys each, with Redis), every index kept as long as its longest-lived
   * key and holding at most `maxKeysPerTag` live keys.
   * @returns `stored`, or why not: an index was full, the value larger than the store's bound.
   */
  setTagged(
    key: string,
    value: string,
    options: { readonly ttlMs: number; readonly tagKeys: readonly string[] },
  ): Promise<"stored" | "index_full" | "too_large">;
  /**
   * Deletes every value whose key a tag index holds, and the index.
   * @returns How many values went.
   */
  deleteTagged(tagKey: string): Promise<number>;
  /** One GCRA step for `key`, atomic across every replica sharing the store. */
  rateLimit(key: string, limit: GcraLimit): Promise<GcraDecision>;
  /** Closes connections. */
  close(): Promise<void>;
}

/** A store call that could not be answered (Redis down, too slow); the feature's fallback answers. */
export class StoreUnavailable extends Error {
  /**
   * @param message What failed.
   * @param options The cause.
   */
  constructor(message: string, options: ErrorOptions = {}) {
    super(message, options);
    this.name = "StoreUnavailable";
  }
}
