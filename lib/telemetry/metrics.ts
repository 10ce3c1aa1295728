/**
 * The metrics registry (prom-client; `bench/metrics_bench.ts` compares it with
 * the OpenTelemetry metrics SDK): OpenTelemetry semantic-convention names for
 * HTTP (`http_server_request_duration_seconds`, `http_server_active_requests`,
 * `http_client_request_duration_seconds`) and `gw_router_*` for the rest.
 * Recording functions are the API: the engine, the facets and the HTTP edge
 * call them; nothing else touches prom-client.
 *
 * @module
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { type BoundedLabel, createBoundedLabel, OTHER_LABEL, UNKNOWN_LABEL } from "./labels.ts";

/** OpenTelemetry's advised buckets for `http.*.request.duration`, seconds. */
export const DURATION_BUCKETS: readonly number[] = [
  0.005,
  0.01,
  0.025,
  0.05,
  0.075,
  0.1,
  0.25,
  0.5,
  0.75,
  1,
  2.5,
  5,
  7.5,
  10,
];

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
  admission(): { readonly active: number; readonly waiting: number } | null;
  /** The parse and plan caches of the current state. */
  caches(): { readonly parse: CacheSize; readonly plan: CacheSize } | null;
  /**
   * The in-flight memory budget of the current state (bytes held by open
   * operations, reads waiting for bytes). Absent: not exported.
   */
  memory?():
    | { readonly used: number; readonly waiting: number; readonly maxBytes: number }
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
  /** A subgraph request was refused by an open circuit breaker. */
  circuitBreakerRejected(subgraph: string): void;
  /** A subgraph response was shared with an identical in-flight request. */
  singleFlightShared(subgraph: string): void;
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
  return HTTP_METHODS.has(method) ? method : "_OTHER";
}

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

  const active = new Gauge({
    name: "http_server_active_requests",
    help: "Number of active HTTP server requests (OpenTelemetry http.server.active_requests).",
    labelNames: ["http_request_method"],
    registers,
  });
  const serverDuration = new Histogram({
    name: "http_server_request_duration_seconds",
    help: "Duration of HTTP server requests (OpenTelemetry http.server.request.duration).",
    labelNames: ["http_request_method", "http_route", "http_response_status_code"],
    buckets: [...DURATION_BUCKETS],
    registers,
  });
  const clientDuration = new Histogram({
    name: "http_client_request_duration_seconds",
    help: "Duration of subgraph HTTP requests (OpenTelemetry http.client.request.duration).",
    labelNames: ["subgraph", "http_response_status_code"],
    buckets: [...DURATION_BUCKETS],
    registers,
  });
  const operations = new Counter({
    name: "gw_router_operations_total",
    help: "GraphQL operations by name, type, client and outcome (GraphQL errors apart from HTTP).",
    labelNames: ["operation_name", "operation_type", "outcome", "client_name", "client_version"],
    registers,
  });
  const graphqlErrors = new Counter({
    name: "gw_router_graphql_errors_total",
    help: "GraphQL errors in responses, by extensions.code.",
    labelNames: ["code"],
    registers,
  });
  const fetches = new Counter({
    name: "gw_router_subgraph_fetches_total",
    help: "Subgraph fetches by subgraph and outcome.",
    labelNames: ["subgraph", "outcome"],
    registers,
  });
  const retries = new Counter({
    name: "gw_router_subgraph_retries_total",
    help: "Subgraph requests retried.",
    labelNames: ["subgraph"],
    registers,
  });
  const shares = new Counter({
    name: "gw_router_single_flight_shared_total",
    help: "Subgraph responses shared with an identical in-flight request (single flight).",
    labelNames: ["subgraph"],
    registers,
  });
  const cacheHits = new Counter({
    name: "gw_router_cache_hits_total",
    help: "Parse/validate and plan cache hits.",
    labelNames: ["cache"],
    registers,
  });
  const cacheMisses = new Counter({
    name: "gw_router_cache_misses_total",
    help: "Parse/validate and plan cache misses.",
    labelNames: ["cache"],
    registers,
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
    name: "gw_router_admission_in_flight",
    help: "Operations holding an admission slot.",
    registers,
    collect() {
      const gate = sources?.admission();
      if (gate) this.set(gate.active);
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
  const rejected = new Counter({
    name: "gw_router_admission_rejected_total",
    help: "Requests refused or dropped by admission, by reason.",
    labelNames: ["reason"],
    registers,
  });
  const mcp = new Counter({
    name: "gw_router_mcp_requests_total",
    help: "MCP requests by JSON-RPC method, tool and outcome.",
    labelNames: ["method", "tool", "outcome"],
    registers,
  });
  const connect = new Counter({
    name: "gw_router_connect_requests_total",
    help: "Connect RPC calls by method and Connect code.",
    labelNames: ["method", "code"],
    registers,
  });
  const jwks = new Counter({
    name: "gw_router_jwks_refreshes_total",
    help: "JWKS refreshes by outcome.",
    labelNames: ["outcome"],
    registers,
  });
  const reloads = new Counter({
    name: "gw_router_reloads_total",
    help: "Configuration reloads by outcome.",
    labelNames: ["outcome"],
    registers,
  });
  const info = new Gauge({
    name: "gw_router_info",
    help: "The serving configuration and supergraph (value 1).",
    labelNames: ["config_hash", "supergraph_hash", "version"],
    registers,
  });
  const mcpDenied = new Counter({
    name: "gw_router_mcp_denied_total",
    help:
      "MCP requests refused for their token: 401 (level token) or 403 by the failing scope gate.",
    labelNames: ["level"],
    registers,
  });
  const mcpMethods = createBoundedLabel(50);
  const mcpTools = createBoundedLabel(max);
  // Label children by their values, so the hot path skips prom-client's label
  // hashing (every label is bounded, so are these maps).
  const activeBy = memo((m: string) => active.labels({ http_request_method: m }));
  const serverBy = memo((key: string) => {
    const [m = "", route = "", status = ""] = key.split(SEP);
    return serverDuration.labels({
      http_request_method: m,
      http_route: route,
      http_response_status_code: status,
    });
  });
  const fetchBy = memo((key: string) => {
    const [subgraph = "", status = "", outcome = ""] = key.split(SEP);
    return {
      count: fetches.labels({ subgraph, outcome }),
      duration: clientDuration.labels({ subgraph, http_response_status_code: status }),
    };
  });
  const cacheBy = {
    parse: [cacheMisses.labels({ cache: "parse" }), cacheHits.labels({ cache: "parse" })],
    plan: [cacheMisses.labels({ cache: "plan" }), cacheHits.labels({ cache: "plan" })],
  } as const;

  return {
    registry,
    requestStarted(method) {
      activeBy(methodLabel(method)).inc();
    },
    requestFinished({ method, route, status, seconds }) {
      const m = methodLabel(method);
      activeBy(m).dec();
      serverBy(`${m}${SEP}${route}${SEP}${status}`).observe(seconds);
    },
    operation(record) {
      operations.inc({
        operation_name: record.name === null ? UNKNOWN_LABEL : operationNames.value(record.name),
        operation_type: record.type ?? UNKNOWN_LABEL,
        outcome: record.outcome,
        client_name: clientNames.value(record.clientName),
        client_version: clientVersions.value(record.clientVersion),
      });
      for (const code of record.errorCodes) graphqlErrors.inc({ code: errorCodes.value(code) });
    },
    subgraphFetch({ subgraph, seconds, status, outcome }) {
      const children = fetchBy(`${subgraph}${SEP}${status ?? ""}${SEP}${outcome}`);
      children.count.inc();
      children.duration.observe(seconds);
    },
    subgraphRetry(subgraph) {
      retries.inc({ subgraph });
    },
    circuitBreakerRejected(subgraph) {
      fetches.inc({ subgraph, outcome: "circuit_open" });
    },
    singleFlightShared(subgraph) {
      shares.inc({ subgraph });
    },
    cache(cache, hit) {
      cacheBy[cache][hit ? 1 : 0].inc();
    },
    admissionRejected(reason) {
      rejected.inc({ reason });
    },
    mcpDenied(level) {
      mcpDenied.inc({ level: MCP_DENIAL_LEVELS.has(level) ? level : OTHER_LABEL });
    },
    mcp({ method, tool, outcome }) {
      // No tool (methods other than tools/call): the label stays empty.
      mcp.inc({
        method: mcpMethods.value(method),
        tool: tool === "" ? "" : mcpTools.value(tool),
        outcome,
      });
    },
    connect({ method, code }) {
      connect.inc({ method, code });
    },
    jwksRefresh(outcome) {
      jwks.inc({ outcome });
    },
    reload(outcome) {
      reloads.inc({ outcome });
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

/** The `level` values of `gw_router_mcp_denied_total` (the MCP gate levels and `token`). */
const MCP_DENIAL_LEVELS: ReadonlySet<string> = new Set([
  "token",
  "initialize",
  "method",
  "built-in",
  "tool",
  "runtime",
]);

/** Separates label values in a memo key (a character no label value has: they are cleaned). */
const SEP = "\u0001";

/** Caches a function of a string key (for label children). */
function memo<T>(make: (key: string) => T): (key: string) => T {
  const cache = new Map<string, T>();
  return (key) => {
    let value = cache.get(key);
    if (value === undefined) {
      value = make(key);
      cache.set(key, value);
    }
    return value;
  };
}
