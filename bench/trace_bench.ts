/**
 * What ART costs. `deno bench -A bench/trace_bench.ts`
 *
 * - `art-http`: the same federated query (products → reviews + inventory
 *   batch-entity fetches) over HTTP through a real router: ART disabled
 *   (`ENGINE_ENABLE_REQUEST_TRACING=false`), ART enabled but not requested
 *   (the production default: "tracing off in the current code"), and tracing
 *   requested (`X-GW-Trace: true`, dev mode).
 * - `art-gate`: the per-request gate alone, no sockets: `startTrace` for a
 *   request without trace header or query parameter (the off path: one header
 *   look-up and one substring test; the engine gets no observer, so nothing
 *   is timed or copied) against a bare awaited promise.
 */
import { serveSubgraph } from "../demo/subgraph.ts";
import { composeSupergraph, formatCompositionError } from "../lib/compose/mod.ts";
import { startRouter } from "../lib/cli/serve.ts";
import { parseConfig } from "../lib/config/mod.ts";
import { silentLogger } from "../lib/log/mod.ts";
import {
  buildTraceState,
  createTraceRecorder,
  DEFAULT_TRACE_OPTIONS,
  startTrace,
} from "../lib/trace/mod.ts";

let _sink: unknown;

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])';
const subgraphs = [
  serveSubgraph("products", {
    typeDefs: `${LINK}
type Query { topProducts: [Product!]! }
type Product @key(fields: "upc") { upc: String! name: String! }`,
    resolvers: {
      Query: {
        topProducts: () =>
          Array.from({ length: 10 }, (_, i) => ({ upc: String(i), name: `Product ${i}` })),
      },
    },
  }),
  serveSubgraph("reviews", {
    typeDefs: `${LINK}
type Product @key(fields: "upc") { upc: String! reviews: [Review!]! }
type Review { body: String! }`,
    resolvers: {
      Product: {
        __resolveReference: (ref: { upc: string }) => ref,
        reviews: (p: { upc: string }) => [{ body: `Review of ${p.upc}` }],
      },
    },
  }),
  serveSubgraph("inventory", {
    typeDefs: `${LINK}
type Product @key(fields: "upc") { upc: String! inStock: Boolean! }`,
    resolvers: {
      Product: { __resolveReference: (ref: { upc: string }) => ({ ...ref, inStock: true }) },
    },
  }),
];
const composed = composeSupergraph(subgraphs);
if (!composed.ok) throw new Error(composed.errors.map(formatCompositionError).join("\n"));
const { supergraphSdl } = composed;

function routerWith(env: Record<string, string>) {
  const config = parseConfig({
    listen_addr: "127.0.0.1:0",
    operations_dir: "/nonexistent-operations",
    mcp: { enabled: false },
    connect_rpc: { enabled: false },
    playground: { enabled: false },
  }, { env });
  return startRouter({ config, supergraphSdl, log: silentLogger });
}

const enabled = await routerWith({ DEV_MODE: "true" });
const disabled = await routerWith({ ENGINE_ENABLE_REQUEST_TRACING: "false" });

const BODY = JSON.stringify({ query: "{ topProducts { upc name reviews { body } inStock } }" });

async function send(url: string, headers: Record<string, string> = {}): Promise<unknown> {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...headers },
    body: BODY,
  });
  const body = await response.json();
  if (body.data === undefined) throw new Error(`Query failed: ${JSON.stringify(body)}`);
  return body;
}

// Warm the plan caches outside the timed code.
await send(enabled.url);
await send(disabled.url);

Deno.bench("http: ART disabled (ENGINE_ENABLE_REQUEST_TRACING=false)", {
  group: "art-http",
  baseline: true,
}, async () => {
  _sink = await send(disabled.url);
});

Deno.bench("http: ART enabled, not requested (tracing off)", { group: "art-http" }, async () => {
  _sink = await send(enabled.url);
});

Deno.bench("http: tracing requested (X-GW-Trace: true)", { group: "art-http" }, async () => {
  _sink = await send(enabled.url, { "X-GW-Trace": "true" });
});

const gateState = await buildTraceState(parseConfig({}), null);
const plainRequest = new Request("http://127.0.0.1:3002/graphql", {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json" },
});

Deno.bench("gate: awaited no-op (reference)", { group: "art-gate", baseline: true }, async () => {
  _sink = await Promise.resolve(plainRequest);
});

Deno.bench("gate: startTrace without X-GW-Trace (off path)", { group: "art-gate" }, async () => {
  _sink = await startTrace(plainRequest, gateState);
});

// What a traced request adds inside the router: record 3 loads, render, serialize.
const traceOptions = { ...DEFAULT_TRACE_OPTIONS };
const fetchNode = { kind: "Fetch", serviceName: "products", operation: "{topProducts{upc}}" };
const record = {
  node: fetchNode,
  kind: "Single" as const,
  subgraph: "products",
  path: "query",
  rawInputData: null,
  request: {
    method: "POST",
    url: "http://127.0.0.1:4001/graphql",
    headers: new Headers({ "content-type": "application/json" }),
    body: '{"query":"{topProducts{upc}}","variables":{}}',
  },
  response: {
    status: 200,
    headers: new Headers({ "content-type": "application/json" }),
    body: JSON.stringify({
      data: { topProducts: Array.from({ length: 10 }, (_, i) => ({ upc: `${i}` })) },
    }),
  },
  deduplicated: false,
  startNs: 10,
  firstByteNs: 20,
  endNs: 30,
};
const fetchNodes = [fetchNode, { ...fetchNode }, { ...fetchNode }];
const plan = { kind: "QueryPlan", node: { kind: "Sequence", nodes: fetchNodes } };

Deno.bench(
  "recorder: 4 stages + 3 loads, finish and JSON.stringify",
  { group: "art-recorder" },
  () => {
    const recorder = createTraceRecorder({
      options: traceOptions,
      now: () => 0,
      startedAt: new Date(0),
      routerVersion: "0.43.0",
      maskedHeaders: gateState.maskedHeaders,
      unmaskedHeaders: gateState.unmaskedHeaders,
      singleFlight: true,
      request: plainRequest,
    });
    const { observer } = recorder;
    observer.stage("parse", 0, 1);
    observer.stage("normalize", 1, 2);
    observer.stage("validate", 2, 3);
    observer.stage("plan", 3, 4);
    observer.plan(plan, { cached: true });
    for (const node of fetchNodes) observer.fetch({ ...record, node });
    _sink = JSON.stringify(recorder.finish({ query: "{topProducts{upc}}" }));
  },
);

// Close everything once the benchmarks are done (deno bench runs them in order).
Deno.bench("teardown", { group: "zz-teardown", n: 1, warmup: 0 }, async () => {
  await Promise.all([enabled.shutdown(), disabled.shutdown(), ...subgraphs.map((s) => s.close())]);
});
