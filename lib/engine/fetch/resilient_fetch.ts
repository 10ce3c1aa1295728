/**
 * One subgraph fetch under its retry policy and circuit breaker (issue 15):
 * the breaker is asked before every attempt (open: fail fast with
 * `SUBGRAPH_CIRCUIT_OPEN`, nothing sent) and told every outcome; a query is
 * retried by `retry.ts`'s rules, a mutation never, and each retry is taken
 * from the subgraph's retry budget (`retry_budget.ts`; none left: the last
 * outcome stands). The caller's signal (the subgraph timeout and the client)
 * bounds the whole fetch, back-offs included. Also builds each subgraph's
 * policies from `traffic_shaping`.
 *
 * @module
 */
import type { SubgraphTrafficConfig, TrafficShapingConfig } from "../../config/mod.ts";
import { onAbort } from "../../cancellation.ts";
import { RouterError } from "../../errors.ts";
import {
  type BreakerPolicy,
  type CircuitBreaker,
  createCircuitBreaker,
} from "./circuit_breaker.ts";
import { parseRetryAfter, retryDelay, type RetryPolicy } from "./retry.ts";
import { createRetryBudget, type RetryBudget } from "./retry_budget.ts";

/** The retry policy and breaker of one subgraph. */
export interface Resilience {
  readonly retry: RetryPolicy;
  /** Null when disabled. */
  readonly breaker: CircuitBreaker | null;
  /** Caps the retries over a window; null: retries uncapped (tests) or disabled. */
  readonly budget?: RetryBudget | null;
}

/** Options of {@linkcode resilientFetch}. */
export interface ResilientFetchOptions {
  /** The subgraph's name (error messages). */
  readonly subgraph: string;
  /** Its policies. */
  readonly resilience: Resilience;
  /** Whether a retry is safe (queries). */
  readonly idempotent: boolean;
  /** Ends the fetch, back-offs included. */
  readonly signal: AbortSignal;
  /** Waits `ms` unless the signal aborts. @default a timer */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Wall clock for `Retry-After` dates, ms. @default Date.now */
  readonly nowMs?: () => number;
  /** Jitter source. @default Math.random */
  readonly random?: () => number;
  /** Called before each retry's back-off (metrics; the module stays pure). */
  readonly onRetry?: () => void;
  /** Called when the open breaker refuses an attempt (metrics). */
  readonly onCircuitOpen?: () => void;
  /** Called when a retry is not sent because the retry budget is spent (metrics). */
  readonly onRetryBudgetExhausted?: () => void;
  /**
   * The caller reads the body of the response returned and gives the breaker
   * its verdict then ({@linkcode answered}): a success status is not recorded
   * here, since a body that breaks off or never ends is no success.
   * @default false
   */
  readonly verdictAfterBody?: boolean;
}

/**
 * Whether a status is a subgraph's success for the breaker (a 5xx or a 429 is
 * not; a 4xx answers the request).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { answered } from "./resilient_fetch.ts";
 * assert.equal(answered(200), true);
 * assert.equal(answered(404), true);
 * assert.equal(answered(429), false);
 * assert.equal(answered(503), false);
 * ```
 * @param status The HTTP status.
 * @returns True for a success.
 */
export function answered(status: number): boolean {
  return status < 500 && status !== 429;
}

/**
 * The abort reason of a subgraph fetch past `engine.subgraph_request_timeout`
 * (a `TimeoutError`): unlike the client going away or the request's own
 * deadline, it says the subgraph did not answer in time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SubgraphTimeout } from "./resilient_fetch.ts";
 * assert.equal(new SubgraphTimeout().name, "TimeoutError");
 * assert.ok(!(new DOMException("late", "TimeoutError") instanceof SubgraphTimeout));
 * ```
 */
export class SubgraphTimeout extends DOMException {
  constructor() {
    super("The subgraph request timed out", "TimeoutError");
  }
}

