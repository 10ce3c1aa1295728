import assert from "node:assert/strict";
import {
  DEFAULT_TRACE_OPTIONS,
  parseTraceValue,
  readTraceOptions,
  TRACE_OPTION_NAMES,
  type TraceOptions,
} from "../../lib/trace/mod.ts";

const URL_PLAIN = "http://127.0.0.1:3002/graphql";

Deno.test("spec 5.6: without X-GW-Trace and gw_trace tracing stays off", () => {
  assert.equal(readTraceOptions(new Headers({ accept: "application/json" }), URL_PLAIN), null);
});

Deno.test("spec 5.6: X-GW-Trace: true turns tracing on with every part included", () => {
  assert.deepEqual(
    readTraceOptions(new Headers({ "X-GW-Trace": "true" }), URL_PLAIN),
    DEFAULT_TRACE_OPTIONS,
  );
});

Deno.test("spec 5.6: the header name matches in any case (the playground sends X-GW-TRACE)", () => {
  for (const name of ["X-GW-TRACE", "x-gw-trace", "X-Gw-Trace"]) {
    assert.deepEqual(
      readTraceOptions(new Headers({ [name]: "true" }), URL_PLAIN),
      DEFAULT_TRACE_OPTIONS,
    );
  }
});

Deno.test("spec 5.6: each option of the list sets exactly its own flag", () => {
  const fields: Record<string, keyof TraceOptions> = {
    exclude_planner_stats: "excludePlannerStats",
    exclude_raw_input_data: "excludeRawInputData",
    exclude_input: "excludeInput",
    exclude_output: "excludeOutput",
    exclude_load_stats: "excludeLoadStats",
    enable_predictable_debug_timings: "enablePredictableDebugTimings",
    exclude_parse_stats: "excludeParseStats",
    exclude_normalize_stats: "excludeNormalizeStats",
    exclude_validate_stats: "excludeValidateStats",
  };
  assert.deepEqual([...TRACE_OPTION_NAMES].sort(), Object.keys(fields).sort());
  for (const [name, field] of Object.entries(fields)) {
    assert.deepEqual(parseTraceValue(name), { ...DEFAULT_TRACE_OPTIONS, [field]: true }, name);
  }
});

Deno.test("spec 5.6: a comma-separated list sets several options, spaces and case ignored", () => {
  assert.deepEqual(parseTraceValue(" exclude_input ,EXCLUDE_OUTPUT,,exclude_load_stats "), {
    ...DEFAULT_TRACE_OPTIONS,
    excludeInput: true,
    excludeOutput: true,
    excludeLoadStats: true,
  });
});

Deno.test("DESIGN §3: options split across repeated X-GW-Trace lines add up", () => {
  const headers = new Headers();
  headers.append("X-GW-Trace", "exclude_input");
  headers.append("x-gw-trace", "enable_predictable_debug_timings");
  assert.deepEqual(readTraceOptions(headers, URL_PLAIN), {
    ...DEFAULT_TRACE_OPTIONS,
    excludeInput: true,
    enablePredictableDebugTimings: true,
  });
});

Deno.test("spec 5.6: unknown options are ignored and tracing stays on", () => {
  assert.deepEqual(parseTraceValue("exclude_everything,exclude_output"), {
    ...DEFAULT_TRACE_OPTIONS,
    excludeOutput: true,
  });
  assert.deepEqual(parseTraceValue("bogus"), DEFAULT_TRACE_OPTIONS);
});

Deno.test("spec 5.6: an empty value or false does not turn tracing on", () => {
  assert.equal(parseTraceValue(""), null);
  assert.equal(parseTraceValue(" , "), null);
  assert.equal(parseTraceValue("false"), null);
});

Deno.test("spec 4.4: gw_trace=<list> in the query turns tracing on", () => {
  assert.deepEqual(
    readTraceOptions(new Headers(), `${URL_PLAIN}?gw_trace=exclude_input,exclude_output`),
    {
      ...DEFAULT_TRACE_OPTIONS,
      excludeInput: true,
      excludeOutput: true,
    },
  );
});

Deno.test("DESIGN §3: the query parameter wins when both forms are present", () => {
  const headers = new Headers({ "X-GW-Trace": "exclude_input" });
  assert.deepEqual(readTraceOptions(headers, `${URL_PLAIN}?gw_trace=exclude_output`), {
    ...DEFAULT_TRACE_OPTIONS,
    excludeOutput: true,
  });
  assert.equal(readTraceOptions(headers, `${URL_PLAIN}?gw_trace=false`), null);
});

Deno.test("spec 5.6: a query string without gw_trace leaves the header in charge", () => {
  const headers = new Headers({ "X-GW-Trace": "exclude_input" });
  assert.equal(
    readTraceOptions(headers, `${URL_PLAIN}?query={a}&not_gw_trace_x=1`)?.excludeInput,
    true,
  );
});
