/**
 * The trace recorder: an {@linkcode ExecutionObserver} that collects stage
 * timings, the plan and every subgraph load, then renders Cosmo's ART JSON.
 * Pure: the clock comes in as options; nothing here runs unless a request
 * asked for (and was allowed) a trace.
 *
 * @module
 */
import type { ExecutionObserver, FetchRecord, StageName } from "../engine/mod.ts";
import { approximateDepth, MAX_DATA_DEPTH } from "../engine/mod.ts";
import { traceHeaders } from "./headers.ts";
import { maskUrl } from "../mask_url.ts";
import { spokenUrl } from "../request/mod.ts";
import { formatDuration } from "./duration.ts";
import type { TraceOptions } from "./options.ts";
import { buildFetchTree, type PlannedFetch } from "./_tree.ts";
import type {
  DataSourceLoadTrace,
  FetchTraceNode,
  LoadStats,
  LoadStatsPoint,
  PhaseStats,
  TraceData,
  TraceFetchInput,
  TraceHttpMetadata,
  TraceInfo,
  TraceRequestData,
} from "./types.ts";

/** The inbound request as the recorder keeps it. */
export interface InboundRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Headers;
}

/** The GraphQL body of the inbound request, as far as the facet knows it. */
export interface InboundBody {
  readonly query?: string | null | undefined;
  readonly operationName?: string | null | undefined;
  readonly variables?: unknown;
}

/** Options for {@linkcode createTraceRecorder}. */
export interface TraceRecorderOptions {
  /** The request's options. */
  readonly options: TraceOptions;
  /** Monotonic clock in nanoseconds (also handed to the engine as `observer.now`). */
  readonly now: () => number;
  /** Wall-clock time of the trace start. */
  readonly startedAt: Date;
  /** Router version for `info.router_version`. */
  readonly routerVersion: string;
  /** Lower-case header names shown as `****` even when allowed. */
  readonly maskedHeaders: ReadonlySet<string>;
  /** Lower-case header names whose values are shown; all others are `****`. */
  readonly unmaskedHeaders: ReadonlySet<string>;
  /** `engine.enable_single_flight`, shown as `single_flight_used`. */
  readonly singleFlight: boolean;
  /** The inbound request, for `request`. */
  readonly request?: InboundRequest;
}

/** A request's recorder. */
export interface TraceRecorder {
  /** Pass to the engine's `prepare`/`execute`. */
  readonly observer: ExecutionObserver;
  /**
   * Renders the trace. May be called more than once.
   * @param body The GraphQL request body, for `request.body`.
   */
  finish(body?: InboundBody): TraceData;
}

/** Constants of predictable timings (Cosmo's values: phases 5ns apart, loads 1ns). */
const PREDICTABLE_PHASE_NS = 5;
const PREDICTABLE_LOAD_NS = 1;

const PHASES: readonly {
  readonly stage: StageName;
  readonly key: "parse_stats" | "normalize_stats" | "validate_stats" | "planner_stats";
  readonly exclude: keyof TraceOptions;
}[] = [
  { stage: "parse", key: "parse_stats", exclude: "excludeParseStats" },
  { stage: "normalize", key: "normalize_stats", exclude: "excludeNormalizeStats" },
  { stage: "validate", key: "validate_stats", exclude: "excludeValidateStats" },
  { stage: "plan", key: "planner_stats", exclude: "excludePlannerStats" },
];

const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: "OK",
  201: "Created",
  204: "No Content",
  301: "Moved Permanently",
  302: "Found",
  304: "Not Modified",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

const encoder = new TextEncoder();

/**
 * Creates a recorder for one traced request.
 *
 * @example Stage timings and the plan-cache flag
 * ```ts
 * import assert from "node:assert/strict";
 * import { createTraceRecorder } from "./recorder.ts";
 * import { DEFAULT_TRACE_OPTIONS } from "./options.ts";
 * import { maskedHeaderSet } from "./headers.ts";
 * let clock = 1_000;
 * const recorder = createTraceRecorder({
 *   options: DEFAULT_TRACE_OPTIONS,
 *   now: () => clock,
 *   startedAt: new Date("2026-01-01T00:00:00Z"),
 *   routerVersion: "0.43.0",
 *   maskedHeaders: maskedHeaderSet(),
 *   unmaskedHeaders: new Set(["content-type"]),
 *   singleFlight: false,
 * });
 * recorder.observer.stage("parse", 1_000, 3_500);
 * recorder.observer.plan({ kind: "QueryPlan", node: null }, { cached: true });
 * const trace = recorder.finish();
 * assert.equal(trace.info.trace_start_time, "2026-01-01T00:00:00Z");
 * assert.equal(trace.info.parse_stats?.duration_pretty, "2.5µs");
 * assert.equal(trace.info.plan_cache_hit, true);
 * assert.deepEqual(trace.fetches, { kind: "Sequence" });
 * ```
 *
 * @param config Options, clocks and the inbound request.
 * @returns The recorder.
 */
