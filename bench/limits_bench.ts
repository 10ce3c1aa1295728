/**
 * Cost of the issue 14 edge checks on the benchmark query, against the whole
 * request path: the text depth scan and the operation limits (what `prepare`
 * adds before validation) next to a POST /graphql through the handler, cold
 * (a new query text each time: parse, limits, validation, normalization,
 * planning, execution, shaping) and warm (prepare and plan cached: the limits
 * do not run at all). Subgraphs answer from memory.
 * Run: `deno bench -A bench/limits_bench.ts`.
 *
 * @module
 */
import { parse } from "graphql";
import { parseConfig } from "../lib/config/mod.ts";
import {
  checkOperationLimits,
  checkTextDepth,
  DEFAULT_OPERATION_LIMITS,
  findIntrospectionField,
} from "../lib/engine/mod.ts";
import { createHandler } from "../lib/http/mod.ts";
import { silentLogger } from "../lib/log/mod.ts";
import { buildState } from "../lib/state/mod.ts";
import { BENCH_QUERY, BENCH_SUPERGRAPH, benchSubgraphFetch } from "./_federation_fixture.ts";

let _sink: unknown;
const document = parse(BENCH_QUERY);

Deno.bench("limits: text depth scan + operation limits + introspection scan", {
  group: "limits",
  baseline: true,
}, () => {
  _sink = checkTextDepth(BENCH_QUERY, DEFAULT_OPERATION_LIMITS) ??
    checkOperationLimits(document, DEFAULT_OPERATION_LIMITS) ?? findIntrospectionField(document);
});

Deno.bench("limits: parse of the same text (reference)", { group: "limits" }, () => {
  _sink = parse(BENCH_QUERY);
});

// Whole requests: every subgraph answers with the same in-memory body per request body.
const fetch = benchSubgraphFetch({ memo: true });

const state = await buildState({
  config: parseConfig({}),
  log: silentLogger,
  supergraphSdl: BENCH_SUPERGRAPH,
  operationFiles: [],
  traceKeyPem: null,
  fetch,
});
const handle = createHandler(() => state);
let counter = 0;

function post(query: string): Request {
  return new Request("http://router.bench/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query }),
  });
}

Deno.bench(
  "request: POST /graphql, cold (new text: parse, limits, validate, plan, execute, shape)",
  {
    group: "limits",
  },
  async (b) => {
    const request = post(`${BENCH_QUERY}\n# ${counter++}`);
    b.start();
    _sink = await (await handle(request)).text();
    b.end();
  },
);

Deno.bench("request: POST /graphql, warm (prepare and plan cached: no limit check runs)", {
  group: "limits",
}, async (b) => {
  const request = post(BENCH_QUERY);
  b.start();
  _sink = await (await handle(request)).text();
  b.end();
});
