import assert from "node:assert/strict";
import type { FetchRecord } from "../../lib/engine/types.ts";
import { DEFAULT_UNMASKED_TRACE_HEADERS } from "../../lib/config/mod.ts";
import {
  createTraceRecorder,
  DEFAULT_TRACE_OPTIONS,
  type FetchTreeTraceNode,
  formatDuration,
  maskedHeaderSet,
  type TraceData,
  type TraceOptions,
  type TraceRecorderOptions,
  unmaskedHeaderSet,
} from "../../lib/trace/mod.ts";

// A plan in the engine's shape (STYLE §6(d)): products, then reviews and
// inventory entity fetches in parallel under Flatten nodes.
const productsFetch = {
  kind: "Fetch",
  serviceName: "products",
  variableUsages: [],
  operation: "{topProducts{__typename upc name}}",
};
const reviewsFetch = {
  kind: "Fetch",
  serviceName: "reviews",
  variableUsages: [],
  operation:
    "query($representations:[_Any!]!){_entities(representations:$representations){...on Product{reviews{body}}}}",
  requires: "... on Product { __typename upc }",
};
const inventoryFetch = { ...reviewsFetch, serviceName: "inventory" };
const reviewsFlatten = { kind: "Flatten", path: ["topProducts", "@"], node: reviewsFetch };
const inventoryFlatten = { kind: "Flatten", path: ["topProducts", "@"], node: inventoryFetch };
const PLAN = {
  kind: "QueryPlan",
  node: {
    kind: "Sequence",
    nodes: [productsFetch, { kind: "Parallel", nodes: [reviewsFlatten, inventoryFlatten] }],
  },
};

interface RecordInit {
  node: unknown;
  kind: FetchRecord["kind"];
  subgraph: string;
  path: string;
  port?: number;
  body?: string;
  output?: string;
  rawInputData?: unknown;
  startNs: number;
  endNs: number;
  requestHeaders?: Record<string, string>;
  responseHeaders?: Record<string, string>;
}

function record(init: RecordInit): FetchRecord {
  return {
    node: init.node,
    kind: init.kind,
    subgraph: init.subgraph,
    path: init.path,
    rawInputData: init.rawInputData ?? null,
    request: {
      method: "POST",
      url: `http://127.0.0.1:${init.port ?? 4001}/graphql`,
      headers: new Headers({ "content-type": "application/json", ...init.requestHeaders }),
      body: init.body ?? JSON.stringify({ query: "{topProducts{__typename upc name}}" }),
    },
    response: {
      status: 200,
      headers: new Headers({
        "content-type": "application/json",
        date: "Sun, 22 Nov 2026 04:00:00 GMT",
        ...init.responseHeaders,
      }),
      body: init.output ?? '{"data":{"topProducts":[{"__typename":"Product","upc":"1"}]}}',
    },
    deduplicated: false,
    startNs: init.startNs,
    firstByteNs: init.startNs + 600,
    endNs: init.endNs,
  };
}

function standardRecords(offset = 0, port = 4001): FetchRecord[] {
  const representations = [{ __typename: "Product", upc: "1" }];
  return [
    record({
      node: productsFetch,
      kind: "Single",
      subgraph: "products",
      path: "query",
      port,
      startNs: offset + 10_000,
      endNs: offset + 12_000,
    }),
    record({
      node: reviewsFetch,
      kind: "BatchEntity",
      subgraph: "reviews",
      path: "query.topProducts.@",
      port: port + 1,
      rawInputData: representations,
      body: JSON.stringify({ query: reviewsFetch.operation, variables: { representations } }),
      output: '{"data":{"_entities":[{"reviews":[{"body":"Great"}]}]}}',
      startNs: offset + 13_000,
      endNs: offset + 15_000,
    }),
    record({
      node: inventoryFlatten,
      kind: "Entity",
      subgraph: "inventory",
      path: "query.topProducts.@",
      port: port + 2,
      rawInputData: [representations[0]],
      body: JSON.stringify({ query: inventoryFetch.operation, variables: { representations } }),
      output: '{"data":{"_entities":[{"inStock":true}]}}',
      startNs: offset + 13_100,
      endNs: offset + 14_000,
    }),
  ];
}

/** The default allowlist (`engine.request_tracing_unmasked_headers`). */
const UNMASKED = unmaskedHeaderSet(DEFAULT_UNMASKED_TRACE_HEADERS);