export function createTraceRecorder(config: TraceRecorderOptions): TraceRecorder {
  const startNs = config.now();
  const stages = new Map<StageName, { startNs: number; endNs: number }>();
  const records: FetchRecord[] = [];
  const parts: { index: number; labels: string[]; hasNext: boolean; atNs: number }[] = [];
  let plan: unknown = undefined;
  let planCached: boolean | undefined;
  let cost: TraceInfo["cost"];
  const observer: ExecutionObserver = {
    now: config.now,
    stage(name, start, end) {
      stages.set(name, { startNs: start, endNs: end });
    },
    plan(value, info) {
      plan = value;
      planCached = info.cached;
    },
    part(info) {
      parts.push({ ...info, labels: [...info.labels], atNs: config.now() });
    },
    cost(report) {
      cost = { estimated: report.estimated, actual: report.actual, result: report.result };
    },
    fetch(record) {
      // Snapshot the raw input: the engine merges results into its objects later.
      records.push(
        config.options.excludeRawInputData
          ? record
          : { ...record, rawInputData: snapshot(record.rawInputData) },
      );
    },
  };
  return {
    observer,
    finish(body) {
      return renderTrace(config, {
        startNs,
        stages,
        records,
        plan,
        planCached,
        body,
        parts,
        cost,
      });
    },
  };
}

interface Collected {
  readonly startNs: number;
  readonly stages: ReadonlyMap<StageName, { startNs: number; endNs: number }>;
  readonly records: readonly FetchRecord[];
  readonly plan: unknown;
  readonly planCached: boolean | undefined;
  readonly body: InboundBody | undefined;
  readonly parts: readonly { index: number; labels: string[]; hasNext: boolean; atNs: number }[];
  readonly cost: TraceInfo["cost"];
}

function renderTrace(config: TraceRecorderOptions, collected: Collected): TraceData {
  const { options } = config;
  const predictable = options.enablePredictableDebugTimings;
  const startUnix = Math.floor(config.startedAt.getTime() / 1000);
  const info: TraceInfo = {
    trace_start_time: predictable ? "" : rfc3339(config.startedAt),
    trace_start_unix: predictable ? 0 : startUnix,
    router_version: config.routerVersion,
  };
  PHASES.forEach((phase, index) => {
    if (options[phase.exclude]) return;
    const timing = collected.stages.get(phase.stage);
    info[phase.key] = predictable
      ? phaseStats(PREDICTABLE_PHASE_NS, PREDICTABLE_PHASE_NS * (index + 1))
      : timing === undefined
      ? phaseStats(0, 0)
      : phaseStats(timing.endNs - timing.startNs, timing.endNs - collected.startNs);
  });
  // Reorder so the stats precede router_version, like Cosmo's key order.
  const { router_version, ...stats } = info;
  const orderedInfo: TraceInfo = { ...stats, router_version };
  if (collected.planCached !== undefined) orderedInfo.plan_cache_hit = collected.planCached;
  if (collected.cost !== undefined) orderedInfo.cost = collected.cost;
  const fetches = buildFetchTree(
    collected.plan,
    collected.records,
    (fetch) => renderFetch(config, collected.startNs, fetch),
  );
  const trace: TraceData = { version: "1", info: orderedInfo, fetches };
  if (config.request !== undefined) {
    trace.request = renderRequest(config, config.request, collected.body);
  }
  if (collected.parts.length > 0) {
    trace.incremental_parts = collected.parts.map((p) => ({
      index: p.index,
      labels: p.labels,
      has_next: p.hasNext,
      sent_at_nanoseconds: predictable
        ? PREDICTABLE_PHASE_NS * (p.index + 1)
        : p.atNs - collected.startNs,
    }));
  }
  return trace;
}

