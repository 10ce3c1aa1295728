/**
 * The metrics registry (prom-client; `bench/metrics_bench.ts` compares it with
 * the OpenTelemetry metrics SDK): OpenTelemetry semantic-convention names for
 * HTTP (`http_server_request_duration_seconds`, `http_server_active_requests`,
 * `http_client_request_duration_seconds`) and `gw_router_*` for the rest.
 * Recording functions are the API: the engine, the facets and the HTTP edge
 * call them; nothing else touches prom-client.
 *
 * Over 600 lines on purpose: every metric's name, help and labels in one
 * table-like file, so that the names stay one vocabulary (docs/observability.md
 * lists the same).
 *
 * @module
 */
import { Counter, Gauge, Registry } from "prom-client";
import {
  counterSeries,
  gaugeSeries,
  histogramSeries,
  observe,
  type SeriesNode,
  type ValueCell,
} from "./_series.ts";
import {
  type BoundedLabel,
  createBoundedLabel,
  DURATION_BUCKETS,
  OTHER_LABEL,
  UNKNOWN_LABEL,
} from "./labels.ts";

export { DURATION_BUCKETS };

/** Buckets of the cost histograms (`demand_control`): costs span 0 to millions. */
const COST_BUCKETS: readonly number[] = [
  0,
  1,
  5,
  10,
  50,
  100,
  500,
  1_000,
  5_000,
  10_000,
  50_000,
  100_000,
  1_000_000,
];
/** The result labels of the cost histograms (anything else counts as `other`). */
const COST_RESULTS: ReadonlySet<string> = new Set([
  "COST_OK",
  "COST_ESTIMATED_TOO_EXPENSIVE",
  "COST_ACTUAL_TOO_EXPENSIVE",
  "COST_QUERY_PARSE_FAILURE",
]);
/** Outcome of one subgraph fetch. */
export type FetchOutcome =
  | "success"
  | "http_error"
  | "timeout"
  | "aborted"
  | "network_error"
  | "circuit_open";

/** Outcome of one GraphQL operation (GraphQL errors, apart from the HTTP status). */
export type OperationOutcome = "success" | "graphql_error" | "request_error";

/** One finished operation. */
export interface OperationRecord {
  /** The operation's name (named or persisted), or null (anonymous: `unknown`). */
  readonly name: string | null;
  /** `query`, `mutation`, `subscription`, or null when it did not parse. */
  readonly type: string | null;
  readonly outcome: OperationOutcome;
  /** `extensions.code` of each error in the response (uncoded ones as `UNKNOWN`). */
  readonly errorCodes: readonly string[];
  readonly clientName: string | null;
  readonly clientVersion: string | null;
}

/** One settled subgraph fetch. */
export interface FetchMetric {
  readonly subgraph: string;
  readonly seconds: number;
  /** HTTP status, or null when no response arrived. */
  readonly status: number | null;
  readonly outcome: FetchOutcome;
}

/** The size of one cache (the engine's `Lru` has both). */
export interface CacheSize {
  /** Entries. */
  readonly size: number;
  /** Sum of the entries' estimated sizes, bytes. */
  readonly bytes: number;
}

/** Live values read at scrape time. */
export interface MetricSources {
  /** The admission gate of the current state. */
  admission(): { readonly active: number; readonly waiting: number; readonly limit: number } | null;
  /** The parse and plan caches of the current state. */
  caches(): { readonly parse: CacheSize; readonly plan: CacheSize } | null;
  /**
   * The in-flight memory budget of the current state (bytes held by open
   * operations, reads waiting for bytes). Absent: not exported.
   */
  memory?():
    | { readonly used: number; readonly waiting: number; readonly maxBytes: number }
    | null;
  /**
   * The connection guard of the listener (`lib/listen/guarded_serve.ts`): client
   * connections open, and closed or refused by a limit since start. Absent:
   * not exported.
   */
  connections?():
    | {
      readonly open: number;
      readonly headerReadTimeouts: number;
      readonly keepAliveTimeouts: number;
      readonly answerTimeouts?: number;
      readonly refused: number;
      /** TLS handshakes that failed or timed out (`tls.server`). */
      readonly tlsHandshakeFailures?: number;
    }
    | null;
  /**
   * Subscriptions (`lib/engine/subscriptions/subscribe.ts`): active client subscriptions and
   * upstream streams now; events received from subgraphs and results delivered to clients,
   * and upstream streams opened, since start. Absent: not exported.
   */
  subscriptions?():
    | {
      readonly active: number;
      readonly upstreams: number;
      readonly eventsIn: number;
      readonly eventsOut: number;
      readonly upstreamsOpened: number;
      /** Refusals and ends by the router's limits, since start (issue 39). */
      readonly limits?: {
        readonly refusedMaxTotal: number;
        readonly refusedCapacity: number;
        readonly refusedBehind: number;
        readonly refusedPerConnection: number;
        readonly endedClientTooSlow: number;
        readonly endedRouterBehind: number;
      };
      /** The serving thread's CPU share the fan-out is judged by (absent: not measured). */
      readonly cpuShare?: number;
    }
    | null;
  /**
   * The supergraph from a registry (`lib/cli/supergraph_source.ts`): when the
   * serving one was loaded and a poll last succeeded (ms since the epoch), and
   * polls failed since start. Absent or null: not exported (`file`).
   */
  supergraph?():
    | {
      readonly source: string;
      readonly loadedAt: number | null;
      readonly polledAt: number | null;
      readonly failures: number;
    }
    | null;
}

