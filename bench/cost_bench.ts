/**
 * Demand control's CPU per request on the shared federation benchmark's query (issue 41): the
 * estimate over the plan's subgraph operations cold (parse of every subgraph operation and the
 * walk, what the first request of a plan pays), the estimate as a request pays it once cached
 * with the plan (`admitCost`: a lookup by slicing values), the estimate of the client's document
 * alone (reference), and the actual cost of the benchmark's answer (paid per request).
 * Run: `deno bench -A bench/cost_bench.ts`.
 *
 * @module
 */
import { parse } from "graphql";
import { buildSupergraph } from "../lib/supergraph/mod.ts";
import {
  admitCost,
  createEngine,
  execute,
  type ExecutionResult,
  prepare,
} from "../lib/engine/mod.ts";
import { actualCost, estimateOperation, estimatePlan } from "../lib/engine/cost/mod.ts";
import { planFor } from "../lib/engine/pipeline/prepare_plan.ts";
import { BENCH_QUERY, BENCH_SUPERGRAPH, benchSubgraphFetch } from "./_federation_fixture.ts";

let _sink: unknown;
const model = buildSupergraph(BENCH_SUPERGRAPH);

// The subgraphs answer from memory (6 users, 5 top products, 2 reviews each).
const fetch = benchSubgraphFetch();

const engine = createEngine(model, {
  fetch,
  demandControl: { mode: "enforce", listSize: 10, max: 1e12 },
});
const prepared = prepare(engine, { query: BENCH_QUERY });
if (!prepared.ok) throw new Error("The benchmark query does not prepare");
const operation = prepared.operation;
const planned = planFor(engine, operation, {}, { identity: null });
const answer: ExecutionResult = await execute(engine, operation, {});
const document = parse(BENCH_QUERY);

Deno.bench("cost: estimate of the plan, cold (parse the subgraph operations + walk)", {
  group: "cost",
  baseline: true,
}, () => {
  _sink = estimatePlan(model.cost, planned.planned.plan, { variables: {}, listSize: 10 });
});

Deno.bench(
  "cost: estimate, cached with the plan (admitCost per request)",
  { group: "cost" },
  () => {
    _sink = admitCost(engine, planned, {});
  },
);

Deno.bench("cost: estimate of the client's document alone (reference)", { group: "cost" }, () => {
  _sink = estimateOperation(model.cost, document, { variables: {}, listSize: 10 });
});

Deno.bench("cost: actual cost of the benchmark's answer (per request)", { group: "cost" }, () => {
  _sink = actualCost(model.cost, operation.document, {
    data: answer.data,
    variables: {},
    operation: operation.operation,
  });
});

Deno.bench("cost: whole operation through execute, demand control on (reference)", {
  group: "request",
  baseline: true,
}, async () => {
  _sink = await execute(engine, operation, {});
});

const plain = createEngine(model, { fetch });
const plainPrepared = prepare(plain, { query: BENCH_QUERY });
Deno.bench("cost: whole operation through execute, demand control off (reference)", {
  group: "request",
}, async () => {
  if (plainPrepared.ok) _sink = await execute(plain, plainPrepared.operation, {});
});
