/**
 * The metrics registry (prom-client; `bench/metrics_bench.ts` compares it with
 * the OpenTelemetry metrics SDK): OpenTelemetry semantic-convention names for
 * HTTP (`http_server_request_duration_seconds`, `http_server_active_requests`,
 * `http_client_request_duration_seconds`) and `gw_router_*` for the rest.
 * Recording functions are the API: the engine, the facets and the HTTP edge
 * call them; nothing else touches prom-client.
 *
 * Just over 600 lines on purpose: every hot-path metric's name, help and
 * labels in one table-like file, so that the names stay one vocabulary
 * (docs/observability.md lists the same); the metrics read at scrape time are
 * declared in `_scraped.ts`.
 *
 * @module
 */
import { Counter, Gauge, Registry } from "prom-client";
import {
  counterSeries,
  gaugeSeries,
  histogramSeries,
  type HistogramSeriesConfig,
  observe,
  type SeriesConfig,
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
import {
  type CacheSize,
  type MetricSources,
  registerScraped,
  SCRAPED_RUNTIME,
  SCRAPED_SUPERGRAPH,
} from "./_scraped.ts";

export { DURATION_BUCKETS };
export type { CacheSize, MetricSources };

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
  const max = options.maxLabelValues ?? 200;
  const operationNames: BoundedLabel = createBoundedLabel(max);
  const clientNames: BoundedLabel = createBoundedLabel(max);
  const clientVersions: BoundedLabel = createBoundedLabel(max);
  const errorCodes: BoundedLabel = createBoundedLabel(max);
  const sources = options.sources;

  // Series recorded per request or per fetch are cells (`_series.ts`):
  // prom-client's own inc/observe re-validate and re-hash labels on each call.
  const counter = (c: Omit<SeriesConfig, "registry">) => counterSeries({ ...c, registry });
  const gauge = (c: Omit<SeriesConfig, "registry">) => gaugeSeries({ ...c, registry });
  const histogram = (c: Omit<HistogramSeriesConfig, "registry">) =>
    histogramSeries({ ...c, registry });
  const active = gauge({
    name: "http_server_active_requests",
    help: "Number of active HTTP server requests (OpenTelemetry http.server.active_requests).",
    labelNames: ["http_request_method"],
  });
  const serverDuration = histogram({
    name: "http_server_request_duration_seconds",
    help: "Duration of HTTP server requests (OpenTelemetry http.server.request.duration).",
    labelNames: ["http_request_method", "http_route", "http_response_status_code"],
    buckets: DURATION_BUCKETS,
  });
  const clientDuration = histogram({
    name: "http_client_request_duration_seconds",
    help: "Duration of subgraph HTTP requests (OpenTelemetry http.client.request.duration).",
    labelNames: ["subgraph", "http_response_status_code"],
    buckets: DURATION_BUCKETS,
  });
  const operations = counter({
    name: "gw_router_operations_total",
    help: "GraphQL operations by name, type, client and outcome (GraphQL errors apart from HTTP).",
    labelNames: ["operation_name", "operation_type", "outcome", "client_name", "client_version"],
  });
  const graphqlErrors = counter({
    name: "gw_router_graphql_errors_total",
    help: "GraphQL errors in responses, by extensions.code.",
    labelNames: ["code"],
  });
  const fetches = counter({
    name: "gw_router_subgraph_fetches_total",
    help: "Subgraph fetches by subgraph and outcome.",
    labelNames: ["subgraph", "outcome"],
  });
  const retries = counter({
    name: "gw_router_subgraph_retries_total",
    help: "Subgraph requests retried.",
    labelNames: ["subgraph"],
  });
  const parts = counter({
    name: "gw_router_incremental_parts_total",
    help: "Parts of incremental (@defer) answers sent, by kind: primary, deferred, last.",
    labelNames: ["kind"],
  });
  const budgetExhausted = counter({
    name: "gw_router_subgraph_retry_budget_exhausted_total",
    help: "Subgraph retries not sent because the subgraph's retry budget was spent.",
    labelNames: ["subgraph"],
  });
  const shares = counter({
    name: "gw_router_single_flight_shared_total",
    help: "Subgraph responses shared with an identical in-flight request (single flight).",
    labelNames: ["subgraph"],
  });
  const cacheHits = counter({
    name: "gw_router_cache_hits_total",
    help: "Parse/validate and plan cache hits.",
    labelNames: ["cache"],
  });
  const cacheMisses = counter({
    name: "gw_router_cache_misses_total",
    help: "Parse/validate and plan cache misses.",
    labelNames: ["cache"],
  });
  registerScraped(registry, { sources, metrics: SCRAPED_RUNTIME });
  const rejected = counter({
    name: "gw_router_admission_rejected_total",
    help: "Requests refused or dropped by admission, by reason.",
    labelNames: ["reason"],
  });
  const mcp = counter({
    name: "gw_router_mcp_requests_total",
    help: "MCP requests by JSON-RPC method, tool and outcome.",
    labelNames: ["method", "tool", "outcome"],
  });
  const connect = counter({
    name: "gw_router_connect_requests_total",
    help: "Connect RPC calls by method and Connect code.",
    labelNames: ["method", "code"],
  });
  const jwks = counter({
    name: "gw_router_jwks_refreshes_total",
    help: "JWKS refreshes by outcome.",
    labelNames: ["outcome"],
  });
  const rateLimited = counter({
    name: "gw_router_rate_limited_total",
    help:
      "Requests over their rate limit, by facet and outcome (rejected, logged, fail_open, fail_closed).",
    labelNames: ["facet", "outcome"],
  });
  const pluginHooks = counter({
    name: "gw_router_plugin_hooks_total",
    help: "Plugin hooks that stopped a request, by plugin, hook and outcome (refused, failed).",
    labelNames: ["plugin", "hook", "outcome"],
  });
  const coprocessorCalls = counter({
    name: "gw_router_coprocessor_calls_total",
    help: "Coprocessor calls by stage and outcome (continue, break, failed, failed_open).",
    labelNames: ["stage", "outcome"],
  });
  const batches = counter({
    name: "gw_router_batches_total",
    help: "Batched requests (batching), by outcome: answered, disabled, too_large.",
    labelNames: ["outcome"],
  });
  const batchOperations = new Counter({
    name: "gw_router_batch_operations_total",
    help: "Operations of answered batches (each is also in gw_router_operations_total).",
    registers: [registry],
  });
  const uploads = counter({
    name: "gw_router_uploads_total",
    help: "File uploads (file_uploads), by outcome: streamed, refused.",
    labelNames: ["outcome"],
  });
  const uploadBytes = new Counter({
    name: "gw_router_upload_bytes_total",
    help: "Bytes of uploaded files streamed to subgraphs.",
    registers: [registry],
  });
  const storeFallbacks = counter({
    name: "gw_router_store_fallbacks_total",
    help: "Shared-store calls answered by the feature's fallback (Redis unavailable), by feature.",
    labelNames: ["feature"],
  });
  const cacheLookups = counter({
    name: "gw_router_entity_cache_lookups_total",
    help: "Entity cache lookups of fetches, by subgraph, type and outcome (hit, partial, miss).",
    labelNames: ["subgraph", "type", "outcome"],
  });
  const cacheStored = counter({
    name: "gw_router_entity_cache_stored_total",
    help: "Entity cache entries stored, by subgraph and type.",
    labelNames: ["subgraph", "type"],
  });
  const cacheBytes = counter({
    name: "gw_router_entity_cache_stored_bytes_total",
    help: "Bytes of entity cache entries stored, by subgraph and type.",
    labelNames: ["subgraph", "type"],
  });
  const cacheSkipped = counter({
    name: "gw_router_entity_cache_skipped_total",
    help:
      "Entity cache entries not stored, by subgraph, type and reason (too_large, tag_index_full, unavailable).",
    labelNames: ["subgraph", "type", "reason"],
  });
  const cacheInvalidated = counter({
    name: "gw_router_entity_cache_invalidated_total",
    help:
      "Entity cache entries removed by invalidation, by subgraph, type and kind (subgraph, type, entity, cache_tag).",
    labelNames: ["subgraph", "type", "kind"],
  });
  const storeUp = new Gauge({
    name: "gw_router_store_available",
    help: "Whether a shared store (storage_providers.redis[].id) is reachable: 1 or 0.",
    labelNames: ["provider"],
    registers: [registry],
  });
  const persisted = counter({
    name: "gw_router_persisted_query_refusals_total",
    help:
      "Operations that are not trusted documents, refused by the safelist or logged (log_unknown).",
    labelNames: ["outcome"],
  });
  const reloads = counter({
    name: "gw_router_reloads_total",
    help: "Configuration reloads by outcome.",
    labelNames: ["outcome"],
  });
  registerScraped(registry, { sources, metrics: SCRAPED_SUPERGRAPH });
  const info = new Gauge({
    name: "gw_router_info",
    help: "The serving configuration and supergraph (value 1).",
    labelNames: ["config_hash", "supergraph_hash", "version"],
    registers: [registry],
  });
  const mcpDenied = counter({
    name: "gw_router_mcp_denied_total",
    help:
      "MCP requests refused for their token: 401 (level token) or 403 by the failing scope gate.",
    labelNames: ["level"],
  });
  const costEstimated = histogram({
    name: "gw_router_cost_estimated",
    help: "Estimated cost of operations (demand control, static_estimated), by result.",
    labelNames: ["result"],
    buckets: COST_BUCKETS,
  });
  const costActual = histogram({
    name: "gw_router_cost_actual",
    help:
      "Actual cost of answers (demand control: the estimate's rules on the real data), by result.",
    labelNames: ["result"],
    buckets: COST_BUCKETS,
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
