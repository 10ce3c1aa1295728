/**
 * Planner benchmarks (issue 8: cold plan of the benchmark query ≤ 5 ms, cache hit ≤ 20 µs).
 * The federation benchmark's supergraph and nested query come from `_federation_fixture.ts`.
 * Run: `deno bench -A bench/planner_bench.ts`.
 *
 * @module
 */
import { parse } from "graphql";
import { buildSupergraph } from "../lib/supergraph/mod.ts";
import { createEngine, planOf, prepare } from "../lib/engine/mod.ts";
import { normalizeOperation } from "../lib/engine/prepare/normalize.ts";
import { planOperation } from "../lib/engine/plan/mod.ts";
import { BENCH_QUERY, BENCH_SUPERGRAPH } from "./_federation_fixture.ts";

let _sink: unknown; // keep results reachable so V8 cannot drop the call
const model = buildSupergraph(BENCH_SUPERGRAPH);
const document = parse(BENCH_QUERY);
const engine = createEngine(model);
const prepared = prepare(engine, { query: BENCH_QUERY });
if (!prepared.ok) throw new Error("The benchmark query does not validate");
const operation = prepared.operation;
planOf(engine, operation); // warm the cache

Deno.bench("planner: cold (normalize + plan) of the benchmark query", {
  group: "planner",
  baseline: true,
}, () => {
  _sink = planOperation(model, normalizeOperation(model.apiSchema, document));
});

Deno.bench("planner: plan cache hit (prepare + plan lookup)", { group: "planner" }, () => {
  const again = prepare(engine, { query: BENCH_QUERY });
  if (again.ok) _sink = planOf(engine, again.operation);
});

Deno.bench("normalize: the benchmark query", { group: "stages" }, () => {
  _sink = normalizeOperation(model.apiSchema, document);
});

Deno.bench("supergraph: build the model of the benchmark supergraph", { group: "stages" }, () => {
  _sink = buildSupergraph(BENCH_SUPERGRAPH);
});
