/**
 * The ART trace JSON, in Cosmo Router's layout (graphql-go-tools
 * `resolve.TraceData`): field names, nesting and key order follow it, so
 * existing ART viewers render our traces. Two additions in `info`:
 * `router_version` and `plan_cache_hit`.
 *
 * @module
 */

/** Timing of one pipeline phase (Cosmo's `PhaseStats`). */
export interface PhaseStats {
  duration_nanoseconds: number;
  duration_pretty: string;
  /** Measured when the phase ended, like Cosmo. */
  duration_since_start_nanoseconds: number;
  duration_since_start_pretty: string;
}

/** `info`: when the trace started and how long the phases took. */
export interface TraceInfo {
  /** RFC 3339 (second precision); empty with predictable timings. */
  trace_start_time: string;
  /** Unix seconds; 0 with predictable timings. */
  trace_start_unix: number;
  parse_stats?: PhaseStats;
  normalize_stats?: PhaseStats;
  validate_stats?: PhaseStats;
  planner_stats?: PhaseStats;
  /** The router's version (`gw-router version`). */
  router_version: string;
  /** Whether the plan came from the plan cache; absent when no plan ran. */
  plan_cache_hit?: boolean;
  /** Demand control's figures (`docs/demand-control.md`); absent when it is off. */
  cost?: {
    estimated: number | null;
    actual: number | null;
    result: string;
  };
}

/** A timing point of `load_stats`. */
export interface LoadStatsPoint {
  duration_since_start_nanoseconds: number;
  duration_since_start_pretty: string;
}

/**
 * Connection-level timings of one load (Go's `httptrace` points). Deno's
 * `fetch` exposes only the start of the request and the arrival of the
 * response head: `get_conn` (fetch called; `host_port` from the URL) and
 * `got_first_response_byte` are measured; the DNS, connect, TLS, `got_conn`
 * and `wrote_*` points are not observable and stay zero (`reused`,
 * `was_idle` false), kept so viewers find every key they expect.
 */
export interface LoadStats {
  get_conn: LoadStatsPoint & { host_port: string };
  got_conn: LoadStatsPoint & {
    reused: boolean;
    was_idle: boolean;
    idle_time_nanoseconds: number;
    idle_time_pretty: string;
  };
  got_first_response_byte: LoadStatsPoint;
  dns_start: LoadStatsPoint & { host: string };
  dns_done: LoadStatsPoint;
  connect_start: LoadStatsPoint & { network: string; addr: string };
  connect_done: LoadStatsPoint & { network: string; addr: string };
  tls_handshake_start: LoadStatsPoint;
  tls_handshake_done: LoadStatsPoint;
  wrote_headers: LoadStatsPoint;
  wrote_request: LoadStatsPoint;
}

/** The subgraph request as rendered (Cosmo's data source input). */
export interface TraceFetchInput {
  method: string;
  url: string;
  header: Record<string, string[]>;
  /** The GraphQL request body (`query`, `variables`, …), or its text when not JSON. */
  body: unknown;
}

/** `output.extensions.trace`: request/response metadata of the load. */
export interface TraceHttpMetadata {
  request: { method: string; url: string; headers: Record<string, string[]> };
  response: {
    status_code: number;
    status: string;
    headers: Record<string, string[]>;
    body_size: number;
  };
}

/** One load of a fetch (Cosmo's `DataSourceLoadTrace`). */
export interface DataSourceLoadTrace {
  /** The data the input was rendered from (entity fetches: the representations' sources). */
  raw_input_data?: unknown;
  input?: TraceFetchInput;
  /** The subgraph response, with `extensions.trace` metadata. */
  output?: unknown;
  error?: string;
  duration_since_start_nanoseconds?: number;
  duration_since_start_pretty?: string;
  duration_load_nanoseconds?: number;
  duration_load_pretty?: string;
  /** Whether in-flight deduplication (`engine.enable_single_flight`) was on. */
  single_flight_used: boolean;
  /** Whether this load shared the response of an identical in-flight request. */
  single_flight_shared_response: boolean;
  /**
   * GW's own: the entity cache's part (`hit`: served from the cache, nothing
   * sent; `partial`: only the entities it missed were asked for). Absent otherwise.
   */
  entity_cache?: "hit" | "partial";
  /** True when the plan's fetch did not run (nothing to load). */
  load_skipped: boolean;
  load_stats?: LoadStats;
}

/** A fetch in the tree (Cosmo's `FetchTraceNode`). */
export interface FetchTraceNode {
  kind: "Single" | "Entity" | "BatchEntity";
  /** Response path, e.g. `query.topProducts.@.reviews`. */
  path: string;
  /** Subgraph id (our subgraph name; Cosmo uses its data source id). */
  source_id: string;
  /** Subgraph name. */
  source_name: string;
  /** The load, when the fetch ran once (or not at all). */
  trace?: DataSourceLoadTrace;
  /** The loads, when the fetch ran more than once. */
  traces?: DataSourceLoadTrace[];
}

/** A node of the fetch tree (Cosmo's `FetchTreeTraceNode`). */
export interface FetchTreeTraceNode {
  kind: "Sequence" | "Parallel" | "Single";
  children?: FetchTreeTraceNode[];
  fetch?: FetchTraceNode;
}

/** The inbound GraphQL request (Cosmo's `RequestData`). */
export interface TraceRequestData {
  method: string;
  url: string;
  headers: Record<string, string[]>;
  body?: { query?: string; operationName?: string; variables?: unknown };
}

/** The whole trace, placed at `extensions.trace`. */
export interface TraceData {
  version: "1";
  info: TraceInfo;
  /** The fetch tree; null when no plan ran (e.g. a validation error). */
  fetches: FetchTreeTraceNode | null;
  request?: TraceRequestData;
  /**
   * Incremental answers (`@defer`) only: each part as it was handed to the client's stream,
   * `0` the primary part (a GW addition; Cosmo's viewers ignore it).
   */
  incremental_parts?: IncrementalPartTrace[];
}

/** When a part of an incremental answer was sent. */
export interface IncrementalPartTrace {
  index: number;
  labels: string[];
  has_next: boolean;
  /** Since the trace started; predictable timings: a constant per part. */
  sent_at_nanoseconds: number;
}
