/**
 * The JWKS URL key sources of one router state, shared by the GraphQL,
 * Connect and MCP verifiers (one background loop per distinct source), with
 * what the HTTP edge needs: readiness, the wait for an unknown-`kid` refetch
 * done before admission ({@linkcode KeySources.beforeAdmission}), counters
 * for metrics, and `close` when the state is replaced.
 *
 * @module
 */
import { decodeProtectedHeader } from "jose";
import type { JwksSource as JwksSourceConfig } from "../config/mod.ts";
import type { Logger } from "../log/mod.ts";
import { type JwksCounters, JwksSource, type Timers } from "./jwks_source.ts";

/** Options for {@linkcode KeySources}. */
export interface KeySourcesOptions {
  /** Header carrying the token (lower-cased). @default {"authorization"} */
  readonly headerName?: string;
  /** Prefix before the token. @default {"Bearer "} */
  readonly prefix?: string;
  /** `authentication.jwt.readiness_requires_keys`. @default {true} */
  readonly readinessRequiresKeys?: boolean;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
  readonly timers?: Timers;
  readonly log?: Logger;
  /**
   * Called after each fetch attempt of a source this set starts (metrics):
   * true when it succeeded. A source taken over keeps its first callback.
   */
  readonly onFetched?: (ok: boolean) => void;
  /**
   * The replaced state's sources: a source with the same URL and settings is
   * taken over (loaded keys and its loop carry over a reload).
   */
  readonly previous?: KeySources;
}

/** The URL key sources of a state. */
export class KeySources {
  readonly #options: KeySourcesOptions;
  readonly #sources = new Map<string, JwksSource>();
  #closed = false;

  /** @param options Token header, readiness, injected fetch, clock, timers, logger. */
  constructor(options: KeySourcesOptions = {}) {
    this.#options = options;
  }

  /**
   * The running source for a `jwks[]` entry with a `url` (shared when two
   * entries fetch the same URL with the same settings), started on first use.
   * @param config The `jwks[]` entry.
   * @returns The source.
   */
  source(config: JwksSourceConfig & { readonly url: string }): JwksSource {
    const unknownKid = config.refresh_unknown_kid ?? {
      enabled: true,
      interval_ms: 30_000,
      burst: 2,
      max_wait_ms: 5_000,
    };
    const refreshIntervalMs = config.refresh_interval_ms > 0 ? config.refresh_interval_ms : 60_000;
    const settings = {
      refreshIntervalMs,
      unknownKid: {
        enabled: unknownKid.enabled,
        intervalMs: unknownKid.interval_ms,
        burst: unknownKid.burst,
        maxWaitMs: unknownKid.max_wait_ms,
      },
    };
    const maxResponseBytes = config.max_response_bytes ?? 1_000_000;
    const timeoutMs = config.fetch_timeout_ms ?? 5_000;
    const key = JSON.stringify([config.url, settings, maxResponseBytes, timeoutMs]);
    let source = this.#sources.get(key);
    if (source === undefined) {
      source = this.#options.previous?.shared(key);
      if (source !== undefined) {
        source.retain();
        this.#sources.set(key, source);
      }
    }
    if (source === undefined) {
      const o = this.#options;
      source = new JwksSource(config.url, {
        policy: settings,
        maxResponseBytes,
        timeoutMs,
        ...(o.fetch ? { fetch: o.fetch } : {}),
        ...(o.now ? { now: o.now } : {}),
        ...(o.timers ? { timers: o.timers } : {}),
        ...(o.log ? { log: o.log } : {}),
        ...(o.onFetched ? { onFetched: o.onFetched } : {}),
      });
      this.#sources.set(key, source);
      if (!this.#closed) source.start();
    }
    return source;
  }

  /** The distinct sources. */
  get sources(): readonly JwksSource[] {
    return [...this.#sources.values()];
  }

  /**
   * Ready for `/health/ready`: every source has loaded once (always true
   * with `readiness_requires_keys: false`).
   */
  get ready(): boolean {
    if (this.#options.readinessRequiresKeys === false) return true;
    for (const source of this.#sources.values()) if (!source.ready) return false;
    return true;
  }

  /**
   * Summed counters (plain numbers, for metrics callbacks).
   * @returns Fetches, failures and unknown-`kid` fetches.
   */
  counters(): JwksCounters {
    let fetches = 0, failures = 0, unknownKidFetches = 0;
    for (const source of this.#sources.values()) {
      const c = source.counters;
      fetches += c.fetches;
      failures += c.failures;
      unknownKidFetches += c.unknownKidFetches;
    }
    return { fetches, failures, unknownKidFetches };
  }

  /**
   * Called by the HTTP edge before a request takes an admission slot: when
   * it carries a token whose `kid` a loaded source lacks, waits for that
   * source's rate-limited refetch (bounded by `max_wait` and the fetch
   * timeout), so verification inside the slot never waits on the network.
   * Anonymous requests, a `kid` any loaded source holds and a drained
   * bucket: null, no wait.
   * @param request The inbound request.
   * @returns A promise to await, or null.
   */
  beforeAdmission(request: Request): Promise<void> | null {
    if (this.#sources.size === 0) return null;
    const header = request.headers.get(this.#options.headerName ?? "authorization");
    if (header === null) return null;
    const prefix = this.#options.prefix ?? "Bearer ";
    if (header.slice(0, prefix.length).toLowerCase() !== prefix.toLowerCase()) return null;
    let kid: string | undefined;
    try {
      const decoded = decodeProtectedHeader(header.slice(prefix.length).trim());
      kid = typeof decoded.kid === "string" ? decoded.kid : undefined;
    } catch {
      return null; // malformed: verification answers it
    }
    // A kid that one source holds is that source's key: refetching the others (another
    // identity provider, e.g. mcp.oauth.jwks beside authentication.jwt.jwks) cannot help,
    // and would spend their buckets and hold the request for their fetch.
    if (kid !== undefined) {
      for (const source of this.#sources.values()) if (source.hasKid(kid)) return null;
    }
    const waits: Promise<void>[] = [];
    for (const source of this.#sources.values()) {
      const wait = source.settle(kid);
      if (wait !== null) waits.push(wait);
    }
    return waits.length === 0 ? null : Promise.all(waits).then(() => {});
  }

  /**
   * A running source by its settings key, for the next state's set to share.
   * @param key The settings key.
   * @returns The source, or undefined.
   */
  shared(key: string): JwksSource | undefined {
    return this.#closed ? undefined : this.#sources.get(key);
  }

  /**
   * Releases every source (a replaced state): a source no other state shares
   * stops its loop; loaded keys keep serving requests still in flight.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const source of this.#sources.values()) source.release();
  }
}
