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
 *
 * `--federation`: the load benchmark's supergraph and nested query instead
 * (seven subgraph fetches, answered in-process by the benchmark's own
 * graphql-js subgraphs, `load/subgraphs/schemas.ts`, each answer computed
 * once), sent in waves of 16 concurrent requests through the default
 * admission gate, so identical fetches are shared as under load.
 */
import process from "node:process";
import { execute as graphqlExecute, parse as graphqlParse } from "graphql";
import { BENCH_QUERY, BENCH_SUPERGRAPH } from "./_federation_fixture.ts";
import { buildSubgraph, SUBGRAPH_NAMES } from "./load/subgraphs/schemas.ts";
import { TWO_SUBGRAPHS_QUERY, TWO_SUBGRAPHS_SDL, twoSubgraphsFetch } from "./_two_subgraphs.ts";
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

const FEDERATION = Deno.args.includes("--federation");
const ARGS = Deno.args.filter((arg) => !arg.startsWith("--"));

/** The benchmark's subgraphs in this process: each distinct request executed once. */
const federationSchemas = new Map(SUBGRAPH_NAMES.map((name) => [name, buildSubgraph(name)]));
const federationAnswers = new Map<string, string>();
async function federationSubgraphs(request: Request): Promise<Response> {
  const name = new URL(request.url).pathname.slice(1);
  const text = await request.text();
  const key = `${name}\n${text}`;
  let answer = federationAnswers.get(key);
  if (answer === undefined) {
    const { query, variables } = JSON.parse(text);
    const schema = federationSchemas.get(name);
    if (!schema) throw new Error(`no subgraph ${name}`);
    answer = JSON.stringify(
      graphqlExecute({ schema, document: graphqlParse(query), variableValues: variables }),
    );
    federationAnswers.set(key, answer);
  }
  return new Response(answer, { headers: { "content-type": "application/json" } });
}

const QUERY = JSON.stringify({
  query: FEDERATION ? BENCH_QUERY : TWO_SUBGRAPHS_QUERY,
});
/** Requests in flight at once (16: the default admission gate). */
const CONCURRENCY = FEDERATION ? 16 : 1;

async function handlerWith(telemetry: Telemetry | undefined) {
  const state = await buildState({
    config: parseConfig(FEDERATION ? {} : { engine: { max_concurrent_operations: 0 } }),
    log: silentLogger,
    supergraphSdl: FEDERATION ? BENCH_SUPERGRAPH : TWO_SUBGRAPHS_SDL,
    operationFiles: [],
    traceKeyPem: null,
    fetch: FEDERATION ? federationSubgraphs : twoSubgraphsFetch,
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
  const one = async () => {
    const response = await handle(
      new Request("http://router.bench/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: QUERY,
      }),
    );
    if (response.status !== 200) throw new Error(`status ${response.status}`);
    _sink = await response.arrayBuffer();
  };
  const start = process.cpuUsage();
  for (let i = 0; i < count; i += CONCURRENCY) {
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count - i) }, one));
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / count;
}

if (import.meta.main && !Deno.args.includes("--bench")) {
  const rounds = Number(ARGS[0] ?? 7);
  const count = Number(ARGS[1] ?? 2000);
  const handles = await Promise.all(variants.map(([, t]) => handlerWith(t)));
  const samples: number[][] = variants.map(() => []);
  // Warm-up: every variant's code optimized before the first measured round.
  for (let i = 0; i < 3; i++) for (const handle of handles) await cpuPerRequest(handle, 500);
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
    `CPU µs per request${
      FEDERATION ? " (federation benchmark query, 16 in flight)" : ""
    }, ${rounds} interleaved rounds of ${count} requests: min (least disturbed), median`,
  );
  const off = samples[1] ?? [];
  for (const [i, [name]] of variants.entries()) {
    const xs = samples[i] ?? [];
    const vsMin = i === 0 ? "baseline" : cost(min(xs), min(base));
    const vsMedian = i === 0 ? "baseline" : cost(median(xs), median(base));
    // Each round's variants run back to back: the median of per-round ratios to
    // "telemetry off" drops the drift between rounds.
    const paired = i <= 1
      ? ""
      : `  vs off, paired by round: ${
        ((median(xs.map((x, round) => x / (off[round] ?? x))) - 1) * 100).toFixed(1)
      } %`;
    console.log(
      `${name.padEnd(32)} min ${min(xs).toFixed(1).padStart(6)} (${vsMin})  median ${
        median(xs).toFixed(1).padStart(6)
      } (${vsMedian})${paired}`,
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
