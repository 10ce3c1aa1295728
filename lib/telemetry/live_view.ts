/**
 * The data of the playground's "Router" page: snapshots of the metrics
 * registry taken every few seconds, and the points between two snapshots
 * (requests/s, p50/p99, errors by code, per-subgraph latency and error rate,
 * cache hit rates, admission). Pure: snapshots come in as prom-client's JSON.
 *
 * @module
 */
import { DURATION_BUCKETS } from "./labels.ts";

/** One metric of prom-client's `getMetricsAsJSON()`. */
export interface MetricJson {
  readonly name: string;
  readonly values: readonly {
    readonly value: number;
    readonly labels: Readonly<Partial<Record<string, string | number>>>;
    readonly metricName?: string;
  }[];
}

/** Cumulative histogram counts at {@linkcode DURATION_BUCKETS} (then +Inf). */
type Buckets = number[];

/** The registry's cumulative values at one moment. */
export interface Snapshot {
  /** Epoch milliseconds. */
  readonly at: number;
  /** Server request duration buckets (client traffic: not the playground or health). */
  readonly requests: Buckets;
  /** GraphQL errors by code. */
  readonly errors: Readonly<Record<string, number>>;
  /** Per subgraph: duration buckets, and fetches by outcome. */
  readonly subgraphs: Readonly<
    Record<string, { readonly buckets: Buckets; readonly fetches: number; readonly failed: number }>
  >;
  readonly cache: Readonly<
    Record<"parse" | "plan", { readonly hits: number; readonly misses: number }>
  >;
  readonly admission: { readonly inFlight: number; readonly queued: number };
}

/** What the page draws for one interval. */
export interface LivePoint {
  /** End of the interval, epoch milliseconds. */
  readonly t: number;
  readonly rps: number;
  /** Latency quantiles, milliseconds (null without requests). */
  readonly p50: number | null;
  readonly p99: number | null;
  /** GraphQL errors by code in the interval. */
  readonly errors: Readonly<Record<string, number>>;
  readonly subgraphs: Readonly<
    Record<
      string,
      { readonly rps: number; readonly p50: number | null; readonly errorRate: number | null }
    >
  >;
  /** Hit ratios from 0 to 1 (null without lookups). */
  readonly cache: { readonly parse: number | null; readonly plan: number | null };
  readonly admission: { readonly inFlight: number; readonly queued: number };
}

const NOT_CLIENT_ROUTES = new Set(["/playground", "/health/ready", "/health/live"]);

function emptyBuckets(): Buckets {
  return new Array(DURATION_BUCKETS.length + 1).fill(0);
}

function addBucket(buckets: Buckets, le: string | number, value: number): void {
  const index = le === "+Inf" ? DURATION_BUCKETS.length : DURATION_BUCKETS.indexOf(Number(le));
  if (index >= 0) buckets[index] = (buckets[index] ?? 0) + value;
}

/**
 * Reads a snapshot from the registry's JSON.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createRouterMetrics } from "./metrics.ts";
 * import { snapshotOf } from "./live_view.ts";
 * const metrics = createRouterMetrics();
 * metrics.cache("plan", true);
 * const snapshot = snapshotOf(await metrics.registry.getMetricsAsJSON(), 0);
 * assert.deepEqual(snapshot.cache.plan, { hits: 1, misses: 0 });
 * ```
 * @param metrics `registry.getMetricsAsJSON()`.
 * @param at When it was taken, epoch milliseconds.
 * @returns The snapshot.
 */
export function snapshotOf(metrics: readonly MetricJson[], at: number): Snapshot {
  const requests = emptyBuckets();
  const errors: Record<string, number> = {};
  const subgraphs: Record<string, { buckets: Buckets; fetches: number; failed: number }> = {};
  const subgraph = (
    name: string,
  ) => (subgraphs[name] ??= { buckets: emptyBuckets(), fetches: 0, failed: 0 });
  const cache = { parse: { hits: 0, misses: 0 }, plan: { hits: 0, misses: 0 } };
  const admission = { inFlight: 0, queued: 0 };
  for (const metric of metrics) {
    for (const { value, labels, metricName } of metric.values) {
      switch (metric.name) {
        case "http_server_request_duration_seconds":
          if (
            metricName?.endsWith("_bucket") && !NOT_CLIENT_ROUTES.has(String(labels.http_route))
          ) {
            addBucket(requests, labels.le ?? "", value);
          }
          break;
        case "http_client_request_duration_seconds":
          if (metricName?.endsWith("_bucket")) {
            addBucket(subgraph(String(labels.subgraph)).buckets, labels.le ?? "", value);
          }
          break;
        case "gw_router_subgraph_fetches_total": {
          const entry = subgraph(String(labels.subgraph));
          entry.fetches += value;
          if (labels.outcome !== "success") entry.failed += value;
          break;
        }
        case "gw_router_graphql_errors_total":
          errors[String(labels.code)] = (errors[String(labels.code)] ?? 0) + value;
          break;
        case "gw_router_cache_hits_total":
        case "gw_router_cache_misses_total": {
          const which = labels.cache === "parse"
            ? cache.parse
            : labels.cache === "plan"
            ? cache.plan
            : null;
          if (which === null) break;
          if (metric.name === "gw_router_cache_hits_total") which.hits += value;
          else which.misses += value;
          break;
        }
        case "gw_router_admission_in_flight":
          admission.inFlight = value;
          break;
        case "gw_router_admission_queued":
          admission.queued = value;
          break;
      }
    }
  }
  return { at, requests, errors, subgraphs, cache, admission };
}

