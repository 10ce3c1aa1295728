/**
 * Issue 16: the per-request cost of the telemetry at the HTTP edge, in one
 * process and one run: a federated query (a root fetch and an entity fetch,
 * answered in-process) through `createHandler`, with no telemetry at all
 * (the code before issue 16), telemetry off, metrics, metrics + access log,
 * and metrics + tracing at 1 % and 100 % (spans serialized to OTLP protobuf
 * and handed to a fetch that drops them). The load-level figures come from
 * `bench/telemetry_load.sh`.
 *
 * Run: `deno bench -A bench/telemetry_bench.ts` (wall time per request), or
 * `deno run -A bench/telemetry_bench.ts [rounds] [requests]`: the process's
 * CPU time per request, variants interleaved round by round, median of the
 * rounds. CPU time barely moves with other processes on a shared machine;
 * wall time does.
 */
import process from "node:process";
import { composeSupergraph } from "../lib/compose/mod.ts";
import { parseConfig } from "../lib/config/mod.ts";
import { createHandler } from "../lib/http/mod.ts";
import { createLogger, silentLogger } from "../lib/log/mod.ts";
import { buildState } from "../lib/state/mod.ts";
import {
  createOtelTracer,
  createRouterMetrics,
  createTelemetry,
  type Telemetry,
} from "../lib/telemetry/mod.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';
const composed = composeSupergraph([
  {
    name: "products",
    url: "http://products.invalid/graphql",
    sdl: `${LINK}
type Query { topProducts: [Product!]! }
type Product @key(fields: "upc") { upc: ID! name: String! price: Int! }`,
  },
  {
    name: "reviews",
    url: "http://reviews.invalid/graphql",
    sdl: `${LINK}
type Product @key(fields: "upc") { upc: ID! reviews: [Review!]! }
type Review { id: ID! body: String! }`,
  },
]);
if (!composed.ok) throw new Error("bench supergraph does not compose");

const PRODUCTS = JSON.stringify({
  data: {
    topProducts: Array.from({ length: 5 }, (_, i) => ({
      __typename: "Product",
      upc: `p${i}`,
      name: `Product ${i}`,
      price: 10 * i,
    })),
  },
});
const REVIEWS = JSON.stringify({
  data: {
    _entities: Array.from({ length: 5 }, (_, i) => ({
      reviews: [{ id: `r${i}`, body: `Review ${i}` }, { id: `s${i}`, body: `Other ${i}` }],
    })),
  },
});
// deno-lint-ignore require-await
async function subgraphs(request: Request): Promise<Response> {
  return new Response(request.url.startsWith("http://products") ? PRODUCTS : REVIEWS, {
    headers: { "content-type": "application/json" },
  });
}

const QUERY = JSON.stringify({
  query: "query Top { topProducts { upc name price reviews { id body } } }",
});

async function handlerWith(telemetry: Telemetry | undefined) {
  const state = await buildState({
    config: parseConfig({ engine: { max_concurrent_operations: 0 } }),
    log: silentLogger,
    supergraphSdl: composed.ok ? composed.supergraphSdl : "",
    operationFiles: [],
    traceKeyPem: null,
    fetch: subgraphs,
    ...(telemetry ? { telemetry } : {}),
  });
  return createHandler(() => state);
}

let exported = 0;
function tracer(samplingRate: number) {
  return createOtelTracer({
    serviceName: "bench",
    serviceVersion: "0",
    samplingRate,
    exporters: [{
      url: "http://sink.invalid/v1/traces",
      headers: {},
      batchTimeoutMs: 200,
      exportTimeoutMs: 1000,
      fetch: (_url, init) => {
        exported += (init.body as Uint8Array).byteLength;
        return Promise.resolve(new Response(null, { status: 200 }));
      },
    }],
  });
}

const discard = createLogger({ level: "info", write: () => {} });
const variants: [string, Telemetry | undefined][] = [
  ["no telemetry (before issue 16)", undefined],
  [
    "telemetry off",
    createTelemetry({ metrics: null, log: () => silentLogger, accessLogs: () => false }),
  ],
  [
    "metrics",
    createTelemetry({
      metrics: createRouterMetrics(),
      log: () => silentLogger,
      accessLogs: () => false,
    }),
  ],
  [
    "metrics + access log",
    createTelemetry({ metrics: createRouterMetrics(), log: () => discard, accessLogs: () => true }),
  ],
  [
    "metrics + tracing 1 %",
    createTelemetry({
      metrics: createRouterMetrics(),
      log: () => silentLogger,
      accessLogs: () => false,
      tracer: tracer(0.01),
    }),
  ],
  [
    "metrics + tracing 100 %",
    createTelemetry({
      metrics: createRouterMetrics(),
      log: () => silentLogger,
      accessLogs: () => false,
      tracer: tracer(1),
    }),
  ],
];

let _sink: unknown;

/** CPU microseconds per request of `count` sequential requests. */
async function cpuPerRequest(handle: (r: Request) => Promise<Response>, count: number) {
  const start = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const response = await handle(
      new Request("http://router.bench/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: QUERY,
      }),
    );
    _sink = await response.arrayBuffer();
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / count;
}

if (import.meta.main && !Deno.args.includes("--bench")) {
  const rounds = Number(Deno.args[0] ?? 7);
  const count = Number(Deno.args[1] ?? 2000);
  const handles = await Promise.all(variants.map(([, t]) => handlerWith(t)));
  const samples: number[][] = variants.map(() => []);
  for (const handle of handles) await cpuPerRequest(handle, 500); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (const [i, handle] of handles.entries()) {
      samples[i]?.push(await cpuPerRequest(handle, count));
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const min = (xs: number[]) => Math.min(...xs);
  const cost = (value: number, base: number) => `${((value / base - 1) * 100).toFixed(1)} %`;
  const base = samples[0] ?? [];
  console.log(
    `CPU µs per request, ${rounds} interleaved rounds of ${count} requests: min (least disturbed), median`,
  );
  for (const [i, [name]] of variants.entries()) {
    const xs = samples[i] ?? [];
    const vsMin = i === 0 ? "baseline" : cost(min(xs), min(base));
    const vsMedian = i === 0 ? "baseline" : cost(median(xs), median(base));
    console.log(
      `${name.padEnd(32)} min ${min(xs).toFixed(1).padStart(6)} (${vsMin})  median ${
        median(xs).toFixed(1).padStart(6)
      } (${vsMedian})`,
    );
  }
  Deno.exit(0);
}

for (const [name, telemetry] of variants) {
  const handle = await handlerWith(telemetry);
  Deno.bench(name, { group: "telemetry", baseline: telemetry === undefined }, async (b) => {
    const request = new Request("http://router.bench/graphql", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: QUERY,
    });
    b.start();
    const response = await handle(request);
    _sink = await response.arrayBuffer();
    b.end();
  });
}
addEventListener("unload", () => {
  _sink = exported;
});