function sleepFor(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      resolve();
    }, ms);
    const off = onAbort(signal, () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

/**
 * The error of a fetch refused by an open circuit breaker.
 * @param subgraph The subgraph's name.
 * @returns A `SUBGRAPH_CIRCUIT_OPEN` error.
 */
export function circuitOpen(subgraph: string): RouterError {
  return new RouterError(
    "SUBGRAPH_CIRCUIT_OPEN",
    `The circuit breaker of the subgraph "${subgraph}" is open: it failed too often; not sent`,
    { details: { serviceName: subgraph } },
  );
}

/**
 * Sends with retries and the breaker; resolves with the last response.
 *
 * @example A 503 then a 200: one retry
 * ```ts
 * import assert from "node:assert/strict";
 * import { resilientFetch } from "./resilient_fetch.ts";
 * const statuses = [503, 200];
 * const response = await resilientFetch(
 *   () => Promise.resolve(new Response(null, { status: statuses.shift() ?? 200 })),
 *   {
 *     subgraph: "a",
 *     resilience: {
 *       retry: { enabled: true, maxAttempts: 3, intervalMs: 1, maxDurationMs: 10 },
 *       breaker: null,
 *     },
 *     idempotent: true,
 *     signal: new AbortController().signal,
 *   },
 * );
 * assert.equal(response.status, 200);
 * ```
 * @param send Sends one attempt.
 * @param options Policies, idempotency, signal, clock and timers.
 * @returns The response of the last attempt.
 * @throws `SUBGRAPH_CIRCUIT_OPEN`, or the last attempt's error.
 */
export async function resilientFetch(
  send: () => Promise<Response>,
  options: ResilientFetchOptions,
): Promise<Response> {
  const { retry, breaker } = options.resilience;
  const budget = options.resilience.budget ?? null;
  const sleep = options.sleep ?? sleepFor;
  const retries = options.idempotent && retry.enabled;
  budget?.deposit();
  /** Whether the budget lets one more retry go (a refusal is reported). */
  const withdraw = (): boolean => {
    if (budget === null || budget.withdraw()) return true;
    options.onRetryBudgetExhausted?.();
    return false;
  };
  for (let attempts = 1;; attempts++) {
    if (breaker !== null && !breaker.allow()) {
      options.onCircuitOpen?.();
      throw circuitOpen(options.subgraph);
    }
    let response: Response;
    try {
      response = await send();
    } catch (error) {
      if (options.signal.aborted) {
        // The deadline ended it: the subgraph did not answer in time, a failure
        // (else one that never answers never opens the breaker). The client
        // going away says nothing about the subgraph.
        if (options.signal.reason instanceof SubgraphTimeout) breaker?.record(false);
        throw error;
      }
      breaker?.record(false);
      // An answer that broke HTTP came from a server that will likely break it
      // again: only a connection that failed (or closed) before one is retried.
      const malformed = error instanceof RouterError && error.code === "SUBGRAPH_ERROR";
      const delay = retries && !malformed
        ? retryDelay(retry, {
          attempts,
          outcome: { kind: "connection_error" },
          ...(options.random ? { random: options.random } : {}),
        })
        : null;
      if (delay === null || !withdraw()) throw error;
      options.onRetry?.();
      await sleep(delay, options.signal);
      continue;
    }
    const status = response.status;
    const ok = answered(status);
    if (!ok || options.verdictAfterBody !== true) breaker?.record(ok);
    if (!retries || ok) return response;
    const delay = retryDelay(retry, {
      attempts,
      outcome: {
        kind: "status",
        status,
        retryAfterMs: parseRetryAfter(
          response.headers.get("retry-after"),
          (options.nowMs ?? Date.now)(),
        ),
      },
      ...(options.random ? { random: options.random } : {}),
    });
    if (delay === null || !withdraw()) return response;
    await response.body?.cancel().catch(() => {});
    options.onRetry?.();
    await sleep(delay, options.signal);
  }
}

function sectionOf<T>(own: T, all: T, defaults: T): T {
  return JSON.stringify(own) === JSON.stringify(defaults) ? all : own;
}

/**
 * Each subgraph's policies: `traffic_shaping.subgraphs.<name>` where a
 * section (`retry`, `circuit_breaker`) differs from the defaults, else
 * `traffic_shaping.all`'s.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig } from "../../config/mod.ts";
 * import { resilienceOf } from "./resilient_fetch.ts";
 * const config = parseConfig({ traffic_shaping: { all: { retry: { enabled: true } } } });
 * const defaults = parseConfig({}).traffic_shaping.all;
 * const policies = resilienceOf(config.traffic_shaping, ["a"], { now: () => 0, defaults });
 * assert.equal(policies.get("a")?.retry.enabled, true);
 * assert.equal(policies.get("a")?.breaker, null);
 * ```
 * @param traffic `traffic_shaping`.
 * @param subgraphs The subgraph names.
 * @param options The monotonic clock of the breakers (ms) and the defaults of a section.
 * @returns Policies by subgraph name.
 */
export function resilienceOf(
  traffic: TrafficShapingConfig,
  subgraphs: Iterable<string>,
  options: { readonly now: () => number; readonly defaults: SubgraphTrafficConfig },
): Map<string, Resilience> {
  const { defaults } = options;
  const result = new Map<string, Resilience>();
  for (const name of subgraphs) {
    const own: SubgraphTrafficConfig = traffic.subgraphs[name] ?? traffic.all;
    const r = sectionOf(own.retry, traffic.all.retry, defaults.retry);
    const b = sectionOf(own.circuit_breaker, traffic.all.circuit_breaker, defaults.circuit_breaker);
    const breaker: BreakerPolicy = {
      enabled: b.enabled,
      errorThresholdPercentage: b.error_threshold_percentage,
      requestThreshold: b.request_threshold,
      sleepWindowMs: b.sleep_window_ms,
      halfOpenAttempts: b.half_open_attempts,
      rollingDurationMs: b.rolling_duration_ms,
    };
    result.set(name, {
      retry: {
        enabled: r.enabled,
        maxAttempts: r.max_attempts,
        intervalMs: r.interval_ms,
        maxDurationMs: r.max_duration_ms,
      },
      breaker: breaker.enabled ? createCircuitBreaker(breaker, { now: options.now }) : null,
      budget: r.enabled
        ? createRetryBudget(
          { ttlMs: r.ttl_ms, minPerSec: r.min_per_sec, retryPercent: r.retry_percent },
          { now: options.now },
        )
        : null,
    });
  }
  return result;
}
