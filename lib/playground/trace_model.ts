/**
 * Reads an Advanced Request Tracing (ART) trace — Cosmo Router's JSON layout:
 * `info` with the parse/normalize/validate/planner stats and `fetches`, a
 * tree of `Sequence` / `Parallel` / `Single` nodes whose `Single` nodes carry
 * `fetch: {kind, path, source_id, source_name, trace}` — into the two views the
 * playground draws: the plan tree and the waterfall. Pure: the browser bundle
 * and the tests share it.
 *
 * The reader is lenient on purpose (pasted traces come from other routers and
 * older versions): missing stats or timings give rows without a bar, never an
 * error; only a value that is not a trace at all is refused.
 *
 * @module
 */

/** A fetch of the plan, with everything the detail pane shows. */
export interface TraceFetch {
  /** Position in depth-first plan order, from 0; also the waterfall row id. */
  readonly index: number;
  /** `Single`, `Entity` or `BatchEntity` (as the trace says). */
  readonly kind: string;
  /** Subgraph name (`source_name`, else `source_id`). */
  readonly subgraph: string;
  /** Response path the fetch merges at, e.g. `query.topProducts.@`. */
  readonly path: string;
  /** Start offset from the trace start, in nanoseconds, when recorded. */
  readonly startNs: number | null;
  /** Load duration in nanoseconds, when recorded. */
  readonly durationNs: number | null;
  /** `trace.raw_input_data`, when not excluded. */
  readonly rawInputData: unknown;
  /** `trace.input` (the subgraph request), when not excluded. */
  readonly input: unknown;
  /** `trace.output` (the subgraph response), when not excluded. */
  readonly output: unknown;
  /** `trace.load_stats`, when not excluded. */
  readonly loadStats: unknown;
  /** `trace.error` (Cosmo's `load_error`), if the load failed. */
  readonly error: string | null;
  /** The fetch's own `trace` object as found (for fields the pane does not know). */
  readonly trace: Readonly<Record<string, unknown>>;
}

/** A node of the plan tree. */
export type PlanTreeNode =
  | {
    readonly kind: "Sequence" | "Parallel";
    readonly children: readonly PlanTreeNode[];
  }
  | { readonly kind: "Fetch"; readonly fetch: TraceFetch };

/** One waterfall row: a pipeline phase or a fetch. */
export interface WaterfallRow {
  /** `phase` for parse/normalize/validate/plan, `fetch` for subgraph loads. */
  readonly type: "phase" | "fetch";
  /** `parse`, `normalize`, `validate`, `plan`, or the fetch's subgraph name. */
  readonly label: string;
  /** The fetch index for fetch rows, else null. */
  readonly fetchIndex: number | null;
  /** Start offset in nanoseconds (null: not recorded). */
  readonly startNs: number | null;
  /** Duration in nanoseconds (null: not recorded). */
  readonly durationNs: number | null;
}

/** A trace read into view models. */
export interface TraceModel {
  /** `version` of the trace (`"1"`), or null. */
  readonly version: string | null;
  /** `info.trace_start_time` (RFC 3339; empty with predictable timings). */
  readonly startTime: string | null;
  /** The plan tree (null when the trace has no `fetches`). */
  readonly plan: PlanTreeNode | null;
  /** Every fetch in depth-first plan order. */
  readonly fetches: readonly TraceFetch[];
  /** Phases first (parse, normalize, validate, plan: those present), then fetches. */
  readonly waterfall: readonly WaterfallRow[];
  /** End of the last bar in nanoseconds (the time axis length), at least 1. */
  readonly totalNs: number;
  /** `info` fields that are not phase stats (e.g. plan cache), for display. */
  readonly info: Readonly<Record<string, unknown>>;
  /** `request` (the inbound request), when present. */
  readonly request: unknown;
}