interface RunOptions {
  options?: Partial<TraceOptions>;
  offset?: number;
  port?: number;
  startedAt?: Date;
  masked?: string[];
  inboundHeaders?: Record<string, string>;
  records?: FetchRecord[];
  plan?: unknown;
}

function run(run: RunOptions = {}): TraceData {
  const offset = run.offset ?? 0;
  const config: TraceRecorderOptions = {
    options: { ...DEFAULT_TRACE_OPTIONS, ...run.options },
    now: () => offset + 1_000,
    startedAt: run.startedAt ?? new Date("2026-11-22T04:00:00.250Z"),
    routerVersion: "0.43.0",
    maskedHeaders: maskedHeaderSet(run.masked ?? []),
    unmaskedHeaders: UNMASKED,
    singleFlight: true,
    request: {
      method: "POST",
      url: `http://127.0.0.1:${run.port ?? 3002}/graphql`,
      headers: new Headers({ "content-type": "application/json", ...run.inboundHeaders }),
    },
  };
  const recorder = createTraceRecorder(config);
  const { observer } = recorder;
  observer.stage("parse", offset + 1_000, offset + 2_000);
  observer.stage("normalize", offset + 2_000, offset + 2_500);
  observer.stage("validate", offset + 2_500, offset + 4_000);
  observer.stage("plan", offset + 4_000, offset + 9_000);
  if (run.plan !== null) observer.plan(run.plan ?? PLAN, { cached: false });
  for (const item of run.records ?? standardRecords(offset, 4001 + (run.port ?? 3002) - 3002)) {
    observer.fetch(item);
  }
  return recorder.finish({ query: "{topProducts{name reviews{body} inStock}}" });
}

function singles(node: FetchTreeTraceNode | null | undefined): FetchTreeTraceNode[] {
  if (!node) return [];
  return node.fetch ? [node] : (node.children ?? []).flatMap(singles);
}

function loads(node: FetchTreeTraceNode | null): Record<string, unknown>[] {
  if (node === null) return [];
  const own = node.fetch
    ? [...(node.fetch.trace ? [node.fetch.trace] : []), ...(node.fetch.traces ?? [])]
    : [];
  return [...own, ...(node.children ?? []).flatMap(loads)] as unknown as Record<string, unknown>[];
}

Deno.test("spec 1: the fetch tree follows the plan: Sequence, Parallel and Single nodes", () => {
  const trace = run();
  const shape = (node: FetchTreeTraceNode): unknown =>
    node.fetch
      ? [node.kind, node.fetch.kind, node.fetch.source_name, node.fetch.path]
      : [node.kind, (node.children ?? []).map(shape)];
  assert.deepEqual(shape(trace.fetches!), [
    "Sequence",
    [
      ["Single", "Single", "products", "query"],
      ["Parallel", [
        ["Single", "BatchEntity", "reviews", "query.topProducts.@"],
        ["Single", "Entity", "inventory", "query.topProducts.@"],
      ]],
    ],
  ]);
});

Deno.test("spec 1: info carries version, start time, stage stats and the plan-cache flag", () => {
  const trace = run();
  assert.equal(trace.version, "1");
  assert.deepEqual(trace.info, {
    trace_start_time: "2026-11-22T04:00:00Z",
    trace_start_unix: 1795320000,
    parse_stats: {
      duration_nanoseconds: 1000,
      duration_pretty: "1µs",
      duration_since_start_nanoseconds: 1000,
      duration_since_start_pretty: "1µs",
    },
    normalize_stats: {
      duration_nanoseconds: 500,
      duration_pretty: "500ns",
      duration_since_start_nanoseconds: 1500,
      duration_since_start_pretty: "1.5µs",
    },
    validate_stats: {
      duration_nanoseconds: 1500,
      duration_pretty: "1.5µs",
      duration_since_start_nanoseconds: 3000,
      duration_since_start_pretty: "3µs",
    },
    planner_stats: {
      duration_nanoseconds: 5000,
      duration_pretty: "5µs",
      duration_since_start_nanoseconds: 8000,
      duration_since_start_pretty: "8µs",
    },
    router_version: "0.43.0",
    plan_cache_hit: false,
  });
});

