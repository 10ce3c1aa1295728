/**
 * One JWKS URL key source: runs the pure machine of `key_set_machine.ts` with
 * a real (or injected) clock, fetch and timer. Keys are fetched in the
 * background only (on `refresh_interval`, with backoff after failures, and
 * for unknown `kid`s within the bucket); verification never fetches: it reads
 * the last good set, or fails with {@linkcode KeysUnavailableError} (a 503)
 * before the first load. Bodies are capped and fetches time out. jose still
 * does every signature check (`createLocalJWKSet`).
 *
 * @module
 */
import {
  createLocalJWKSet,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
} from "jose";
import { readLimited } from "../limited_body.ts";
import { maskUrl } from "../mask_url.ts";
import { unrefTimer } from "../timers.ts";
import type { Logger } from "../log/mod.ts";
import {
  fetchFailed,
  fetchSucceeded,
  initialKeySetState,
  type KeySetPolicy,
  type KeySetState,
  type KeySetTransition,
  retryAfterSeconds,
  takeUnknownKidCredit,
} from "./key_set_machine.ts";

type LocalSet = ReturnType<typeof createLocalJWKSet>;

/** No keys loaded yet (a server-side condition: answered 503 with `Retry-After`). */
export class KeysUnavailableError extends Error {
  /** Stable code, mapped like jose's. */
  readonly code = "ERR_JWKS_UNAVAILABLE";
  /** Seconds until the next fetch attempt. */
  readonly retryAfter: number;

  /**
   * @param message What is missing.
   * @param retryAfter Seconds until the next fetch attempt.
   */
  constructor(message: string, retryAfter: number) {
    super(message);
    this.retryAfter = retryAfter;
  }
}

/** Injected timer functions (tests drive time themselves). */
export interface Timers {
  set(callback: () => void, ms: number): number;
  clear(id: number): void;
}

const REAL_TIMERS: Timers = {
  set(callback, ms) {
    const id = setTimeout(callback, ms);
    // A background refresh never keeps the process alive.
    unrefTimer(id);
    return id as unknown as number;
  },
  clear: (id) => clearTimeout(id),
};

/** Options for {@linkcode JwksSource}. */
export interface JwksSourceOptions {
  /** The state machine's policy. */
  readonly policy: KeySetPolicy;
  /** Largest body read, bytes. */
  readonly maxResponseBytes: number;
  /** Timeout of one fetch (headers and body), milliseconds. */
  readonly timeoutMs: number;
  readonly fetch?: typeof fetch;
  /** Clock, milliseconds. */
  readonly now?: () => number;
  readonly timers?: Timers;
  /** Where status changes are logged (once per change). */
  readonly log?: Logger;
  /** Called after each fetch attempt (metrics): true when it succeeded. */
  readonly onFetched?: (ok: boolean) => void;
}

/** Counters of a source (plain numbers, for metrics callbacks). */
export interface JwksCounters {
  /** Fetch attempts (background and unknown-`kid`). */
  readonly fetches: number;
  /** Failed fetch attempts. */
  readonly failures: number;
  /** Fetch attempts caused by unknown `kid`s. */
  readonly unknownKidFetches: number;
}

/** A JWKS URL key source. */
export class JwksSource {
  /** The JWKS URL. */
  readonly url: string;
  readonly #options: JwksSourceOptions;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #timers: Timers;
  #state: KeySetState;
  #local: LocalSet | null = null;
  #kids = new Set<string>();
  #inflight: Promise<boolean> | null = null;
  #timer: number | null = null;
  #closed = false;
  #holders = 1;
  #counters = { fetches: 0, failures: 0, unknownKidFetches: 0 };

