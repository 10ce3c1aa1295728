import assert from "node:assert/strict";
import { parse } from "graphql";
import { compose, fetchesOf, planQuery } from "./_planner_fixture.ts";
import { normalizeOperation } from "../../../lib/engine/prepare/normalize.ts";
import { queryGraphOf } from "../../../lib/engine/plan/graph.ts";
import { bestRoot, createSearch, selectionCost } from "../../../lib/engine/plan/best.ts";
import { SHARED_ROOT, WIDE } from "./_planner_graphs.ts";

const SHARED = compose(SHARED_ROOT);

function rootField(query: string, index = 0) {
  const op = normalizeOperation(SHARED.apiSchema, parse(query));
  return op.selection.fields[index]!;
}

Deno.test("issue 13 best: the look-ahead counts the entity fetch a subgraph needs for the rest of the selection", () => {
  const graph = queryGraphOf(SHARED);
  const field = rootField(`{ product { name price } }`);
  const at = (subgraph: string) =>
    selectionCost(graph, createSearch(), { subgraph, selection: field.selection, provided: null });
  assert.deepEqual(at("a"), { fetches: 1, depth: 1 });
  assert.deepEqual(at("b"), { fetches: 1, depth: 1 });
});

Deno.test("issue 13 best: @provides makes a field local in the look-ahead", () => {
  const graph = queryGraphOf(SHARED);
  const field = rootField(`{ top { price } }`);
  const cost = selectionCost(graph, createSearch(), {
    subgraph: "a",
    selection: field.selection,
    provided: graph.fieldSet("price"),
  });
  assert.deepEqual(cost, { fetches: 0, depth: 0 });
});

Deno.test("issue 13 best: a root field goes to the subgraph serving its whole selection, not to an open fetch that cannot", () => {
  const graph = queryGraphOf(SHARED);
  const field = rootField(`{ product { price } }`);
  const model = graph.field("Query", "product")!;
  assert.equal(bestRoot(graph, createSearch(), { field, model, open: ["a"] }), "b");
  // Equal cost: the open fetch wins.
  const name = rootField(`{ product { name } }`);
  assert.equal(bestRoot(graph, createSearch(), { field: name, model, open: ["a"] }), "a");
});

Deno.test("issue 13 best: per alias: each aliased root field takes its own cheapest subgraph", () => {
  const plan = planQuery(SHARED, `{ a: product { name } b: product { price } }`).plan;
  assert.deepEqual(fetchesOf(plan.node), ["a query{a:product{name}}", "b query{b:product{price}}"]);
  assert.equal(plan.node?.kind, "Parallel");
});

Deno.test("issue 13 best: a search past its budget falls back to the first candidate and says so in the plan", () => {
  const model = compose(WIDE);
  const query = `{ things { f1 f2 f3 g h k } }`;
  const bounded = planQuery(model, query, { searchBudget: 0 });
  assert.equal(bounded.plan.searchTruncated, true);
  // The fallback is still a complete plan: every field is fetched somewhere.
  const text = fetchesOf(bounded.plan.node).join("\n");
  for (const f of ["f1", "f2", "f3", "g", "h", "k"]) assert.match(text, new RegExp(`\\b${f}\\b`));
  const full = planQuery(model, query);
  assert.equal(full.plan.searchTruncated, undefined);
  assert.ok(fetchesOf(full.plan.node).length <= fetchesOf(bounded.plan.node).length);
});
