import assert from "node:assert/strict";
import { parse } from "graphql";
import { buildSupergraph } from "../../lib/supergraph/mod.ts";
import { normalizeOperation } from "../../lib/engine/normalize.ts";
import { queryGraphOf } from "../../lib/engine/plan/graph.ts";
import { createSearch } from "../../lib/engine/plan/best.ts";
import { buildFetchGraph } from "../../lib/engine/plan/fetch_graph.ts";
import { mergeSiblings } from "../../lib/engine/plan/optimize/merge_siblings.ts";
import { emitPlan } from "../../lib/engine/plan/emit.ts";
import { createGroup } from "../../lib/engine/plan/_groups.ts";

const DEMO = buildSupergraph(
  Deno.readTextFileSync(new URL("../../schema/supergraph.graphql", import.meta.url)),
);

function groupsOf(query: string) {
  const operation = normalizeOperation(DEMO.apiSchema, parse(query));
  const graph = queryGraphOf(DEMO);
  return {
    graph,
    operation,
    groups: buildFetchGraph(graph, { operation, search: createSearch() }),
  };
}

Deno.test("issue 13 merge siblings: entity fetches to one subgraph at one level become one _entities call serving both paths", () => {
  const { graph, operation, groups } = groupsOf(
    `{ topProducts { reviews { product { name } } } users { reviews { product { name } } } }`,
  );
  const count = (subgraph: string) => groups.filter((g) => g.subgraph === subgraph).length;
  assert.deepEqual([count("products"), count("reviews")], [3, 2]);
  assert.equal(mergeSiblings(graph, groups), 2);
  assert.deepEqual([count("products"), count("reviews")], [2, 1]);
  const plan = JSON.stringify(emitPlan(graph, { operation, groups }).plan);
  assert.match(plan, /"paths":\[\["topProducts","@"\],\["users","@"\]\]/);
});

Deno.test("issue 13 merge siblings: a fetch is never merged with one it depends on", () => {
  const graph = queryGraphOf(DEMO);
  const a = createGroup(0, { subgraph: "products", entity: true, path: ["x"], root: 0 });
  const b = createGroup(1, { subgraph: "products", entity: true, path: ["y"], root: 0 });
  a.sel.fragment("Product").field("name", "name", "");
  b.sel.fragment("Product").field("name", "name", "");
  const groups = [a, b];
  b.deps.add(a);
  assert.equal(mergeSiblings(graph, groups), 0);
  b.deps.delete(a);
  assert.equal(mergeSiblings(graph, groups), 1);
});
