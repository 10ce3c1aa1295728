import assert from "node:assert/strict";
import { parse } from "graphql";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import { normalizeOperation } from "../../../lib/engine/prepare/normalize.ts";
import { queryGraphOf } from "../../../lib/engine/plan/graph.ts";
import { createSearch } from "../../../lib/engine/plan/best.ts";
import { buildFetchGraph } from "../../../lib/engine/plan/fetch_graph.ts";
import { mergeSiblings } from "../../../lib/engine/plan/optimize/merge_siblings.ts";
import { emitPlan } from "../../../lib/engine/plan/emit.ts";
import { mergeLeaves } from "../../../lib/engine/plan/optimize/merge_leaves.ts";
import { createGroup, dependencyLevels } from "../../../lib/engine/plan/_groups.ts";

const DEMO = buildSupergraph(
  Deno.readTextFileSync(new URL("../../../schema/supergraph.graphql", import.meta.url)),
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

/** An entity fetch of `Product { field }` to `subgraph` at `path`. */
function productFetch(id: number, subgraph: string, field = "name") {
  const g = createGroup(id, { subgraph, entity: true, path: [`p${id}`], root: 0 });
  g.sel.fragment("Product").field(field, field, "");
  return g;
}

Deno.test("issue 15 merge leaves: a leaf fetch joins a deeper fetch to its subgraph; the plan keeps its depth", () => {
  const graph = queryGraphOf(DEMO);
  // a → b(inventory) → c → d(inventory); e(inventory) depends on a only and nothing depends on it.
  const a = productFetch(0, "products");
  const b = productFetch(1, "reviews");
  const c = productFetch(2, "products", "price");
  const d = productFetch(3, "inventory", "inStock");
  const e = productFetch(4, "inventory", "inStock");
  b.deps.add(a);
  c.deps.add(b);
  d.deps.add(c);
  e.deps.add(a);
  const groups = [a, b, c, d, e];
  assert.equal(mergeLeaves(graph, groups), 1);
  assert.deepEqual(groups.map((g) => g.id), [0, 1, 2, 3]);
  assert.deepEqual(d.merged, [e]);
  assert.deepEqual([...d.deps].map((g) => g.id).sort(), [0, 2]);
  const levelOf = dependencyLevels();
  assert.equal(Math.max(...groups.map((g) => levelOf(g))), 3);
});

Deno.test("issue 15 merge leaves: never a fetch something depends on, never into a shallower fetch, never across a dependency", () => {
  const graph = queryGraphOf(DEMO);
  // Something depends on e: merging it deeper would delay its dependent (the plan grows a level).
  {
    const a = productFetch(0, "products");
    const d = productFetch(1, "inventory", "inStock");
    const e = productFetch(2, "inventory", "inStock");
    const f = productFetch(3, "reviews");
    d.deps.add(a);
    const mid = productFetch(4, "reviews", "price");
    mid.deps.add(a);
    d.deps.add(mid);
    f.deps.add(e);
    assert.equal(mergeLeaves(graph, [a, mid, d, e, f]), 0);
  }
  // The only other fetch to the subgraph is shallower than the leaf: it would gain a level.
  {
    const a = productFetch(0, "inventory", "inStock");
    const x = productFetch(4, "reviews");
    x.deps.add(a);
    const b = productFetch(1, "products");
    const leaf = productFetch(2, "inventory", "inStock");
    leaf.deps.add(b);
    assert.equal(mergeLeaves(graph, [a, x, b, leaf]), 0);
    // Once it is as deep, it would join the branches c → a and b: a plan that runs as a tree
    // stays one (a slow branch would hold up the other)…
    const c = productFetch(3, "reviews");
    a.deps.add(c);
    assert.equal(mergeLeaves(graph, [c, a, x, b, leaf]), 0);
    // …and in a plan that already runs level by level (j joins x and b), it merges.
    const j = productFetch(5, "accounts");
    j.deps.add(x);
    j.deps.add(b);
    assert.equal(mergeLeaves(graph, [c, a, x, b, leaf, j]), 1);
    assert.deepEqual(a.merged, [leaf]);
  }
  // A leaf that depends (transitively) on the deeper fetch needs its answer first.
  {
    const a = productFetch(0, "inventory", "inStock");
    const b = productFetch(1, "products");
    const leaf = productFetch(2, "inventory", "inStock");
    b.deps.add(a);
    leaf.deps.add(b);
    const deeper = productFetch(3, "inventory", "inStock");
    assert.equal(mergeLeaves(graph, [a, b, leaf]), 0);
    assert.equal(deeper.merged.length, 0);
  }
  // A mutation's fields run in order, each with its own fetches: a leaf stays with its root.
  {
    const a = productFetch(0, "products");
    const leaf = productFetch(1, "inventory", "inStock");
    leaf.deps.add(a);
    const second = createGroup(2, { subgraph: "products", entity: false, path: [], root: 1 });
    const mid = createGroup(3, { subgraph: "reviews", entity: true, path: ["m"], root: 1 });
    mid.sel.fragment("Product").field("name", "name", "");
    mid.deps.add(second);
    const deeper = createGroup(4, { subgraph: "inventory", entity: true, path: ["d"], root: 1 });
    deeper.sel.fragment("Product").field("inStock", "inStock", "");
    deeper.deps.add(mid);
    assert.equal(mergeLeaves(graph, [a, leaf, second, mid, deeper]), 0);
  }
  // Conflicting selections of one type never share a call.
  {
    const a = productFetch(0, "products");
    const d = productFetch(1, "inventory", "inStock");
    const e = productFetch(2, "inventory", "shippingEstimate");
    const mid = productFetch(3, "reviews");
    mid.deps.add(a);
    d.deps.add(mid);
    e.deps.add(a);
    assert.equal(mergeLeaves(graph, [a, mid, d, e]), 0);
  }
});