/** Options for {@linkcode createRouterMetrics}. */
export interface RouterMetricsOptions {
  /** Live gauges (admission, cache sizes), read on each scrape. */
  readonly sources?: MetricSources;
  /**
   * Distinct operation names (and, apart, client names and versions) admitted as labels.
   * @default {200}
   */
  readonly maxLabelValues?: number;
}

/**
 * The router's metrics. Every method is cheap and never throws; label values
 * a client controls pass a {@linkcode BoundedLabel}.
 */
export interface RouterMetrics {
  /** The prom-client registry (exposition, the live view). */
  readonly registry: Registry;
  /** A request arrived (`http_server_active_requests` +1). */
  requestStarted(method: string): void;
  /** A request was answered. */
  requestFinished(info: {
    readonly method: string;
    readonly route: string;
    readonly status: number;
    readonly seconds: number;
  }): void;
  /** A GraphQL operation finished (GraphQL facet and Connect). */
  operation(record: OperationRecord): void;
  /** A subgraph fetch settled. */
  subgraphFetch(record: FetchMetric): void;
  /** A subgraph request was retried (for the retry policy). */
  subgraphRetry(subgraph: string): void;
  /**
   * A part of an incremental answer (`@defer`) was handed to the client's stream: `primary`
   * (the first), `deferred` (one with more to come) or `last`.
   */
  incrementalPart(kind: "primary" | "deferred" | "last"): void;
  /** A subgraph request was not retried: its retry budget was spent. */
  retryBudgetExhausted(subgraph: string): void;
  /** A subgraph request was refused by an open circuit breaker. */
  circuitBreakerRejected(subgraph: string): void;
  /** A subgraph response was shared with an identical in-flight request. */
  singleFlightShared(subgraph: string): void;
  /**
   * Demand control measured an operation (or a subscription event): its estimated and actual
   * cost (null: not made) by result (`COST_OK`, `COST_ESTIMATED_TOO_EXPENSIVE`, …).
   */
  cost?(report: {
    readonly estimated: number | null;
    readonly actual: number | null;
    readonly result: string;
  }): void;
  /** A parse/validate or plan cache lookup. */
  cache(cache: "parse" | "plan", hit: boolean): void;
  /** The admission gate refused (or lost) a request. */
  admissionRejected(reason: string): void;
  /**
   * An MCP request was refused for its token: `token` for a 401 (no or a
   * bad token), else the first failing scope gate of a 403 (`initialize`,
   * `method`, `built-in`, `tool`, `runtime`; anything else counts as `other`).
   */
  mcpDenied(level: string): void;
  /** An MCP request was answered. */
  mcp(info: { readonly method: string; readonly tool: string; readonly outcome: string }): void;
  /** A Connect call was answered. */
  connect(info: { readonly method: string; readonly code: string }): void;
  /** A JWKS refresh ended. */
  jwksRefresh(outcome: "success" | "failure"): void;
  /**
   * A request over its rate limit (issue 30), by facet and what happened:
   * `rejected` (429), `logged` (`reject_exceeding_requests: false`), or the
   * store's fallback `fail_open` / `fail_closed`.
   */
  rateLimited(facet: string, outcome: string): void;
  /** A shared-store call answered by the feature's fallback (Redis unavailable), by feature. */
  storeFallback(feature: string): void;
  /** An entity cache lookup of one fetch (issue 42): `hit`, `partial` or `miss`. */
  entityCacheLookup(subgraph: string, type: string, outcome: string): void;
  /** An entity cache entry stored, with its UTF-8 bytes (counted once it is stored). */
  entityCacheStored(subgraph: string, type: string, bytes: number): void;
  /** An entity cache entry not stored: `too_large`, `tag_index_full`, `unavailable`. */
  entityCacheSkipped(subgraph: string, type: string, reason: string): void;
  /**
   * Entries removed by the invalidation endpoint, by subgraph, type ("" for every type, or a
   * tag) and kind (`subgraph`, `type`, `entity`, `cache_tag`).
   */
  entityCacheInvalidated(subgraph: string, type: string, entries: number, kind: string): void;
  /** Whether a shared store (`storage_providers.redis[].id`) is reachable (1) or not (0). */
  storeAvailable(provider: string, available: boolean): void;
  /**
   * A batch (`batching`): `answered` (its operations are counted too), or refused whole
   * (`disabled`, `too_large`).
   */
  batch(outcome: "answered" | "disabled" | "too_large", operations: number): void;
  /**
   * A file upload (`file_uploads`) ended: `streamed` (every file reached its subgraph) or
   * `refused` (a limit, a malformed body, a plan that cannot route it); `bytes` of files streamed.
   */
  upload(outcome: "streamed" | "refused", bytes: number): void;
  /**
   * A plugin hook did not let the request go on (issue 40): `refused` (it
   * answered a refusal) or `failed` (it threw, rejected or overran its budget).
   */
  pluginHook(plugin: string, hook: string, outcome: "refused" | "failed"): void;
  /**
   * A coprocessor call ended (issue 40), by stage and outcome: `continue`,
   * `break`, `failed` (the request failed closed) or `failed_open`.
   */
  coprocessorCall(stage: string, outcome: "continue" | "break" | "failed" | "failed_open"): void;
  /** A request refused (or logged) by the safelist: `refused` or `logged`. */
  persistedRefusal(outcome: "refused" | "logged"): void;
  /** A reload ended. */
  reload(outcome: "success" | "failure"): void;
  /** The serving config and supergraph (`gw_router_info`, value 1). */
  setInfo(info: {
    readonly configHash: string;
    readonly supergraphHash: string;
    readonly version: string;
  }): void;
  /** The Prometheus text exposition. */
  text(): Promise<string>;
}

