/**
 * Demand control in the pipeline (issue 41): enforce refuses over `max` before any fetch and
 * admits at exactly `max`; measure runs and reports; the estimate is cached with the plan by
 * slicing values; a subgraph over its budget gets no request; the actual cost follows the data.
 */
import assert from "node:assert/strict";
import { composeSupergraph } from "../../../lib/compose/mod.ts";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import {
  type CostReport,
  createEngine,
  type DemandControlOptions,
  execute,
  prepare,
} from "../../../lib/engine/mod.ts";
import { planFor } from "../../../lib/engine/pipeline/prepare_plan.ts";
import {
  createTraceRecorder,
  DEFAULT_TRACE_OPTIONS,
  maskedHeaderSet,
} from "../../../lib/trace/mod.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@cost", "@listSize"])';
const composed = composeSupergraph([
  {
    name: "products",
    url: "http://products.test/graphql",
    sdl: `${LINK}
type Query {
  products(first: Int = 5, tags: [String!]): [Product!]! @listSize(slicingArguments: ["first"])
  search(first: Int, last: Int): [Product!]! @listSize(slicingArguments: ["first", "last"])
}
type Mutation { restock(upc: ID!): Product @cost(weight: 3) }
type Product @key(fields: "upc") { upc: ID! name: String }`,
  },
  {
    name: "reviews",
    url: "http://reviews.test/graphql",
    sdl: `${LINK}
type Product @key(fields: "upc") { upc: ID! reviews: [Review!]! @listSize(assumedSize: 3) }
type Review { body: String }`,
  },
]);
if (!composed.ok) throw new Error(JSON.stringify(composed.errors));
const MODEL = buildSupergraph(composed.supergraphSdl);

function engineWith(demandControl: DemandControlOptions, seen: string[]) {
  return createEngine(MODEL, {
    demandControl,
    fetch: async (request) => {
      const body = await request.json();
      const subgraph = new URL(request.url).hostname.split(".")[0]!;
      seen.push(subgraph);
      if (subgraph === "products") {
        if (String(body.query).startsWith("mutation")) {
          return Response.json({ data: { restock: { upc: "1", name: "A" } } });
        }
        const first = body.variables.n ?? 2;
        const products = Array.from({ length: Math.min(first, 2) }, (_, i) => ({
          __typename: "Product",
          upc: String(i),
          name: `P${i}`,
        }));
        return Response.json({ data: { products } });
      }
      // Five reviews each: more than the assumed 3 (the actual cost can pass the estimate).
      const reviews = Array.from({ length: 5 }, () => ({ body: "ok" }));
      const entities = body.variables.representations.map(() => ({ reviews }));
      return Response.json({ data: { _entities: entities } });
    },
  });
}

async function run(
  engine: ReturnType<typeof engineWith>,
  query: string,
  variables: Record<string, unknown> = {},
) {
  const reports: CostReport[] = [];
  const prepared = prepare(engine, { query });
  assert.ok(prepared.ok, JSON.stringify(prepared));
  const result = await execute(engine, prepared.operation, {
    variables,
    hooks: {
      fetch: () => ({ headers: null, end() {} }),
      planned() {},
      cost: (report) => reports.push(report),
    },
  });
  return { result, reports };
}

// products(first: $n): n × (1 + reviews 3 × 1) in reviews' entity fetch: n (products) + n × 4 (_entities n × (1 + 3)).
// With list_size 10 the _entities list is sized 10: n + 10 × (1 + 3) = n + 40.
const QUERY = "query Q($n: Int) { products(first: $n) { name reviews { body } } }";

Deno.test("issue 41: enforce refuses over max before any fetch, with the estimate and the max", async () => {
  const seen: string[] = [];
  const engine = engineWith({ mode: "enforce", listSize: 10, max: 44 }, seen);
  const { result, reports } = await run(engine, QUERY, { n: 5 });
  assert.deepEqual(seen, []);
  assert.equal(result.data, undefined);
  assert.equal(result.errors?.[0]?.extensions?.code, "COST_ESTIMATED_TOO_EXPENSIVE");
  assert.equal(result.errors?.[0]?.extensions?.["cost.estimated"], 45);
  assert.equal(result.errors?.[0]?.extensions?.["cost.max"], 44);
  assert.match(
    result.errors?.[0]?.message ?? "",
    /estimated cost 45 is above the maximum 44/,
  );
  assert.deepEqual(reports, [{
    estimated: 45,
    actual: null,
    result: "COST_ESTIMATED_TOO_EXPENSIVE",
  }]);
});

Deno.test("issue 41: enforce admits at exactly max; the actual cost counts the data's lists", async () => {
  const seen: string[] = [];
  const engine = engineWith({ mode: "enforce", listSize: 10, max: 45 }, seen);
  const { result, reports } = await run(engine, QUERY, { n: 5 });
  assert.equal(result.errors, undefined);
  assert.deepEqual(seen, ["products", "reviews"]);
  // Two products came back (5 asked), five reviews each: 2 × (1 + 5).
  assert.deepEqual(reports, [{ estimated: 45, actual: 12, result: "COST_OK" }]);
});