function renderFetch(
  config: TraceRecorderOptions,
  startNs: number,
  fetch: PlannedFetch,
): FetchTraceNode {
  const first = fetch.records[0];
  const node: FetchTraceNode = {
    kind: fetch.kind,
    path: first?.path ?? fetch.planPath,
    source_id: fetch.subgraph,
    source_name: fetch.subgraph,
  };
  if (fetch.records.length === 0) {
    node.trace = {
      single_flight_used: config.singleFlight,
      single_flight_shared_response: false,
      load_skipped: true,
    };
  } else if (fetch.records.length === 1 && first !== undefined) {
    node.trace = renderLoad(config, startNs, first);
  } else {
    // Completion order is timing-dependent: sort by what was sent.
    const sorted = [...fetch.records].sort((a, b) =>
      compare(a.path, b.path) || compare(a.request.body, b.request.body)
    );
    node.traces = sorted.map((record) => renderLoad(config, startNs, record));
  }
  return node;
}

function renderLoad(
  config: TraceRecorderOptions,
  startNs: number,
  record: FetchRecord,
): DataSourceLoadTrace {
  const { options } = config;
  const predictable = options.enablePredictableDebugTimings;
  const load: Partial<DataSourceLoadTrace> = {};
  if (!options.excludeRawInputData) load.raw_input_data = rawInputData(record);
  if (!options.excludeInput) load.input = renderInput(config, record);
  if (!options.excludeOutput && record.response !== undefined) {
    load.output = renderOutput(config, record);
  }
  if (record.error !== undefined) load.error = record.error;
  if (!options.excludeLoadStats) {
    const since = predictable ? PREDICTABLE_LOAD_NS : record.startNs - startNs;
    const duration = predictable ? PREDICTABLE_LOAD_NS : record.endNs - record.startNs;
    load.duration_since_start_nanoseconds = since;
    load.duration_since_start_pretty = formatDuration(since);
    load.duration_load_nanoseconds = duration;
    load.duration_load_pretty = formatDuration(duration);
  }
  load.single_flight_used = config.singleFlight;
  load.single_flight_shared_response = record.deduplicated;
  // Served by the entity cache: nothing was sent.
  load.load_skipped = record.cached === "hit";
  if (record.cached !== undefined) load.entity_cache = record.cached;
  if (!options.excludeLoadStats) load.load_stats = renderLoadStats(config, startNs, record);
  return load as DataSourceLoadTrace;
}

/**
 * Cosmo's shapes: `{}` for a root fetch, the parent object for an `Entity`
 * fetch, the list of parent objects for a `BatchEntity` fetch.
 */
function rawInputData(record: FetchRecord): unknown {
  const raw = record.rawInputData ?? {};
  return record.kind === "Entity" && Array.isArray(raw) && raw.length === 1 ? raw[0] : raw;
}

function renderInput(config: TraceRecorderOptions, record: FetchRecord): TraceFetchInput {
  const predictable = config.options.enablePredictableDebugTimings;
  return {
    method: record.request.method,
    url: shownUrl(record.request.url, predictable),
    header: traceHeaders(record.request.headers, {
      masked: config.maskedHeaders,
      unmasked: config.unmaskedHeaders,
      dropDate: predictable,
      blankPorts: predictable,
    }),
    body: parseJson(record.request.body),
  };
}

function renderOutput(config: TraceRecorderOptions, record: FetchRecord): unknown {
  const response = record.response;
  if (response === undefined) return undefined;
  const predictable = config.options.enablePredictableDebugTimings;
  const masked = {
    masked: config.maskedHeaders,
    unmasked: config.unmaskedHeaders,
    dropDate: predictable,
    blankPorts: predictable,
  };
  const metadata: TraceHttpMetadata = {
    request: {
      method: record.request.method,
      url: shownUrl(record.request.url, predictable),
      headers: traceHeaders(record.request.headers, masked),
    },
    response: {
      status_code: response.status,
      status: `${response.status} ${STATUS_TEXT[response.status] ?? ""}`.trimEnd(),
      headers: traceHeaders(response.headers, masked),
      body_size: encoder.encode(response.body).length,
    },
  };
  const parsed = parseJson(response.body);
  if (!isRecord(parsed)) return parsed;
  const extensions = isRecord(parsed.extensions) ? parsed.extensions : {};
  return { ...parsed, extensions: { ...extensions, trace: metadata } };
}

