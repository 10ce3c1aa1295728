/**
 * The rate limiter's view of its store: one GCRA step per request, and the
 * configured fallback while the store cannot answer (`rate_limit.fail_open`:
 * let the request through, default; or refuse it).
 *
 * @module
 */
import type { GcraDecision, GcraLimit } from "./gcra.ts";
import type { SharedStore } from "./types.ts";

/** A check's outcome: the store's decision, or the fallback's. */
export type RateLimitOutcome =
  | { readonly kind: "decided"; readonly decision: GcraDecision }
  | { readonly kind: "fail_open" | "fail_closed" };

/** Options for {@linkcode RateLimiter}. */
export interface RateLimiterOptions {
  /** Where budgets live (memory, or Redis shared by every replica). */
  readonly store: SharedStore;
  /** Prefix of keys (`rate_limit.storage.key_prefix`). */
  readonly prefix: string;
  /** While the store cannot answer: allow (true) or refuse. */
  readonly failOpen: boolean;
  /** Told each check the store could not answer. */
  readonly onFallback?: () => void;
}

/**
 * Budgets per client key.
 *
 * @example In memory
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore } from "./memory.ts";
 * import { RateLimiter } from "./rate_limiter.ts";
 * const limiter = new RateLimiter({ store: new MemoryStore({ maxBytes: 0 }), prefix: "rl", failOpen: true });
 * const limit = { rate: 1, burst: 1, periodMs: 60_000 };
 * const first = await limiter.check("graphql:1.2.3.4", limit);
 * const second = await limiter.check("graphql:1.2.3.4", limit);
 * assert.equal(first.kind === "decided" && first.decision.allowed, true);
 * assert.equal(second.kind === "decided" && second.decision.allowed, false);
 * ```
 */
export class RateLimiter {
  readonly #options: RateLimiterOptions;

  /** @param options Store, prefix, fallback. */
  constructor(options: RateLimiterOptions) {
    this.#options = options;
  }

  /**
   * One request against a key's budget.
   * @param key The client's key (facet and client).
   * @param limit The limit.
   * @returns The decision, or which fallback answered.
   */
  async check(key: string, limit: GcraLimit): Promise<RateLimitOutcome> {
    const { store, prefix, failOpen } = this.#options;
    try {
      return { kind: "decided", decision: await store.rateLimit(`${prefix}:${key}`, limit) };
    } catch {
      this.#options.onFallback?.();
      return { kind: failOpen ? "fail_open" : "fail_closed" };
    }
  }
}