Deno.test("spec 1: a load shows its raw input, rendered input, output and timings", () => {
  const reviews = run().fetches!.children![1]!.children![0]!.fetch!;
  assert.equal(reviews.source_id, "reviews");
  const load = reviews.trace!;
  assert.deepEqual(load.raw_input_data, [{ __typename: "Product", upc: "1" }]);
  assert.deepEqual(load.input, {
    method: "POST",
    url: "http://127.0.0.1:4002/graphql",
    header: { "Content-Type": ["application/json"] },
    body: {
      query: reviewsFetch.operation,
      variables: { representations: [{ __typename: "Product", upc: "1" }] },
    },
  });
  assert.deepEqual(load.output, {
    data: { _entities: [{ reviews: [{ body: "Great" }] }] },
    extensions: {
      trace: {
        request: {
          method: "POST",
          url: "http://127.0.0.1:4002/graphql",
          headers: { "Content-Type": ["application/json"] },
        },
        response: {
          status_code: 200,
          status: "200 OK",
          headers: {
            "Content-Type": ["application/json"],
            Date: ["****"], // not in request_tracing_unmasked_headers
          },
          body_size: 55,
        },
      },
    },
  });
  assert.equal(load.duration_since_start_nanoseconds, 12_000);
  assert.equal(load.duration_since_start_pretty, "12µs");
  assert.equal(load.duration_load_nanoseconds, 2_000);
  assert.equal(load.duration_load_pretty, "2µs");
  assert.equal(load.single_flight_used, true);
  assert.equal(load.single_flight_shared_response, false);
  assert.equal(load.load_skipped, false);
  assert.equal(load.load_stats?.get_conn.host_port, "127.0.0.1:4002");
  assert.equal(load.load_stats?.get_conn.duration_since_start_nanoseconds, 12_000);
  assert.equal(load.load_stats?.got_first_response_byte.duration_since_start_nanoseconds, 12_600);
  assert.equal(load.load_stats?.dns_start.duration_since_start_nanoseconds, 0);
});

Deno.test("spec 1: the inbound request is in the trace with its GraphQL body", () => {
  assert.deepEqual(run().request, {
    method: "POST",
    url: "http://127.0.0.1:3002/graphql",
    headers: { "Content-Type": ["application/json"] },
    body: { query: "{topProducts{name reviews{body} inStock}}" },
  });
});

Deno.test("spec 5.6: each exclude option removes exactly its part", () => {
  const full = run();
  const cases: [keyof TraceOptions, (trace: TraceData) => void][] = [
    ["excludeParseStats", (t) => delete t.info.parse_stats],
    ["excludeNormalizeStats", (t) => delete t.info.normalize_stats],
    ["excludeValidateStats", (t) => delete t.info.validate_stats],
    ["excludePlannerStats", (t) => delete t.info.planner_stats],
    ["excludeRawInputData", (t) => loads(t.fetches).forEach((l) => delete l.raw_input_data)],
    ["excludeInput", (t) => loads(t.fetches).forEach((l) => delete l.input)],
    ["excludeOutput", (t) => loads(t.fetches).forEach((l) => delete l.output)],
    ["excludeLoadStats", (t) =>
      loads(t.fetches).forEach((l) => {
        delete l.duration_since_start_nanoseconds;
        delete l.duration_since_start_pretty;
        delete l.duration_load_nanoseconds;
        delete l.duration_load_pretty;
        delete l.load_stats;
      })],
  ];
  for (const [option, remove] of cases) {
    const expected = structuredClone(full);
    remove(expected);
    assert.notDeepEqual(expected, full, `${option} must remove something`);
    assert.deepEqual(run({ options: { [option]: true } }), expected, option);
  }
});

Deno.test("spec 5.6: predictable timings make identical requests give byte-identical traces", () => {
  const predictable = { enablePredictableDebugTimings: true };
  const first = JSON.stringify(
    run({ options: predictable, inboundHeaders: { host: "127.0.0.1:3002" } }),
  );
  const second = JSON.stringify(
    run({
      options: predictable,
      offset: 987_654_321,
      port: 3999,
      inboundHeaders: { host: "127.0.0.1:3999" },
      startedAt: new Date("2030-01-01T00:00:00Z"),
    }),
  );
  assert.equal(first, second);
  const trace = JSON.parse(first) as TraceData;
  assert.equal(trace.info.trace_start_time, "");
  assert.equal(trace.info.trace_start_unix, 0);
  assert.equal(trace.info.parse_stats?.duration_nanoseconds, 5);
  assert.equal(trace.info.planner_stats?.duration_since_start_nanoseconds, 20);
  for (const load of loads(trace.fetches)) {
    assert.equal(load.duration_load_nanoseconds, 1);
    assert.equal(load.duration_since_start_nanoseconds, 1);
    assert.equal((load.input as { url: string }).url, "http://127.0.0.1/graphql");
  }
  assert.ok(!first.includes("Date"), "Date headers are dropped");
  assert.ok(!first.includes("127.0.0.1:"), "ports are blanked");
});