/**
 * A quantile of the observations between two cumulative bucket lists, by
 * linear interpolation inside the bucket (what PromQL's `histogram_quantile`
 * does), in milliseconds; null without observations.
 *
 * @example Half of 10 requests took under 25 ms
 * ```ts
 * import assert from "node:assert/strict";
 * import { quantileMs } from "./live_view.ts";
 * const before = new Array(15).fill(0);
 * //             5ms 10 25  50  75 100 ... +Inf (cumulative)
 * const after = [0, 0, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10];
 * assert.equal(quantileMs(0.5, before, after), 17.5);
 * ```
 * @param q The quantile (0 to 1).
 * @param before Cumulative counts at the start.
 * @param after Cumulative counts at the end.
 * @returns Milliseconds, or null.
 */
export function quantileMs(
  q: number,
  before: readonly number[],
  after: readonly number[],
): number | null {
  const total = (after[after.length - 1] ?? 0) - (before[before.length - 1] ?? 0);
  if (total <= 0) return null;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (let i = 0; i < DURATION_BUCKETS.length; i++) {
    const bound = DURATION_BUCKETS[i] ?? 0;
    const count = (after[i] ?? 0) - (before[i] ?? 0);
    if (count >= rank) {
      const inBucket = count - lowerCount;
      const fraction = inBucket <= 0 ? 1 : (rank - lowerCount) / inBucket;
      return Math.round((lowerBound + (bound - lowerBound) * fraction) * 1e6) / 1e3;
    }
    lowerBound = bound;
    lowerCount = count;
  }
  // In the +Inf bucket: the highest finite bound is the best answer.
  return (DURATION_BUCKETS[DURATION_BUCKETS.length - 1] ?? 0) * 1000;
}

function ratio(hits: number, misses: number): number | null {
  return hits + misses > 0 ? hits / (hits + misses) : null;
}

/**
 * The point between two snapshots.
 * @param before The earlier snapshot.
 * @param after The later snapshot.
 * @returns The rates and quantiles of the interval.
 */
export function pointBetween(before: Snapshot, after: Snapshot): LivePoint {
  const seconds = Math.max(0.001, (after.at - before.at) / 1000);
  const last = DURATION_BUCKETS.length;
  const errors: Record<string, number> = {};
  for (const [code, value] of Object.entries(after.errors)) {
    const delta = value - (before.errors[code] ?? 0);
    if (delta > 0) errors[code] = delta;
  }
  const subgraphs: Record<string, { rps: number; p50: number | null; errorRate: number | null }> =
    {};
  for (const [name, now] of Object.entries(after.subgraphs)) {
    const then = before.subgraphs[name] ?? { buckets: emptyBuckets(), fetches: 0, failed: 0 };
    const fetches = now.fetches - then.fetches;
    subgraphs[name] = {
      rps: ((now.buckets[last] ?? 0) - (then.buckets[last] ?? 0)) / seconds,
      p50: quantileMs(0.5, then.buckets, now.buckets),
      errorRate: fetches > 0 ? (now.failed - then.failed) / fetches : null,
    };
  }
  return {
    t: after.at,
    rps: ((after.requests[last] ?? 0) - (before.requests[last] ?? 0)) / seconds,
    p50: quantileMs(0.5, before.requests, after.requests),
    p99: quantileMs(0.99, before.requests, after.requests),
    errors,
    subgraphs,
    cache: {
      parse: ratio(
        after.cache.parse.hits - before.cache.parse.hits,
        after.cache.parse.misses - before.cache.parse.misses,
      ),
      plan: ratio(
        after.cache.plan.hits - before.cache.plan.hits,
        after.cache.plan.misses - before.cache.plan.misses,
      ),
    },
    admission: after.admission,
  };
}

/** Snapshots of the last minutes. */
export interface LiveHistory {
  /** Takes a snapshot now (the oldest beyond the capacity is dropped). */
  sample(): Promise<void>;
  /** The points between consecutive snapshots, oldest first. */
  points(): LivePoint[];
}

/** Options for {@linkcode createLiveHistory}. */
export interface LiveHistoryOptions {
  /** Reads the registry (`registry.getMetricsAsJSON()`). */
  readonly read: () => Promise<readonly MetricJson[]>;
  /** The clock, epoch milliseconds. */
  readonly now: () => number;
  /**
   * Snapshots kept.
   * @default {151} (five minutes of 2-second samples)
   */
  readonly capacity?: number;
  /**
   * A sample sooner than this after the last one is skipped (two pages open,
   * or a page and the timer), milliseconds.
   * @default {1000}
   */
  readonly minIntervalMs?: number;
}

/**
 * Creates the history.
 * @param options Registry reader, clock, capacity.
 * @returns The history.
 */
export function createLiveHistory(options: LiveHistoryOptions): LiveHistory {
  const capacity = options.capacity ?? 151;
  let snapshots: Snapshot[] = [];
  return {
    async sample() {
      const at = options.now();
      const last = snapshots[snapshots.length - 1];
      if (last !== undefined && at - last.at < (options.minIntervalMs ?? 1000)) return;
      const snapshot = snapshotOf(await options.read(), at);
      snapshots.push(snapshot);
      if (snapshots.length > capacity) snapshots = snapshots.slice(snapshots.length - capacity);
    },
    points() {
      const points: LivePoint[] = [];
      for (let i = 1; i < snapshots.length; i++) {
        const before = snapshots[i - 1];
        const after = snapshots[i];
        if (before && after) points.push(pointBetween(before, after));
      }
      return points;
    },
  };
}