Deno.test("issue 41: slicing by variable: a smaller page is admitted where a larger one is refused", async () => {
  const engine = engineWith({ mode: "enforce", listSize: 10, max: 42 }, []);
  const small = await run(engine, QUERY, { n: 2 });
  assert.equal(small.result.errors, undefined);
  assert.equal(small.reports[0]?.estimated, 42);
  const large = await run(engine, QUERY, { n: 3 });
  assert.equal(large.result.errors?.[0]?.extensions?.code, "COST_ESTIMATED_TOO_EXPENSIVE");
});

Deno.test("issue 41: measure runs over max and reports what enforce would have decided", async () => {
  const seen: string[] = [];
  const engine = engineWith({ mode: "measure", listSize: 10, max: 1 }, seen);
  const { result, reports } = await run(engine, QUERY, { n: 5 });
  assert.equal(result.errors, undefined);
  assert.deepEqual(seen, ["products", "reviews"]);
  assert.deepEqual(reports, [{
    estimated: 45,
    actual: 12,
    result: "COST_ESTIMATED_TOO_EXPENSIVE",
  }]);
});

Deno.test("issue 41: a mutation's root costs 10 plus its @cost", async () => {
  const engine = engineWith({ mode: "enforce", listSize: 10, max: 13 }, []);
  const { result, reports } = await run(engine, 'mutation { restock(upc: "1") { name } }');
  assert.equal(result.errors, undefined);
  assert.deepEqual(reports, [{ estimated: 13, actual: 3, result: "COST_OK" }]);
  const tight = engineWith({ mode: "enforce", listSize: 10, max: 12 }, []);
  const refused = await run(tight, 'mutation { restock(upc: "1") { name } }');
  assert.equal(refused.result.errors?.[0]?.extensions?.code, "COST_ESTIMATED_TOO_EXPENSIVE");
});

Deno.test("issue 41: the estimate is cached with the plan, per slicing value", async () => {
  const engine = engineWith({ mode: "measure", listSize: 10, max: 1000 }, []);
  await run(engine, QUERY, { n: 1 });
  const prepared = prepare(engine, { query: QUERY });
  assert.ok(prepared.ok);
  // The plan cache's entry (a hit: the same object the request used).
  const planned = planFor(engine, prepared.operation, { n: 1 }, { identity: null });
  const costs = engine.demandControl!.byPlan.get(planned);
  assert.deepEqual(costs?.variables, ["n"]);
  assert.equal(costs?.estimates.size, 1);
  await run(engine, QUERY, { n: 1 });
  assert.equal(costs?.estimates.size, 1, "same slicing value: no new estimate");
  const kept = costs?.estimates.get("[1]");
  await run(engine, QUERY, { n: 1 });
  assert.equal(costs?.estimates.get("[1]"), kept, "the same estimate object served");
  await run(engine, QUERY, { n: 4 });
  assert.equal(costs?.estimates.size, 2);
});

Deno.test("issue 41 (Hive Router's idea): a subgraph over its budget gets no request, its fields null", async () => {
  const seen: string[] = [];
  const engine = engineWith({
    mode: "enforce",
    listSize: 10,
    max: 1000,
    subgraphs: new Map([["reviews", { max: 39 }]]),
  }, seen);
  const { result } = await run(engine, QUERY, { n: 5 });
  assert.deepEqual(seen, ["products"]);
  const error = result.errors?.find((e) =>
    e.extensions?.code === "SUBGRAPH_COST_ESTIMATED_TOO_EXPENSIVE"
  );
  assert.ok(error, JSON.stringify(result.errors));
  assert.match(
    error.message,
    /subgraph reviews: its part of the estimated cost, 40, is above its maximum 39/,
  );
  const within = engineWith({
    mode: "enforce",
    listSize: 10,
    max: 1000,
    subgraphs: new Map([["reviews", { max: 40 }]]),
  }, []);
  assert.equal((await run(within, QUERY, { n: 5 })).result.errors, undefined);
});

Deno.test("issue 41: enforce_actual_cost withholds an answer whose actual cost passes max", async () => {
  const query = "query Q($n: Int) { products(first: $n) { name reviews { body } } }";
  // Estimate with list_size 1: 1 + 1 × (1 + 3) = 5; the answer: 1 product with 5 reviews = 6.
  const measured = engineWith({ mode: "enforce", listSize: 1, max: 5 }, []);
  const admitted = await run(measured, query, { n: 1 });
  assert.equal(admitted.result.errors, undefined);
  assert.deepEqual(admitted.reports, [{ estimated: 5, actual: 6, result: "COST_OK" }]);
  const strict = engineWith({ mode: "enforce", listSize: 1, max: 5, enforceActual: true }, []);
  const { result, reports } = await run(strict, query, { n: 1 });
  assert.equal(result.data, null);
  assert.equal(result.errors?.[0]?.extensions?.code, "COST_ACTUAL_TOO_EXPENSIVE");
  assert.equal(result.errors?.[0]?.extensions?.["cost.actual"], 6);
  assert.deepEqual(reports, [{ estimated: 5, actual: 6, result: "COST_ACTUAL_TOO_EXPENSIVE" }]);
});