Deno.test("spec 5.5: credentials are masked on the inbound request and on subgraph requests and responses", () => {
  const records = standardRecords().map((item) =>
    record({
      node: item.node,
      kind: item.kind,
      subgraph: item.subgraph,
      path: item.path,
      startNs: item.startNs,
      endNs: item.endNs,
      requestHeaders: { authorization: "Bearer sub-secret-1", "x-api-key": "sub-secret-2" },
      responseHeaders: {
        "set-cookie": "session=sub-secret-3",
        "www-authenticate": 'Bearer realm="sub-secret-4"',
      },
    })
  );
  const trace = run({
    records,
    masked: ["X-Api-Key"],
    inboundHeaders: {
      authorization: "Bearer in-secret-1",
      cookie: "a=in-secret-2",
      "proxy-authorization": "Basic in-secret-3",
      "x-gw-token": "in-secret-4",
      "x-api-key": "in-secret-5",
    },
  });
  const text = JSON.stringify(trace);
  assert.doesNotMatch(text, /secret/);
  assert.deepEqual(trace.request?.headers, {
    Authorization: ["****"],
    "Content-Type": ["application/json"],
    Cookie: ["****"],
    "Proxy-Authorization": ["****"],
    "X-Api-Key": ["****"],
    "X-Gw-Token": ["****"],
  });
  const load = loads(trace.fetches)[0] as {
    input: { header: Record<string, string[]> };
    output: { extensions: { trace: { response: { headers: Record<string, string[]> } } } };
  };
  assert.deepEqual(load.input.header.Authorization, ["****"]);
  assert.deepEqual(load.input.header["X-Api-Key"], ["****"]);
  assert.deepEqual(load.output.extensions.trace.response.headers["Set-Cookie"], ["****"]);
  assert.deepEqual(load.output.extensions.trace.response.headers["Www-Authenticate"], ["****"]);
});

Deno.test("spec 1: a planned fetch that did not run is shown as skipped", () => {
  const trace = run({ records: standardRecords().slice(0, 2) });
  const inventory = trace.fetches!.children![1]!.children![1]!.fetch!;
  assert.equal(inventory.kind, "Entity");
  assert.equal(inventory.source_name, "inventory");
  assert.equal(inventory.path, "query.topProducts.@");
  assert.deepEqual(inventory.trace, {
    single_flight_used: true,
    single_flight_shared_response: false,
    load_skipped: true,
  });
});

Deno.test("spec 1: a fetch that ran several times lists its loads in a stable order", () => {
  const base = standardRecords();
  const again = (body: string, startNs: number) =>
    record({
      node: reviewsFetch,
      kind: "Entity",
      subgraph: "reviews",
      path: "query.topProducts.@",
      body,
      startNs,
      endNs: startNs + 100,
    });
  const a = run({ records: [base[0]!, again('{"b":2}', 20_000), again('{"a":1}', 30_000)] });
  const b = run({ records: [base[0]!, again('{"a":1}', 30_000), again('{"b":2}', 20_000)] });
  const reviews = a.fetches!.children![1]!.children![0]!.fetch!;
  assert.equal(reviews.trace, undefined);
  assert.deepEqual(reviews.traces?.map((t) => t.input?.body), [{ a: 1 }, { b: 2 }]);
  assert.deepEqual(a, b);
});

Deno.test("spec 1: a failed load carries its error and no output", () => {
  const failed: FetchRecord = { ...standardRecords()[0]!, error: "Connection refused" };
  delete (failed as { response?: unknown }).response;
  const load = run({ records: [failed] }).fetches!.children![0]!.fetch!.trace!;
  assert.equal(load.error, "Connection refused");
  assert.equal(load.output, undefined);
});