const HTTP_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"]);

/**
 * `http.request.method` as OpenTelemetry bounds it: known methods, else `_OTHER`.
 * @param method The request method.
 * @returns The label value.
 */
export function methodLabel(method: string): string {
  return HTTP_METHODS.has(method) ? method : OTHER_METHOD;
}

/** `http.request.method` of a method OpenTelemetry does not know. */
const OTHER_METHOD = "_OTHER";

/**
 * Creates the registry and its instruments.
 *
 * @example Counting a fetch
 * ```ts
 * import assert from "node:assert/strict";
 * import { createRouterMetrics } from "./metrics.ts";
 * const metrics = createRouterMetrics();
 * metrics.subgraphFetch({ subgraph: "users", seconds: 0.01, status: 200, outcome: "success" });
 * const text = await metrics.text();
 * assert.match(text, /gw_router_subgraph_fetches_total\{subgraph="users",outcome="success"\} 1/);
 * ```
 * @param options Live sources and label bounds.
 * @returns The metrics.
 */
export function createRouterMetrics(options: RouterMetricsOptions = {}): RouterMetrics {
  const registry = new Registry();
  const registers = [registry];
  const max = options.maxLabelValues ?? 200;
  const operationNames: BoundedLabel = createBoundedLabel(max);
  const clientNames: BoundedLabel = createBoundedLabel(max);
  const clientVersions: BoundedLabel = createBoundedLabel(max);
  const errorCodes: BoundedLabel = createBoundedLabel(max);
  const sources = options.sources;

  // Series recorded per request or per fetch are cells (`_series.ts`):
  // prom-client's own inc/observe re-validate and re-hash labels on each call.
  const active = gaugeSeries({
    name: "http_server_active_requests",
    help: "Number of active HTTP server requests (OpenTelemetry http.server.active_requests).",
    labelNames: ["http_request_method"],
    registry,
  });
  const serverDuration = histogramSeries({
    name: "http_server_request_duration_seconds",
    help: "Duration of HTTP server requests (OpenTelemetry http.server.request.duration).",
    labelNames: ["http_request_method", "http_route", "http_response_status_code"],
    buckets: DURATION_BUCKETS,
    registry,
  });
  const clientDuration = histogramSeries({
    name: "http_client_request_duration_seconds",
    help: "Duration of subgraph HTTP requests (OpenTelemetry http.client.request.duration).",
    labelNames: ["subgraph", "http_response_status_code"],
    buckets: DURATION_BUCKETS,
    registry,
  });
  const operations = counterSeries({
    name: "gw_router_operations_total",
    help: "GraphQL operations by name, type, client and outcome (GraphQL errors apart from HTTP).",
    labelNames: ["operation_name", "operation_type", "outcome", "client_name", "client_version"],
    registry,
  });
  const graphqlErrors = counterSeries({
    name: "gw_router_graphql_errors_total",
    help: "GraphQL errors in responses, by extensions.code.",
    labelNames: ["code"],
    registry,
  });
  const fetches = counterSeries({
    name: "gw_router_subgraph_fetches_total",
    help: "Subgraph fetches by subgraph and outcome.",
    labelNames: ["subgraph", "outcome"],
    registry,
  });
  const retries = counterSeries({
    name: "gw_router_subgraph_retries_total",
    help: "Subgraph requests retried.",
    labelNames: ["subgraph"],
    registry,
  });
  const parts = counterSeries({
    name: "gw_router_incremental_parts_total",
    help: "Parts of incremental (@defer) answers sent, by kind: primary, deferred, last.",
    labelNames: ["kind"],
    registry,
  });
  const budgetExhausted = counterSeries({
    name: "gw_router_subgraph_retry_budget_exhausted_total",
    help: "Subgraph retries not sent because the subgraph's retry budget was spent.",
    labelNames: ["subgraph"],
    registry,
  });
  const shares = counterSeries({
    name: "gw_router_single_flight_shared_total",
    help: "Subgraph responses shared with an identical in-flight request (single flight).",
    labelNames: ["subgraph"],
    registry,
  });
  const cacheHits = counterSeries({
    name: "gw_router_cache_hits_total",
    help: "Parse/validate and plan cache hits.",
    labelNames: ["cache"],
    registry,
  });
  const cacheMisses = counterSeries({
    name: "gw_router_cache_misses_total",
    help: "Parse/validate and plan cache misses.",
    labelNames: ["cache"],
    registry,
  });
  new Gauge({
    name: "gw_router_cache_entries",
    help: "Entries in the parse/validate and plan caches.",
    labelNames: ["cache"],
    registers,
    collect() {
      const sizes = sources?.caches();
      if (!sizes) return;
      this.set({ cache: "parse" }, sizes.parse.size);
      this.set({ cache: "plan" }, sizes.plan.size);
    },
  });
  new Gauge({
    name: "gw_router_cache_bytes",
    help: "Estimated bytes held by the parse/validate and plan caches (their bound is in bytes).",
    labelNames: ["cache"],
    registers,
    collect() {
      const sizes = sources?.caches();
      if (!sizes) return;
      this.set({ cache: "parse" }, sizes.parse.bytes);
      this.set({ cache: "plan" }, sizes.plan.bytes);
    },
  });
  new Gauge({
    name: "gw_router_in_flight_bytes",
    help: "Subgraph response bytes held by in-flight operations (the in-flight memory budget).",
    registers,
    collect() {
      const budget = sources?.memory?.();
      if (budget) this.set(budget.used);
    },
  });
  new Gauge({
    name: "gw_router_in_flight_bytes_limit",
    help: "The in-flight memory budget (traffic_shaping.router.max_in_flight_bytes; 0: none).",
    registers,
    collect() {
      const budget = sources?.memory?.();
      if (budget) this.set(budget.maxBytes);
    },
  });
  new Gauge({
    name: "gw_router_in_flight_bytes_waiting_reads",
    help: "Subgraph reads waiting for in-flight memory budget bytes to be released.",
    registers,
    collect() {
      const budget = sources?.memory?.();
      if (budget) this.set(budget.waiting);
    },
  });
  new Gauge({
    name: "gw_router_client_connections",
    help: "Client connections open on the listener (the connection guard's count).",
    registers,
    collect() {
      const guard = sources?.connections?.();
      if (guard) this.set(guard.open);
    },
  });
  new Counter({
    name: "gw_router_client_connections_closed_total",
    help:
      "Client connections the guard closed or refused, by limit (header_read_timeout, keep_alive_timeout, answer_timeout, max_connections).",
    labelNames: ["limit"],
    registers,
    collect() {
      const guard = sources?.connections?.();
      if (!guard) return;
      // The guard keeps the totals: the counter mirrors them at each scrape.
      this.reset();
      this.inc({ limit: "header_read_timeout" }, guard.headerReadTimeouts);
      this.inc({ limit: "keep_alive_timeout" }, guard.keepAliveTimeouts);
      this.inc({ limit: "answer_timeout" }, guard.answerTimeouts ?? 0);
      this.inc({ limit: "max_connections" }, guard.refused);
    },
  });
  new Counter({
    name: "gw_router_tls_handshake_failures_total",
    help:
      "TLS handshakes on the listener that failed (an untrusted or missing client certificate, a client that does not trust the router's) or timed out.",
    registers,
    collect() {
      const guard = sources?.connections?.();
      if (guard?.tlsHandshakeFailures === undefined) return;
      this.reset();
      this.inc(guard.tlsHandshakeFailures);
    },
  });
  new Gauge({
    name: "gw_router_subscriptions_active",
    help: "Client subscriptions being served (WebSocket, SSE, multipart).",
    registers,
    collect() {
      const subs = sources?.subscriptions?.();
      if (subs) this.set(subs.active);
    },
  });
  new Gauge({
    name: "gw_router_subscription_upstreams",
    help: "Subgraph subscription streams open (identical subscriptions share one).",
    registers,
    collect() {
      const subs = sources?.subscriptions?.();
      if (subs) this.set(subs.upstreams);
    },
  });
  new Counter({
    name: "gw_router_subscription_upstreams_opened_total",
    help: "Subgraph subscription streams opened.",
    registers,
    collect() {
      const subs = sources?.subscriptions?.();
      if (!subs) return;
      // The engine keeps the totals: the counter mirrors them at each scrape.
      this.reset();
      this.inc(subs.upstreamsOpened);
    },
  });
  new Counter({
    name: "gw_router_subscription_events_total",
    help:
      "Subscription events: received from subgraphs (direction=in), results delivered to clients (direction=out).",
    labelNames: ["direction"],
    registers,
    collect() {
      const subs = sources?.subscriptions?.();
      if (!subs) return;
      this.reset();
      this.inc({ direction: "in" }, subs.eventsIn);
      this.inc({ direction: "out" }, subs.eventsOut);
    },
  });
  new Counter({
    name: "gw_router_subscriptions_refused_total",
    help:
      "Subscriptions refused with SUBSCRIPTION_LIMIT_REACHED, by limit: capacity (subscriptions.admission.max_cpu_share), behind (the serving thread saturated), max_total, max_per_connection.",
    labelNames: ["reason"],
    registers,
    collect() {
      const limits = sources?.subscriptions?.()?.limits;
      if (!limits) return;
      this.reset();
      this.inc({ reason: "capacity" }, limits.refusedCapacity);
      this.inc({ reason: "behind" }, limits.refusedBehind);
      this.inc({ reason: "max_total" }, limits.refusedMaxTotal);
      this.inc({ reason: "max_per_connection" }, limits.refusedPerConnection);
    },
  });
  new Counter({
    name: "gw_router_subscriptions_dropped_total",
    help:
      "Subscriptions ended because their results waited too long: client_too_slow (SUBSCRIPTION_CLIENT_TOO_SLOW), router_behind (SUBSCRIPTION_LIMIT_REACHED).",
    labelNames: ["reason"],
    registers,
    collect() {
      const limits = sources?.subscriptions?.()?.limits;
      if (!limits) return;
      this.reset();
      this.inc({ reason: "client_too_slow" }, limits.endedClientTooSlow);
      this.inc({ reason: "router_behind" }, limits.endedRouterBehind);
    },
  });
  new Gauge({
    name: "gw_router_subscription_cpu_share",
    help:
      "The serving thread's CPU demand (share of the time, last 0.5 s) that subscription admission judges by.",
    registers,
    collect() {
      const share = sources?.subscriptions?.()?.cpuShare;
      if (share !== undefined) this.set(share);
    },
  });
  new Gauge({
    name: "gw_router_admission_in_flight",
    help: "Operations holding an admission slot.",
    registers,
    collect() {
      const gate = sources?.admission();
      if (gate) this.set(gate.active);
    },
  });
  new Gauge({
    name: "gw_router_admission_limit",
    help:
      "Operations admission lets run at once now (engine.adaptive_concurrency, or the fixed engine.max_concurrent_operations; -1: no limit).",
    registers,
    collect() {
      const gate = sources?.admission();
      if (gate) this.set(Number.isFinite(gate.limit) ? gate.limit : -1);
    },
  });
  new Gauge({
    name: "gw_router_admission_queued",
    help: "Operations waiting for an admission slot.",
    registers,
    collect() {
      const gate = sources?.admission();
      if (gate) this.set(gate.waiting);
    },
  });
  const rejected = counterSeries({
    name: "gw_router_admission_rejected_total",
    help: "Requests refused or dropped by admission, by reason.",
    labelNames: ["reason"],
    registry,
  });
  const mcp = counterSeries({
    name: "gw_router_mcp_requests_total",
    help: "MCP requests by JSON-RPC method, tool and outcome.",
    labelNames: ["method", "tool", "outcome"],
    registry,
  });
  const connect = counterSeries({
    name: "gw_router_connect_requests_total",
    help: "Connect RPC calls by method and Connect code.",
    labelNames: ["method", "code"],
    registry,
  });
  const jwks = counterSeries({
    name: "gw_router_jwks_refreshes_total",
    help: "JWKS refreshes by outcome.",
    labelNames: ["outcome"],
    registry,
  });
  const rateLimited = counterSeries({
    name: "gw_router_rate_limited_total",
    help:
      "Requests over their rate limit, by facet and outcome (rejected, logged, fail_open, fail_closed).",
    labelNames: ["facet", "outcome"],
    registry,
  });
  const pluginHooks = counterSeries({
    name: "gw_router_plugin_hooks_total",
    help: "Plugin hooks that stopped a request, by plugin, hook and outcome (refused, failed).",
    labelNames: ["plugin", "hook", "outcome"],
    registry,
  });
  const coprocessorCalls = counterSeries({
    name: "gw_router_coprocessor_calls_total",
    help: "Coprocessor calls by stage and outcome (continue, break, failed, failed_open).",
    labelNames: ["stage", "outcome"],
    registry,
  });
  const batches = counterSeries({
    name: "gw_router_batches_total",
    help: "Batched requests (batching), by outcome: answered, disabled, too_large.",
    labelNames: ["outcome"],
    registry,
  });
  const batchOperations = new Counter({
    name: "gw_router_batch_operations_total",
    help: "Operations of answered batches (each is also in gw_router_operations_total).",
    registers: [registry],
  });
  const uploads = counterSeries({
    name: "gw_router_uploads_total",
    help: "File uploads (file_uploads), by outcome: streamed, refused.",
    labelNames: ["outcome"],
    registry,
  });
  const uploadBytes = new Counter({
    name: "gw_router_upload_bytes_total",
    help: "Bytes of uploaded files streamed to subgraphs.",
    registers: [registry],
  });
  const storeFallbacks = counterSeries({
    name: "gw_router_store_fallbacks_total",
    help: "Shared-store calls answered by the feature's fallback (Redis unavailable), by feature.",
    labelNames: ["feature"],
    registry,
  });
  const cacheLookups = counterSeries({
    name: "gw_router_entity_cache_lookups_total",
    help: "Entity cache lookups of fetches, by subgraph, type and outcome (hit, partial, miss).",
    labelNames: ["subgraph", "type", "outcome"],
    registry,
  });
  const cacheStored = counterSeries({
    name: "gw_router_entity_cache_stored_total",
    help: "Entity cache entries stored, by subgraph and type.",
    labelNames: ["subgraph", "type"],
    registry,
  });
  const cacheBytes = counterSeries({
    name: "gw_router_entity_cache_stored_bytes_total",
    help: "Bytes of entity cache entries stored, by subgraph and type.",
    labelNames: ["subgraph", "type"],
    registry,
  });
  const cacheSkipped = counterSeries({
    name: "gw_router_entity_cache_skipped_total",
    help:
      "Entity cache entries not stored, by subgraph, type and reason (too_large, tag_index_full, unavailable).",
    labelNames: ["subgraph", "type", "reason"],
    registry,
  });
  const cacheInvalidated = counterSeries({
    name: "gw_router_entity_cache_invalidated_total",
    help:
      "Entity cache entries removed by invalidation, by subgraph, type and kind (subgraph, type, entity, cache_tag).",
    labelNames: ["subgraph", "type", "kind"],
    registry,
  });
  const storeUp = new Gauge({
    name: "gw_router_store_available",
    help: "Whether a shared store (storage_providers.redis[].id) is reachable: 1 or 0.",
    labelNames: ["provider"],
    registers: [registry],
  });
  const persisted = counterSeries({
    name: "gw_router_persisted_query_refusals_total",
    help:
      "Operations that are not trusted documents, refused by the safelist or logged (log_unknown).",
    labelNames: ["outcome"],
    registry,
  });
  const reloads = counterSeries({
    name: "gw_router_reloads_total",
    help: "Configuration reloads by outcome.",
    labelNames: ["outcome"],
    registry,
  });
  new Gauge({
    name: "gw_router_supergraph_age_seconds",
    help: "Age of the serving supergraph from a registry (since it was loaded), by source.",
    labelNames: ["source"],
    registers,
    collect() {
      const status = sources?.supergraph?.();
      if (!status || status.loadedAt === null) return;
      this.set({ source: status.source }, (Date.now() - status.loadedAt) / 1_000);
    },
  });
  new Gauge({
    name: "gw_router_supergraph_poll_age_seconds",
    help: "Time since a poll of the supergraph registry last succeeded, by source.",
    labelNames: ["source"],
    registers,
    collect() {
      const status = sources?.supergraph?.();
      if (!status || status.polledAt === null) return;
      this.set({ source: status.source }, (Date.now() - status.polledAt) / 1_000);
    },
  });
  new Gauge({
    name: "gw_router_supergraph_poll_failures",
    help: "Polls of the supergraph registry that failed since start, by source.",
    labelNames: ["source"],
    registers,
    collect() {
      const status = sources?.supergraph?.();
      if (!status) return;
      this.set({ source: status.source }, status.failures);
    },
  });
  const info = new Gauge({
    name: "gw_router_info",
    help: "The serving configuration and supergraph (value 1).",
    labelNames: ["config_hash", "supergraph_hash", "version"],
    registers,
  });
  const mcpDenied = counterSeries({
    name: "gw_router_mcp_denied_total",
    help:
      "MCP requests refused for their token: 401 (level token) or 403 by the failing scope gate.",
    labelNames: ["level"],
    registry,
  });
  const costEstimated = histogramSeries({
    name: "gw_router_cost_estimated",
    help: "Estimated cost of operations (demand control, static_estimated), by result.",
    labelNames: ["result"],
    buckets: COST_BUCKETS,
    registry,
  });
  const costActual = histogramSeries({
    name: "gw_router_cost_actual",
    help:
      "Actual cost of answers (demand control: the estimate's rules on the real data), by result.",
    labelNames: ["result"],
    buckets: COST_BUCKETS,
    registry,
  });
  const mcpMethods = createBoundedLabel(50);
  const mcpTools = createBoundedLabel(max);
  // Bound once: the cells the hot path uses every request.
  const cacheCells = {
    parse: { hit: cacheHits.at("parse").cell(), miss: cacheMisses.at("parse").cell() },
    plan: { hit: cacheHits.at("plan").cell(), miss: cacheMisses.at("plan").cell() },
  } as const;
  const activeOther = active.at(OTHER_METHOD);
  const activeBy = new Map<string, SeriesNode<ValueCell>>(
    [...HTTP_METHODS].map((m) => [m, active.at(m)]),
  );

  return {
    registry,
    requestStarted(method) {
      (activeBy.get(method) ?? activeOther).cell().value++;
    },
    requestFinished({ method, route, status, seconds }) {
      const node = activeBy.get(method) ?? activeOther;
      node.cell().value--;
      observe(
        serverDuration.at(node === activeOther ? OTHER_METHOD : method).at(route).at(status).cell(),
        seconds,
      );
    },
    operation(record) {
      operations
        .at(record.name === null ? UNKNOWN_LABEL : operationNames.value(record.name))
        .at(record.type ?? UNKNOWN_LABEL)
        .at(record.outcome)
        .at(clientNames.value(record.clientName))
        .at(clientVersions.value(record.clientVersion))
        .cell().value++;
      for (const code of record.errorCodes) graphqlErrors.at(errorCodes.value(code)).cell().value++;
    },
    subgraphFetch({ subgraph, seconds, status, outcome }) {
      fetches.at(subgraph).at(outcome).cell().value++;
      observe(clientDuration.at(subgraph).at(status).cell(), seconds);
    },
    incrementalPart(kind) {
      parts.at(kind).cell().value++;
    },
    subgraphRetry(subgraph) {
      retries.at(subgraph).cell().value++;
    },
    retryBudgetExhausted(subgraph) {
      budgetExhausted.at(subgraph).cell().value++;
    },
    circuitBreakerRejected(subgraph) {
      fetches.at(subgraph).at("circuit_open").cell().value++;
    },
    cost({ estimated, actual, result }) {
      const label = COST_RESULTS.has(result) ? result : OTHER_LABEL;
      if (estimated !== null) observe(costEstimated.at(label).cell(), estimated);
      if (actual !== null) observe(costActual.at(label).cell(), actual);
    },
    singleFlightShared(subgraph) {
      shares.at(subgraph).cell().value++;
    },
    cache(cache, hit) {
      const cells = cacheCells[cache];
      (hit ? cells.hit : cells.miss).value++;
    },
    admissionRejected(reason) {
      rejected.at(reason).cell().value++;
    },
    mcpDenied(level) {
      mcpDenied.at(MCP_DENIAL_LEVELS.has(level) ? level : OTHER_LABEL).cell().value++;
    },
    mcp({ method, tool, outcome }) {
      // No tool (methods other than tools/call): the label stays empty.
      mcp
        .at(mcpMethods.value(method))
        .at(tool === "" ? "" : mcpTools.value(tool))
        .at(outcome)
        .cell().value++;
    },
    connect({ method, code }) {
      connect.at(method).at(code).cell().value++;
    },
    jwksRefresh(outcome) {
      jwks.at(outcome).cell().value++;
    },
    rateLimited(facet, outcome) {
      rateLimited.at(facet).at(outcome).cell().value++;
    },
    pluginHook(plugin, hook, outcome) {
      pluginHooks.at(plugin).at(hook).at(outcome).cell().value++;
    },
    coprocessorCall(stage, outcome) {
      coprocessorCalls.at(stage).at(outcome).cell().value++;
    },
    batch(outcome, operations) {
      batches.at(outcome).cell().value++;
      if (outcome === "answered") batchOperations.inc(operations);
    },
    upload(outcome, bytes) {
      uploads.at(outcome).cell().value++;
      if (bytes > 0) uploadBytes.inc(bytes);
    },
    storeFallback(feature) {
      storeFallbacks.at(feature).cell().value++;
    },
    entityCacheLookup(subgraph, type, outcome) {
      cacheLookups.at(subgraph).at(type).at(outcome).cell().value++;
    },
    entityCacheStored(subgraph, type, bytes) {
      cacheStored.at(subgraph).at(type).cell().value++;
      cacheBytes.at(subgraph).at(type).cell().value += bytes;
    },
    entityCacheSkipped(subgraph, type, reason) {
      cacheSkipped.at(subgraph).at(type).at(reason).cell().value++;
    },
    entityCacheInvalidated(subgraph, type, entries, kind) {
      cacheInvalidated.at(subgraph).at(type).at(kind).cell().value += entries;
    },
    storeAvailable(provider, available) {
      storeUp.set({ provider }, available ? 1 : 0);
    },
    persistedRefusal(outcome) {
      persisted.at(outcome).cell().value++;
    },
    reload(outcome) {
      reloads.at(outcome).cell().value++;
    },
    setInfo({ configHash, supergraphHash, version }) {
      info.reset();
      info.set({ config_hash: configHash, supergraph_hash: supergraphHash, version }, 1);
    },
    text() {
      return registry.metrics();
    },
  };
}

const MCP_DENIAL_LEVELS: ReadonlySet<string> = new Set([
  "token",
  "initialize",
  "method",
  "built-in",
  "tool",
  "runtime",
]);
