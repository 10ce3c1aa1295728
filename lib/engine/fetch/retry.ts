/**
 * When to retry a subgraph fetch (Cosmo's `traffic_shaping.*.retry`): only
 * queries (the caller decides), after a connection error, a 502, 503 or 504,
 * or a 429 that says when (`Retry-After`), at most `max_attempts` times after
 * the first, with exponential back-off from `interval` capped at
 * `max_duration` and jitter. The subgraph timeout bounds the whole fetch,
 * retries included (`subgraph_client.ts`). Pure: the random source and the
 * clock are parameters.
 *
 * @module
 */

/** `traffic_shaping.{all,subgraphs.<name>}.retry`. */
export interface RetryPolicy {
  /** Retry at all. */
  readonly enabled: boolean;
  /** Retries after the first attempt. */
  readonly maxAttempts: number;
  /** The first back-off, ms (doubled per retry). */
  readonly intervalMs: number;
  /** The longest back-off, ms; a longer `Retry-After` is not waited for. */
  readonly maxDurationMs: number;
}

/** What an attempt ended with. */
export type AttemptOutcome =
  | { readonly kind: "connection_error" }
  | { readonly kind: "status"; readonly status: number; readonly retryAfterMs: number | null };

/** Statuses retried without being asked to. */
const RETRIED_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/** Options of {@linkcode retryDelay}. */
export interface RetryDelayOptions {
  /** Attempts made so far (1 after the first). */
  readonly attempts: number;
  /** What the last one ended with. */
  readonly outcome: AttemptOutcome;
  /** A number in [0, 1). @default Math.random */
  readonly random?: () => number;
}

/**
 * The wait before the next attempt, or null when there is none.
 *
 * @example A 503 is retried after a back-off; a 400 is not
 * ```ts
 * import assert from "node:assert/strict";
 * import { retryDelay } from "./retry.ts";
 * const policy = { enabled: true, maxAttempts: 2, intervalMs: 100, maxDurationMs: 1000 };
 * const status = (status: number) => ({ kind: "status" as const, status, retryAfterMs: null });
 * assert.equal(retryDelay(policy, { attempts: 1, outcome: status(503), random: () => 0.5 }), 75);
 * assert.equal(retryDelay(policy, { attempts: 2, outcome: status(503), random: () => 0.5 }), 150);
 * assert.equal(retryDelay(policy, { attempts: 3, outcome: status(503) }), null);
 * assert.equal(retryDelay(policy, { attempts: 1, outcome: status(400) }), null);
 * ```
 * @param policy The retry policy.
 * @param options Attempts so far, the last outcome, the random source.
 * @returns Milliseconds to wait, or null.
 */
export function retryDelay(policy: RetryPolicy, options: RetryDelayOptions): number | null {
  if (!policy.enabled || options.attempts > policy.maxAttempts) return null;
  const { outcome } = options;
  if (outcome.kind === "status") {
    if (outcome.status === 429) {
      const after = outcome.retryAfterMs;
      return after !== null && after <= policy.maxDurationMs ? after : null;
    }
    if (!RETRIED_STATUSES.has(outcome.status)) return null;
  }
  // Exponential back-off, capped, with "equal jitter": half fixed, half random.
  const backoff = Math.min(
    policy.maxDurationMs,
    policy.intervalMs * 2 ** Math.max(0, options.attempts - 1),
  );
  const random = options.random ?? Math.random;
  return Math.round(backoff / 2 + (backoff / 2) * random());
}

/**
 * Reads a `Retry-After` header: delay-seconds or an HTTP date.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseRetryAfter } from "./retry.ts";
 * assert.equal(parseRetryAfter("2", 0), 2000);
 * assert.equal(parseRetryAfter("Thu, 01 Jan 1970 00:00:03 GMT", 1000), 2000);
 * assert.equal(parseRetryAfter("soon", 0), null);
 * ```
 * @param value The header value (null when absent).
 * @param nowMs The current time, ms since the epoch.
 * @returns Milliseconds, or null when absent or unreadable.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}