function renderLoadStats(
  config: TraceRecorderOptions,
  startNs: number,
  record: FetchRecord,
): LoadStats {
  const predictable = config.options.enablePredictableDebugTimings;
  const measured = (ns: number): LoadStatsPoint =>
    point(predictable ? PREDICTABLE_LOAD_NS : ns - startNs);
  const zero = point(0);
  return {
    get_conn: {
      ...measured(record.startNs),
      host_port: predictable ? "" : hostPort(record.request.url),
    },
    got_conn: {
      ...zero,
      reused: false,
      was_idle: false,
      idle_time_nanoseconds: 0,
      idle_time_pretty: "0s",
    },
    got_first_response_byte: record.firstByteNs === undefined ? zero : measured(record.firstByteNs),
    dns_start: { ...zero, host: "" },
    dns_done: zero,
    connect_start: { ...zero, network: "", addr: "" },
    connect_done: { ...zero, network: "", addr: "" },
    tls_handshake_start: zero,
    tls_handshake_done: zero,
    wrote_headers: zero,
    wrote_request: zero,
  };
}

function renderRequest(
  config: TraceRecorderOptions,
  request: InboundRequest,
  body: InboundBody | undefined,
): TraceRequestData {
  const predictable = config.options.enablePredictableDebugTimings;
  const data: TraceRequestData = {
    method: request.method,
    url: shownUrl(request.url, predictable),
    headers: traceHeaders(request.headers, {
      masked: config.maskedHeaders,
      unmasked: config.unmaskedHeaders,
      dropDate: predictable,
      blankPorts: predictable,
    }),
  };
  const source = body ?? bodyFromQuery(request);
  if (source !== undefined) {
    const rendered: NonNullable<TraceRequestData["body"]> = {};
    if (source.query) rendered.query = source.query;
    if (source.operationName) rendered.operationName = source.operationName;
    if (source.variables !== undefined && source.variables !== null) {
      rendered.variables = source.variables;
    }
    data.body = rendered;
  }
  return data;
}

/** GET requests carry the GraphQL request in the query string. */
function bodyFromQuery(request: InboundRequest): InboundBody | undefined {
  if (request.method !== "GET") return undefined;
  let params: URLSearchParams;
  try {
    params = new URL(request.url).searchParams;
  } catch {
    return undefined;
  }
  const query = params.get("query");
  if (query === null) return undefined;
  const variables = params.get("variables");
  return {
    query,
    operationName: params.get("operationName"),
    variables: variables === null ? undefined : parseJson(variables),
  };
}

function phaseStats(durationNs: number, sinceStartNs: number): PhaseStats {
  return {
    duration_nanoseconds: durationNs,
    duration_pretty: formatDuration(durationNs),
    duration_since_start_nanoseconds: sinceStartNs,
    duration_since_start_pretty: formatDuration(sinceStartNs),
  };
}

function point(ns: number): LoadStatsPoint {
  return { duration_since_start_nanoseconds: ns, duration_since_start_pretty: formatDuration(ns) };
}

/** RFC 3339 at second precision with `Z`, like Go's `time.RFC3339` in UTC. */
function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** A URL as the trace shows it: query values and credentials masked (`url.ts`). */
function shownUrl(url: string, predictable: boolean): string {
  const spoken = spokenUrl(url);
  return maskUrl(predictable ? withoutPort(spoken) : spoken);
}

function withoutPort(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.port = "";
    return parsed.href;
  } catch {
    return url;
  }
}

function hostPort(url: string): string {
  try {
    const parsed = new URL(url);
    const port = parsed.port || (parsed.protocol === "https:" ? "443" : "80");
    return `${parsed.hostname}:${port}`;
  } catch {
    return "";
  }
}

/**
 * JSON text as data for the trace, or the text itself when it is not JSON or
 * nests deeper than {@linkcode MAX_DATA_DEPTH} (a subgraph can answer anything;
 * data that deep, embedded in the trace, overflowed `JSON.stringify`).
 */
function parseJson(text: string): unknown {
  if (approximateDepth(text, MAX_DATA_DEPTH) > MAX_DATA_DEPTH) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function snapshot(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  try {
    return structuredClone(value);
  } catch {
    return value;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