Deno.test("spec 1: loads that match no plan node still appear", () => {
  const stray = record({
    node: {},
    kind: "Single",
    subgraph: "accounts",
    path: "query",
    startNs: 1,
    endNs: 2,
  });
  const trace = run({ records: [...standardRecords(), stray] });
  const last = trace.fetches!.children!.at(-1)!;
  assert.equal(last.fetch?.source_name, "accounts");
});

Deno.test("spec 2.8: a request that never planned has fetches null and no plan-cache flag", () => {
  const recorder = createTraceRecorder({
    options: DEFAULT_TRACE_OPTIONS,
    now: () => 0,
    startedAt: new Date(0),
    routerVersion: "0.43.0",
    maskedHeaders: maskedHeaderSet(),
    unmaskedHeaders: UNMASKED,
    singleFlight: false,
  });
  recorder.observer.stage("parse", 0, 10);
  const trace = recorder.finish();
  assert.equal(trace.fetches, null);
  assert.equal(trace.info.plan_cache_hit, undefined);
  assert.equal(trace.request, undefined);
  // Stages that never ran still have their (zero) entry.
  assert.equal(trace.info.planner_stats?.duration_nanoseconds, 0);
});

Deno.test("spec 1: raw input data is a snapshot taken when the load settled", () => {
  const raw = { __typename: "Product", upc: "1" };
  const item = record({
    node: productsFetch,
    kind: "Single",
    subgraph: "products",
    path: "query",
    rawInputData: raw,
    startNs: 1,
    endNs: 2,
  });
  const recorder = createTraceRecorder({
    options: DEFAULT_TRACE_OPTIONS,
    now: () => 0,
    startedAt: new Date(0),
    routerVersion: "0.43.0",
    maskedHeaders: maskedHeaderSet(),
    unmaskedHeaders: UNMASKED,
    singleFlight: false,
  });
  recorder.observer.plan(PLAN, { cached: true });
  recorder.observer.fetch(item);
  (raw as Record<string, unknown>).name = "merged later";
  const trace = recorder.finish();
  assert.deepEqual(trace.fetches!.children![0]!.fetch!.trace!.raw_input_data, {
    __typename: "Product",
    upc: "1",
  });
  assert.equal(trace.info.plan_cache_hit, true);
});

Deno.test("spec 1: durations are printed like Go's time.Duration", () => {
  const cases: [number, string][] = [
    [0, "0s"],
    [1, "1ns"],
    [999, "999ns"],
    [1_000, "1µs"],
    [1_234_567, "1.234567ms"],
    [1e9, "1s"],
    [61.5e9, "1m1.5s"],
    [7_265e9, "2h1m5s"],
    [-1_500, "-1.5µs"],
  ];
  for (const [ns, text] of cases) assert.equal(formatDuration(ns), text);
});

Deno.test("spec 1: a one-fetch plan sits under a Sequence root, like Cosmo's fetch tree", () => {
  const mutationFetch = { ...productsFetch, operationKind: "mutation" };
  const trace = run({ plan: { kind: "QueryPlan", node: mutationFetch }, records: [] });
  assert.deepEqual(trace.fetches, {
    kind: "Sequence",
    children: [{
      kind: "Single",
      fetch: {
        kind: "Single",
        path: "mutation",
        source_id: "products",
        source_name: "products",
        trace: {
          single_flight_used: true,
          single_flight_shared_response: false,
          load_skipped: true,
        },
      },
    }],
  });
});

Deno.test("spec 1: fetches under plan nodes the recorder does not know still appear", () => {
  const plan = {
    kind: "QueryPlan",
    node: { kind: "Condition", condition: "flag", ifClause: null, nodes: [productsFetch] },
  };
  const trace = run({ plan, records: standardRecords().slice(0, 1) });
  assert.equal(trace.fetches?.children?.[0]?.fetch?.source_name, "products");
  assert.equal(trace.fetches?.children?.length, 1);
});

Deno.test("spec 1: raw input data takes Cosmo's shapes: {} for roots, the object for Entity, the list for BatchEntity", () => {
  const [root, batch, entity] = singles(run().fetches).map((n) => n.fetch!.trace!.raw_input_data);
  assert.deepEqual(root, {});
  assert.deepEqual(batch, [{ __typename: "Product", upc: "1" }]);
  assert.deepEqual(entity, { __typename: "Product", upc: "1" });
});