const PHASES: readonly (readonly [string, string])[] = [
  ["parse", "parse_stats"],
  ["normalize", "normalize_stats"],
  ["validate", "validate_stats"],
  ["plan", "planner_stats"],
];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function numberOrNull(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/**
 * Finds the ART trace in a value: the trace itself (it has `fetches` or
 * `info`), a GraphQL response carrying it in `extensions.trace`, or either of
 * those as JSON text.
 *
 * @example A response body or its trace
 * ```ts
 * import assert from "node:assert/strict";
 * import { findTrace } from "./trace_model.ts";
 * const trace = { version: "1", info: {}, fetches: { kind: "Sequence", children: [] } };
 * assert.deepEqual(findTrace({ data: {}, extensions: { trace } }), trace);
 * assert.deepEqual(findTrace(JSON.stringify(trace)), trace);
 * assert.equal(findTrace({ data: { a: 1 } }), null);
 * ```
 *
 * @param value A parsed JSON value or JSON text.
 * @returns The trace object, or null when there is none (or the text is not JSON).
 */
export function findTrace(value: unknown): Record<string, unknown> | null {
  let parsed = value;
  if (typeof value === "string") {
    try {
      parsed = JSON.parse(value);
    } catch {
      return null;
    }
  }
  if (!isRecord(parsed)) return null;
  if (isRecord(parsed.extensions) && isRecord(parsed.extensions.trace)) {
    return parsed.extensions.trace;
  }
  if (
    isRecord(parsed.trace) &&
    ("fetches" in parsed.trace || "info" in parsed.trace)
  ) {
    return parsed.trace;
  }
  return "fetches" in parsed || "info" in parsed ? parsed : null;
}

function readFetch(fetch: Record<string, unknown>, index: number): TraceFetch {
  // Cosmo puts one load in `trace`; a fetch split into several loads lists them in `traces`.
  const traces = Array.isArray(fetch.traces) ? fetch.traces.filter(isRecord) : [];
  const trace = isRecord(fetch.trace) ? fetch.trace : (traces[0] ?? {});
  let startNs = numberOrNull(trace.duration_since_start_nanoseconds);
  let durationNs = numberOrNull(trace.duration_load_nanoseconds);
  if (traces.length > 1) {
    // One bar per fetch: the span covering all of its loads.
    const spans = traces.flatMap((t) => {
      const start = numberOrNull(t.duration_since_start_nanoseconds);
      const length = numberOrNull(t.duration_load_nanoseconds);
      return start === null ? [] : [[start, start + (length ?? 0)] as const];
    });
    if (spans.length > 0) {
      startNs = Math.min(...spans.map((s) => s[0]));
      durationNs = Math.max(...spans.map((s) => s[1])) - startNs;
    }
  }
  return {
    index,
    kind: stringOrNull(fetch.kind) ?? "Single",
    subgraph: stringOrNull(fetch.source_name) ||
      stringOrNull(fetch.source_id) || "(unknown)",
    path: stringOrNull(fetch.path) ?? "",
    startNs,
    durationNs,
    rawInputData: trace.raw_input_data,
    input: trace.input,
    output: trace.output,
    loadStats: trace.load_stats,
    error: stringOrNull(trace.error) ?? stringOrNull(trace.load_error),
    trace,
  };
}

function readNode(node: unknown, fetches: TraceFetch[]): PlanTreeNode | null {
  if (!isRecord(node)) return null;
  if (isRecord(node.fetch)) {
    const fetch = readFetch(node.fetch, fetches.length);
    fetches.push(fetch);
    return { kind: "Fetch", fetch };
  }
  const list = Array.isArray(node.children) ? node.children : [];
  const children = list.flatMap((child) => readNode(child, fetches) ?? []);
  return { kind: node.kind === "Parallel" ? "Parallel" : "Sequence", children };
}

/**
 * Reads a trace into the plan tree and the waterfall.
 *
 * The waterfall has a row for each phase present in `info`, then a row for
 * each fetch in plan order. As in Cosmo, a phase's
 * `duration_since_start_nanoseconds` is taken when the phase ends (so it
 * starts at that minus `duration_nanoseconds`; older planner stats name the
 * length `planning_time_nanoseconds`), while a load's is taken when the load
 * starts (its length is `duration_load_nanoseconds`).
 *
 * @example A sequence of a root fetch and an entity fetch
 * ```ts
 * import assert from "node:assert/strict";
 * import { readTrace } from "./trace_model.ts";
 * const model = readTrace({
 *   version: "1",
 *   info: { parse_stats: { duration_nanoseconds: 5, duration_since_start_nanoseconds: 8 } },
 *   fetches: { kind: "Sequence", children: [
 *     { kind: "Single", fetch: { kind: "Single", path: "query", source_name: "products",
 *       trace: { duration_since_start_nanoseconds: 10, duration_load_nanoseconds: 20 } } },
 *     { kind: "Single", fetch: { kind: "Entity", path: "query.topProducts.@", source_name: "reviews",
 *       trace: { duration_since_start_nanoseconds: 30, duration_load_nanoseconds: 15 } } },
 *   ] },
 * });
 * assert.deepEqual(model.waterfall.map((row) => row.label), ["parse", "products", "reviews"]);
 * assert.equal(model.waterfall[0]?.startNs, 3); // parse ended at 8 after 5 ns
 * assert.equal(model.totalNs, 45);
 * assert.equal(model.plan?.kind, "Sequence");
 * ```
 *
 * @param trace The trace object (see {@linkcode findTrace}).
 * @returns The view model.
 */
export function readTrace(
  trace: Readonly<Record<string, unknown>>,
): TraceModel {
  const info = isRecord(trace.info) ? trace.info : {};
  const waterfall: WaterfallRow[] = [];
  const otherInfo: Record<string, unknown> = {};
  const phaseKeys = new Set(PHASES.map((p) => p[1]));
  for (const [key, value] of Object.entries(info)) {
    if (!phaseKeys.has(key)) otherInfo[key] = value;
  }
  for (const [label, key] of PHASES) {
    const stats = info[key];
    if (!isRecord(stats)) continue;
    const endNs = numberOrNull(stats.duration_since_start_nanoseconds);
    const durationNs = numberOrNull(stats.duration_nanoseconds) ??
      numberOrNull(stats.planning_time_nanoseconds);
    waterfall.push({
      type: "phase",
      label,
      fetchIndex: null,
      startNs: endNs === null ? null : Math.max(0, endNs - (durationNs ?? 0)),
      durationNs,
    });
  }
  const fetches: TraceFetch[] = [];
  const plan = readNode(trace.fetches, fetches);
  for (const fetch of fetches) {
    waterfall.push({
      type: "fetch",
      label: fetch.subgraph,
      fetchIndex: fetch.index,
      startNs: fetch.startNs,
      durationNs: fetch.durationNs,
    });
  }
  const ends = waterfall.map((row) => (row.startNs ?? 0) + (row.durationNs ?? 0));
  return {
    version: stringOrNull(trace.version),
    startTime: stringOrNull(info.trace_start_time),
    plan,
    fetches,
    waterfall,
    totalNs: Math.max(1, ...ends),
    info: otherInfo,
    request: trace.request,
  };
}

/**
 * Formats nanoseconds for the time axis and tooltips.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatNanos } from "./trace_model.ts";
 * assert.equal(formatNanos(850), "850 ns");
 * assert.equal(formatNanos(1_500), "1.5 µs");
 * assert.equal(formatNanos(2_345_000), "2.35 ms");
 * assert.equal(formatNanos(null), "n/a");
 * ```
 *
 * @param ns A duration in nanoseconds, or null.
 * @returns A short human-readable duration.
 */
export function formatNanos(ns: number | null): string {
  if (ns === null) return "n/a";
  if (ns < 1_000) return `${Math.round(ns)} ns`;
  const [value, unit] = ns < 1e6 ? [ns / 1e3, "µs"] : ns < 1e9 ? [ns / 1e6, "ms"] : [ns / 1e9, "s"];
  return `${Number(value.toPrecision(3))} ${unit}`;
}
