/**
 * A JWKS fetched from a URL, with the cache jose's remote set lacks: the last
 * good keys keep serving while the identity provider is down, a stale set is
 * refreshed in the background, and a refetch for an unknown `kid` happens at
 * most once per cooldown (shared while in flight).
 *
 * @module
 */
import {
  createLocalJWKSet,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
} from "jose";

/** Options for {@linkcode RemoteKeySet}. */
export interface RemoteKeySetOptions {
  /** Milliseconds after which the keys are refreshed. */
  readonly refreshIntervalMs: number;
  /** Minimum milliseconds between fetches caused by unknown `kid`s. @default {10000} */
  readonly cooldownMs?: number;
  /** Fetch timeout. @default {5000} */
  readonly timeoutMs?: number;
  /** Injected fetch (tests). */
  readonly fetch?: typeof fetch;
  /** Clock in milliseconds (tests). */
  readonly now?: () => number;
}

type LocalSet = ReturnType<typeof createLocalJWKSet>;

/** Error with a jose-like `code`, so callers map it by code. */
export class KeysUnavailableError extends Error {
  /** Stable code. */
  readonly code = "ERR_JWKS_UNAVAILABLE";
}

/** A cached remote JWKS; {@linkcode RemoteKeySet.getKey} is a jose key resolver. */
export class RemoteKeySet {
  readonly #url: string;
  readonly #refreshMs: number;
  readonly #cooldownMs: number;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  #local: LocalSet | null = null;
  #fetchedAt = -Infinity;
  #attemptAt = -Infinity;
  #inflight: Promise<void> | null = null;

  /**
   * @param url The JWKS URL.
   * @param options Refresh interval, cooldown, timeout, fetch, clock.
   */
  constructor(url: string, options: RemoteKeySetOptions) {
    this.#url = url;
    this.#refreshMs = options.refreshIntervalMs;
    this.#cooldownMs = options.cooldownMs ?? 10_000;
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    this.#fetch = options.fetch ?? fetch;
    this.#now = options.now ?? Date.now;
  }

  /** True once a key set was fetched successfully. */
  get ready(): boolean {
    return this.#local !== null;
  }

  /**
   * Fetches the set now (shared while in flight); on failure the last good keys stay.
   * @returns Resolves when the attempt settled; rejects when it failed.
   */
  refresh(): Promise<void> {
    if (this.#inflight) return this.#inflight;
    this.#attemptAt = this.#now();
    this.#inflight = this.#load().finally(() => {
      this.#inflight = null;
    });
    return this.#inflight;
  }

  async #load(): Promise<void> {
    const response = await this.#fetch(this.#url, {
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(this.#timeoutMs),
    });
    if (!response.ok) {
      await response.body?.cancel();
      throw new KeysUnavailableError(`JWKS fetch answered ${response.status}`);
    }
    const body: unknown = await response.json();
    const keys = (body as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) throw new KeysUnavailableError("JWKS response has no keys array");
    this.#local = createLocalJWKSet(body as JSONWebKeySet);
    this.#fetchedAt = this.#now();
  }

  /**
   * Resolves the key for a JWS header (a jose `JWTVerifyGetKey`).
   * @param header The protected header.
   * @param token The token.
   * @returns The key.
   */
  async getKey(
    header: JWSHeaderParameters,
    token: FlattenedJWSInput,
  ): ReturnType<LocalSet> {
    if (this.#local === null) {
      try {
        await this.refresh();
      } catch (error) {
        throw new KeysUnavailableError("Signing keys are unavailable", { cause: error });
      }
    } else if (this.#now() - this.#fetchedAt > this.#refreshMs && this.#inflight === null) {
      // Stale: refresh in the background, serve the last good keys now.
      this.refresh().catch(() => {});
    }
    const local = this.#local!;
    try {
      return await local(header, token);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== "ERR_JWKS_NO_MATCHING_KEY") throw error;
      if (this.#now() - this.#attemptAt < this.#cooldownMs) throw error;
      try {
        await this.refresh();
      } catch {
        throw error;
      }
      return await this.#local!(header, token);
    }
  }
}
