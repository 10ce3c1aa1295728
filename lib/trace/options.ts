/**
 * The ART request options: header `X-GW-Trace` (any case, repeated lines) or
 * query parameter `gw_trace` (which wins when both are present).
 *
 * @module
 */

/** Per-request trace options (spec §5.6 plus Cosmo's three phase extras). */
export interface TraceOptions {
  readonly excludeParseStats: boolean;
  readonly excludeNormalizeStats: boolean;
  readonly excludeValidateStats: boolean;
  readonly excludePlannerStats: boolean;
  readonly excludeRawInputData: boolean;
  readonly excludeInput: boolean;
  readonly excludeOutput: boolean;
  readonly excludeLoadStats: boolean;
  readonly enablePredictableDebugTimings: boolean;
}

/** The request header that asks for a trace. */
export const TRACE_HEADER = "x-gw-trace";
/** The query parameter that asks for a trace. */
export const TRACE_QUERY_PARAMETER = "gw_trace";

const OPTION_FIELDS: Readonly<Record<string, keyof TraceOptions>> = {
  exclude_parse_stats: "excludeParseStats",
  exclude_normalize_stats: "excludeNormalizeStats",
  exclude_validate_stats: "excludeValidateStats",
  exclude_planner_stats: "excludePlannerStats",
  exclude_raw_input_data: "excludeRawInputData",
  exclude_input: "excludeInput",
  exclude_output: "excludeOutput",
  exclude_load_stats: "excludeLoadStats",
  enable_predictable_debug_timings: "enablePredictableDebugTimings",
};

/** Every option name a request may give (`true` aside). */
export const TRACE_OPTION_NAMES: readonly string[] = Object.freeze(Object.keys(OPTION_FIELDS));

/** The options of a plain `true`: everything included, real timings. */
export const DEFAULT_TRACE_OPTIONS: TraceOptions = Object.freeze({
  excludeParseStats: false,
  excludeNormalizeStats: false,
  excludeValidateStats: false,
  excludePlannerStats: false,
  excludeRawInputData: false,
  excludeInput: false,
  excludeOutput: false,
  excludeLoadStats: false,
  enablePredictableDebugTimings: false,
});

/**
 * Parses one trace value: `true` or a comma-separated option list (names are
 * matched case-insensitively; unknown names are ignored). An empty value or
 * `false` means "not requested".
 *
 * @example Options from a list
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTraceValue } from "./options.ts";
 * const options = parseTraceValue("exclude_output, enable_predictable_debug_timings, bogus");
 * assert.equal(options?.excludeOutput, true);
 * assert.equal(options?.enablePredictableDebugTimings, true);
 * assert.equal(options?.excludeInput, false);
 * assert.equal(parseTraceValue("false"), null);
 * ```
 *
 * @param value The header or query value.
 * @returns The options, or null when tracing is not requested.
 */
export function parseTraceValue(value: string): TraceOptions | null {
  const names = value.split(",").map((part) => part.trim().toLowerCase()).filter((part) =>
    part !== ""
  );
  if (names.length === 0 || names.every((name) => name === "false")) return null;
  const options: Record<keyof TraceOptions, boolean> = { ...DEFAULT_TRACE_OPTIONS };
  for (const name of names) {
    const field = OPTION_FIELDS[name];
    if (field !== undefined) options[field] = true;
  }
  return options;
}

/**
 * Reads the trace request of an HTTP request: the `gw_trace` query parameter
 * when present (repeated parameters are joined), else the `X-GW-Trace` header
 * (any case; repeated lines are joined by `Headers` with commas, so they split
 * like one list).
 *
 * @example Query wins over header
 * ```ts
 * import assert from "node:assert/strict";
 * import { readTraceOptions } from "./options.ts";
 * const headers = new Headers({ "X-GW-TRACE": "exclude_input" });
 * const fromQuery = readTraceOptions(headers, "http://r/graphql?gw_trace=exclude_output");
 * assert.equal(fromQuery?.excludeOutput, true);
 * assert.equal(fromQuery?.excludeInput, false);
 * assert.equal(readTraceOptions(new Headers(), "http://r/graphql"), null);
 * ```
 *
 * @param headers The request headers.
 * @param url The request URL.
 * @returns The options, or null when tracing is not requested.
 */
export function readTraceOptions(headers: Headers, url: string): TraceOptions | null {
  // Cheap pre-check: most requests carry neither form, so skip URL parsing.
  if (url.includes(TRACE_QUERY_PARAMETER)) {
    const values = new URL(url).searchParams.getAll(TRACE_QUERY_PARAMETER);
    if (values.length > 0) return parseTraceValue(values.join(","));
  }
  const header = headers.get(TRACE_HEADER);
  return header === null ? null : parseTraceValue(header);
}