  /**
   * @param url The JWKS URL.
   * @param options Policy, limits and injected clock, fetch, timers, logger.
   */
  constructor(url: string, options: JwksSourceOptions) {
    this.url = url;
    this.#options = options;
    this.#fetch = options.fetch ?? fetch;
    this.#now = options.now ?? Date.now;
    this.#timers = options.timers ?? REAL_TIMERS;
    this.#state = initialKeySetState({
      now: this.#now(),
      burst: options.policy.unknownKid.burst,
    });
  }

  /** The machine's state (tests, readiness). */
  get state(): KeySetState {
    return this.#state;
  }

  /** True once a key set has loaded (it then serves through outages). */
  get ready(): boolean {
    return this.#local !== null;
  }

  /** Counters for metrics. */
  get counters(): JwksCounters {
    return { ...this.#counters };
  }

  /** Starts the background loop: the first fetch now. */
  start(): void {
    if (this.#closed || this.#timer !== null || this.#inflight !== null) return;
    this.#schedule();
  }

  /** One more state shares this source (see {@linkcode JwksSource.release}). */
  retain(): void {
    this.#holders++;
  }

  /** A state no longer uses this source; the last one closes it. */
  release(): void {
    if (--this.#holders <= 0) this.close();
  }

  /** Stops the background loop (keys loaded so far keep serving). */
  close(): void {
    this.#closed = true;
    if (this.#timer !== null) this.#timers.clear(this.#timer);
    this.#timer = null;
  }

  #schedule(): void {
    if (this.#closed) return;
    if (this.#timer !== null) this.#timers.clear(this.#timer);
    const delay = Math.max(0, this.#state.nextFetchAt - this.#now());
    this.#timer = this.#timers.set(() => {
      this.#timer = null;
      void this.refresh().then(() => this.#schedule());
    }, delay);
  }

  /**
   * Fetches the set now, shared while in flight. Never rejects.
   * @returns True when the fetch succeeded.
   */
  refresh(): Promise<boolean> {
    this.#inflight ??= this.#load().finally(() => {
      this.#inflight = null;
    });
    return this.#inflight;
  }

  async #load(): Promise<boolean> {
    this.#counters.fetches++;
    let keys: JSONWebKeySet;
    let local: LocalSet;
    try {
      keys = await this.#download();
      local = createLocalJWKSet(keys); // throws on a set whose keys are not all objects
      // An IdP glitch serving `{"keys":[]}` would otherwise refuse every token: the last good
      // keys serve instead (rotation adds a key before it removes one; nobody empties a set).
      if (keys.keys.length === 0) throw new Error("JWKS holds no keys");
    } catch (error) {
      this.#counters.failures++;
      this.#options.onFetched?.(false);
      this.#apply(fetchFailed(this.#state, { now: this.#now(), policy: this.#options.policy }), {
        error: error instanceof Error ? error.message : String(error),
      });
      if (this.#timer !== null) this.#schedule();
      return false;
    }
    this.#local = local;
    this.#kids = new Set(
      keys.keys.map((k) => k.kid).filter((kid): kid is string => typeof kid === "string"),
    );
    this.#apply(fetchSucceeded(this.#state, { now: this.#now(), policy: this.#options.policy }), {
      keys: keys.keys.length,
    });
    if (this.#timer !== null) this.#schedule(); // an unknown-kid fetch moved the next refresh
    this.#options.onFetched?.(true);
    return true;
  }

  async #download(): Promise<JSONWebKeySet> {
    const signal = AbortSignal.timeout(this.#options.timeoutMs);
    const response = await this.#fetch(this.url, {
      headers: { accept: "application/json" },
      signal,
      // Not followed (as jose's remote sets): the keys would come from a host, or over a
      // scheme (https → http), the config does not name. A 3xx is a failed fetch.
      redirect: "manual",
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      throw new Error(`JWKS fetch answered ${response.status}`);
    }
    const limit = this.#options.maxResponseBytes;
    const bytes = await readLimited(response, limit, {
      tooLarge: () => new Error(`JWKS body exceeds max_response_bytes (${limit})`),
      broken: (cause) => new Error(`JWKS body broke off: ${String(cause)}`),
    });
    const body: unknown = JSON.parse(new TextDecoder().decode(bytes ?? new Uint8Array()));
    const keys = (body as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) throw new Error("JWKS response has no keys array");
    return body as JSONWebKeySet;
  }

  #apply(transition: KeySetTransition, fields: Record<string, unknown>): void {
    const before = this.#state;
    this.#state = transition.state;
    const log = this.#options.log;
    if (!log) return;
    const changed = transition.changed;
    // A JWKS URL may carry a provider's key (`?api_key=`, user info): logs name the host
    // and path only, as traces do.
    const context = { url: maskUrl(this.url), ...fields };
    if (changed?.to === "ok") {
      log.info(changed.from === "loading" ? "JWKS loaded" : "JWKS recovered", context);
    } else if (changed?.to === "failing") {
      log.warn("JWKS fetch failing; the last good keys keep serving", context);
    } else if (transition.state.status === "loading" && before.failures === 0) {
      log.warn("JWKS unavailable; token requests are answered 503 until it loads", context);
    }
  }

  /** Seconds until the next fetch attempt (for `Retry-After`). */
  retryAfter(): number {
    return retryAfterSeconds(this.#state, { now: this.#now() });
  }

  /**
   * Whether the loaded set holds a key with this `kid`.
   * @param kid A token's `kid`.
   * @returns True when a loaded key has it.
   */
  hasKid(kid: string): boolean {
    return this.#kids.has(kid);
  }

  /**
   * Waits, when worthwhile, for a refetch because of a token's unknown `kid`
   * (called before admission). Nothing to wait for (no token kid, kid known,
   * no keys yet, bucket empty) → null.
   * @param kid The token's `kid`.
   * @returns A promise settled after the refetch, or null.
   */
  settle(kid: string | undefined): Promise<void> | null {
    if (kid === undefined || this.#local === null || this.#kids.has(kid)) return null;
    const taken = takeUnknownKidCredit(this.#state, {
      now: this.#now(),
      policy: this.#options.policy,
    });
    this.#state = taken.state;
    const decision = taken.decision;
    if (decision.kind === "denied") return null;
    const fetchNow = async () => {
      if (this.#kids.has(kid)) return;
      if (this.#inflight === null) this.#counters.unknownKidFetches++;
      await this.refresh();
    };
    if (decision.kind === "now") return fetchNow();
    return new Promise<void>((resolve) => {
      this.#timers.set(() => void fetchNow().then(resolve), decision.ms);
    });
  }

  /**
   * Resolves the key for a JWS header from the loaded set (a jose
   * `JWTVerifyGetKey`); never fetches.
   * @param header The protected header.
   * @param token The token.
   * @returns The key.
   * @throws {KeysUnavailableError} before the first load.
   */
  getKey(header: JWSHeaderParameters, token: FlattenedJWSInput): ReturnType<LocalSet> {
    if (this.#local === null) {
      return Promise.reject(
        new KeysUnavailableError("The signing keys are not loaded yet", this.retryAfter()),
      );
    }
    return this.#local(header, token);
  }
}
