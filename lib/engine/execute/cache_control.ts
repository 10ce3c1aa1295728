/**
 * `Cache-Control` for the entity cache (issue 42): what one subgraph answer
 * allows ({@linkcode parseCacheControl}), and the client answer's policy built
 * from every part it was made of ({@linkcode CachePolicy}): the smallest TTL,
 * `private` when any part was private, `no-store` when any part could not be
 * cached.
 *
 * Pure: header values in, policies out.
 *
 * @module
 */

/** What one subgraph answer allows a shared cache to do with it. */
export interface CacheDirectives {
  /** False: `no-store` or `no-cache` (never stored, never served from the cache). */
  readonly cacheable: boolean;
  /** How long it may be kept, ms (`s-maxage`, else `max-age`); null: the answer did not say. */
  readonly ttlMs: number | null;
  /** `private`: only for the identity that asked. */
  readonly private: boolean;
}

/** What a silent answer (no `Cache-Control`) gets. */
const SILENT: CacheDirectives = { cacheable: true, ttlMs: null, private: false };

/**
 * Reads a subgraph's `Cache-Control` (RFC 9111 §5.2.2). `s-maxage` wins over
 * `max-age` (the router is a shared cache); `no-store` and `no-cache` make the
 * answer uncacheable (the router never revalidates); an unreadable age counts
 * as zero (not cached).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseCacheControl } from "./cache_control.ts";
 * assert.deepEqual(parseCacheControl("max-age=60, s-maxage=30"), { cacheable: true, ttlMs: 30_000, private: false });
 * assert.deepEqual(parseCacheControl("private, max-age=5"), { cacheable: true, ttlMs: 5_000, private: true });
 * assert.equal(parseCacheControl("no-store").cacheable, false);
 * assert.equal(parseCacheControl(null).ttlMs, null);
 * ```
 * @param value The header's value, or null.
 * @returns The directives.
 */
export function parseCacheControl(value: string | null): CacheDirectives {
  if (value === null || value.trim() === "") return SILENT;
  let maxAge: number | null = null;
  let sMaxAge: number | null = null;
  let isPrivate = false;
  let cacheable = true;
  for (const part of value.split(",")) {
    const [rawName, ...rest] = part.split("=");
    const name = rawName!.trim().toLowerCase();
    const argument = rest.join("=").trim().replace(/^"(.*)"$/, "$1");
    if (name === "no-store" || name === "no-cache") cacheable = false;
    else if (name === "private") isPrivate = true;
    else if (name === "max-age" || name === "s-maxage") {
      const seconds = /^\d{1,10}$/.test(argument) ? Number(argument) : 0;
      if (name === "max-age") maxAge = seconds;
      else sMaxAge = seconds;
    }
  }
  const age = sMaxAge ?? maxAge;
  return { cacheable, ttlMs: age === null ? null : age * 1000, private: isPrivate };
}

/**
 * The policy of a client answer, made of every part it merged (fetched or
 * served from the cache). Empty (no part): no header.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CachePolicy } from "./cache_control.ts";
 * const policy = new CachePolicy();
 * assert.equal(policy.header(), null);
 * policy.add({ cacheable: true, ttlMs: 60_000, private: false });
 * policy.add({ cacheable: true, ttlMs: 30_500, private: true });
 * assert.equal(policy.header(), "max-age=30, private");
 * policy.add({ cacheable: false, ttlMs: null, private: false });
 * assert.equal(policy.header(), "no-store");
 * ```
 */
export class CachePolicy {
  #parts = 0;
  #cacheable = true;
  #ttlMs = Infinity;
  #private = false;

  /**
   * Adds a part.
   * @param part Whether it may be cached, for how long (ms; null: not said), and for whom.
   */
  add(
    part: { readonly cacheable: boolean; readonly ttlMs: number | null; readonly private: boolean },
  ): void {
    this.#parts++;
    if (!part.cacheable || part.ttlMs === null || part.ttlMs <= 0) this.#cacheable = false;
    else this.#ttlMs = Math.min(this.#ttlMs, part.ttlMs);
    if (part.private) this.#private = true;
  }

  /** A part that can never be cached (a mutation, an error, a failed fetch). */
  uncacheable(): void {
    this.add({ cacheable: false, ttlMs: null, private: false });
  }

  /**
   * The client answer's `Cache-Control`, or null when no part was added.
   * @returns `max-age=<s>, public|private`, or `no-store`.
   */
  header(): string | null {
    if (this.#parts === 0) return null;
    if (!this.#cacheable) return "no-store";
    const seconds = Math.floor(this.#ttlMs / 1000);
    if (seconds <= 0) return "no-store";
    return `max-age=${seconds}, ${this.#private ? "private" : "public"}`;
  }
}