Deno.test("issue 41: extensions.cost only behind its switch", async () => {
  const plain = engineWith({ mode: "measure", listSize: 10, max: 100 }, []);
  assert.equal((await run(plain, QUERY, { n: 1 })).result.extensions, undefined);
  const exposed = engineWith(
    { mode: "measure", listSize: 10, max: 100, exposeInExtensions: true },
    [],
  );
  const { result } = await run(exposed, QUERY, { n: 1 });
  assert.deepEqual(result.extensions?.cost, {
    estimated: 41,
    actual: 6,
    max: 100,
    result: "COST_OK",
    strategy: "static_estimated",
  });
});

Deno.test("issue 41: the estimates kept per plan are bounded (count and key size)", async () => {
  const engine = engineWith({ mode: "measure", listSize: 10, max: 1_000_000 }, []);
  for (let n = 0; n < 70; n++) await run(engine, QUERY, { n });
  const prepared = prepare(engine, { query: QUERY });
  assert.ok(prepared.ok);
  const planned = planFor(engine, prepared.operation, { n: 1 }, { identity: null });
  const costs = engine.demandControl!.byPlan.get(planned)!;
  assert.ok(costs.estimates.size <= 64, `kept ${costs.estimates.size}`);
  // A variable whose value is long is estimated per request, never kept.
  const tags = Array.from({ length: 1000 }, (_, i) => `tag-${i}`);
  const listQuery =
    "query L($n: Int, $tags: [String!]) { products(first: $n, tags: $tags) { name } }";
  await run(engine, listQuery, { n: 1, tags });
  const listPrepared = prepare(engine, { query: listQuery });
  assert.ok(listPrepared.ok);
  const listPlan = planFor(engine, listPrepared.operation, { n: 1 }, { identity: null });
  const listCosts = engine.demandControl!.byPlan.get(listPlan);
  assert.deepEqual(listCosts?.variables, ["n", "tags"]);
  assert.equal(listCosts?.estimates.size, 0);
});

Deno.test("issue 41: the ART trace carries the figures in info.cost", async () => {
  const engine = engineWith({ mode: "enforce", listSize: 10, max: 100 }, []);
  let clock = 0;
  const recorder = createTraceRecorder({
    options: DEFAULT_TRACE_OPTIONS,
    now: () => (clock += 1000),
    startedAt: new Date("2026-01-01T00:00:00Z"),
    routerVersion: "test",
    maskedHeaders: maskedHeaderSet(),
    unmaskedHeaders: new Set(),
    singleFlight: false,
  });
  const prepared = prepare(engine, { query: QUERY });
  assert.ok(prepared.ok);
  await execute(engine, prepared.operation, { variables: { n: 2 }, observer: recorder.observer });
  assert.deepEqual(recorder.finish().info.cost, { estimated: 42, actual: 12, result: "COST_OK" });
});

Deno.test("issue 41: a subgraph's list_size sizes its own lists (subgraph.subgraphs.<name>.list_size)", async () => {
  // reviews' _entities sized 2 instead of 10: n + 2 × (1 + 3).
  const engine = engineWith({
    mode: "measure",
    listSize: 10,
    max: 1000,
    subgraphs: new Map([["reviews", { listSize: 2 }]]),
  }, []);
  assert.equal((await run(engine, QUERY, { n: 5 })).reports[0]?.estimated, 5 + 2 * 4);
  // `all` applies to every subgraph without its own.
  const all = engineWith({
    mode: "measure",
    listSize: 10,
    max: 1000,
    allSubgraphs: { listSize: 3 },
  }, []);
  assert.equal((await run(all, QUERY, { n: 5 })).reports[0]?.estimated, 5 + 3 * 4);
});

Deno.test("IBM spec requireOneSlicingArgument: enforce refuses an operation with none (COST_QUERY_PARSE_FAILURE), measure runs it", async () => {
  const seen: string[] = [];
  const enforced = engineWith({ mode: "enforce", listSize: 10, max: 1000 }, seen);
  const refused = await run(enforced, "{ search { name } }");
  assert.deepEqual(seen, []);
  assert.equal(refused.result.errors?.[0]?.extensions?.code, "COST_QUERY_PARSE_FAILURE");
  assert.match(
    refused.result.errors?.[0]?.message ?? "",
    /takes exactly one of its slicing arguments \(first, last\) when requireOneSlicingArgument is on; the operation gives 0/,
  );
  assert.deepEqual(refused.reports, [{
    estimated: null,
    actual: null,
    result: "COST_QUERY_PARSE_FAILURE",
  }]);
  // Exactly one: admitted.
  assert.equal(
    (await run(enforced, "{ search(first: 2) { name } }")).reports[0]?.result,
    "COST_OK",
  );
  const measured = engineWith({ mode: "measure", listSize: 10, max: 1000 }, seen);
  const ran = await run(measured, "{ search(first: 1, last: 1) { name } }");
  assert.deepEqual(seen, ["products", "products"]);
  assert.equal(ran.reports[0]?.result, "COST_QUERY_PARSE_FAILURE");
});
