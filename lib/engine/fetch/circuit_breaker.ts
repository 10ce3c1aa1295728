/**
 * A circuit breaker per subgraph (Cosmo's `traffic_shaping.*.circuit_breaker`),
 * a pure state machine over an injected clock:
 *
 * - **closed**: every fetch goes; outcomes are counted in a rolling window of
 *   `rolling_duration` (in ten buckets). Once the window holds at least
 *   `request_threshold` fetches of which `error_threshold_percentage` % or
 *   more failed, it opens.
 * - **open**: fetches fail fast (no request is sent) for `sleep_window`.
 * - **half-open**: `half_open_attempts` probes go; if they all succeed it
 *   closes (a fresh window), the first failure opens it again.
 *
 * @module
 */

/** `traffic_shaping.{all,subgraphs.<name>}.circuit_breaker`. */
export interface BreakerPolicy {
  /** Break at all. */
  readonly enabled: boolean;
  /** Failed share of the window's fetches that opens the breaker, %. */
  readonly errorThresholdPercentage: number;
  /** Fetches the window must hold before it can open. */
  readonly requestThreshold: number;
  /** How long it stays open, ms. */
  readonly sleepWindowMs: number;
  /** Probes allowed (and needed to close) when half-open. */
  readonly halfOpenAttempts: number;
  /** The rolling window, ms. */
  readonly rollingDurationMs: number;
}

/** The breaker's state. */
export type BreakerState = "closed" | "open" | "half_open";

/** A circuit breaker (see {@linkcode createCircuitBreaker}). */
export interface CircuitBreaker {
  /** Whether a fetch may go now (a half-open probe counts as taken). */
  allow(): boolean;
  /** Records the outcome of a fetch that went. */
  record(success: boolean): void;
  /** The state now. */
  readonly state: BreakerState;
}

const BUCKETS = 10;

/**
 * Creates a circuit breaker.
 *
 * @example Opens after the threshold, half-opens after the sleep window
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCircuitBreaker } from "./circuit_breaker.ts";
 * let now = 0;
 * const breaker = createCircuitBreaker({
 *   enabled: true, errorThresholdPercentage: 50, requestThreshold: 2,
 *   sleepWindowMs: 1000, halfOpenAttempts: 1, rollingDurationMs: 10_000,
 * }, { now: () => now });
 * breaker.record(false);
 * breaker.record(false);
 * assert.equal(breaker.allow(), false);
 * now = 1000;
 * assert.equal(breaker.allow(), true); // the probe
 * assert.equal(breaker.allow(), false);
 * breaker.record(true);
 * assert.equal(breaker.state, "closed");
 * ```
 * @param policy The thresholds.
 * @param options The monotonic clock, ms.
 * @returns The breaker.
 */
export function createCircuitBreaker(
  policy: BreakerPolicy,
  options: { readonly now: () => number },
): CircuitBreaker {
  const { now } = options;
  const bucketMs = Math.max(1, policy.rollingDurationMs / BUCKETS);
  // Ring of buckets: [start time, fetches, failures].
  const starts = new Array<number>(BUCKETS).fill(-Infinity);
  const totals = new Array<number>(BUCKETS).fill(0);
  const failures = new Array<number>(BUCKETS).fill(0);
  let state: BreakerState = "closed";
  let openedAt = 0;
  let probes = 0;
  let probeSuccesses = 0;
  /** When the current round of half-open probes began. */
  let probedAt = 0;
  function reset(): void {
    starts.fill(-Infinity);
    totals.fill(0);
    failures.fill(0);
  }
  function count(success: boolean): void {
    const t = now();
    const start = Math.floor(t / bucketMs) * bucketMs;
    const index = Math.floor(t / bucketMs) % BUCKETS;
    if (starts[index] !== start) {
      starts[index] = start;
      totals[index] = 0;
      failures[index] = 0;
    }
    totals[index]!++;
    if (!success) failures[index]!++;
    let total = 0;
    let failed = 0;
    for (let i = 0; i < BUCKETS; i++) {
      if (t - starts[i]! >= policy.rollingDurationMs) continue;
      total += totals[i]!;
      failed += failures[i]!;
    }
    if (
      total >= policy.requestThreshold && failed * 100 >= policy.errorThresholdPercentage * total
    ) {
      open();
    }
  }
  function open(): void {
    state = "open";
    openedAt = now();
    reset();
  }
  return {
    allow() {
      if (!policy.enabled || state === "closed") return true;
      if (state === "open") {
        if (now() - openedAt < policy.sleepWindowMs) return false;
        state = "half_open";
        probes = 0;
        probeSuccesses = 0;
        probedAt = now();
      }
      if (probes >= policy.halfOpenAttempts) {
        // A probe that never reports (its request aborted: the client gone) would
        // keep the breaker refusing everything for good: after a sleep window
        // without a verdict, a new round of probes goes.
        if (now() - probedAt < policy.sleepWindowMs) return false;
        probes = 0;
        probeSuccesses = 0;
        probedAt = now();
      }
      probes++;
      return true;
    },
    record(success) {
      if (!policy.enabled) return;
      if (state === "closed") return count(success);
      if (state !== "half_open") return;
      if (!success) return open();
      if (++probeSuccesses >= policy.halfOpenAttempts) {
        state = "closed";
        reset();
      }
    },
    get state() {
      return state;
    },
  };
}
