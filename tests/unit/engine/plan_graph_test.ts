import assert from "node:assert/strict";
import { compose, fed2 } from "./_planner_fixture.ts";
import { queryGraphOf } from "../../../lib/engine/plan/graph.ts";
import { itemsFor, repSelection } from "../../../lib/engine/plan/requirements.ts";
import { PARTIAL_UNION } from "./_planner_graphs.ts";

const KEYS = compose({
  a: fed2("@key") + `
    type Query { item: Item }
    type Item @key(fields: "id") @key(fields: "sku", resolvable: false) { id: ID! sku: String! }`,
  b: fed2("@key") + `type Item @key(fields: "sku", resolvable: false) { sku: String! }`,
  c: fed2("@key") + `type Item @key(fields: "id") { id: ID! c: Int }`,
});

Deno.test("issue 13 graph: entity moves follow resolvable keys only", () => {
  const graph = queryGraphOf(KEYS);
  assert.deepEqual(graph.entityMove("Item", "a")?.keys, ["id"]);
  assert.deepEqual(graph.entityMove("Item", "c")?.keys, ["id"]);
  assert.equal(graph.entityMove("Item", "b"), null);
});

Deno.test("issue 13 graph: built once per supergraph model", () => {
  assert.equal(queryGraphOf(KEYS), queryGraphOf(KEYS));
});

Deno.test("issue 13 graph: a union member is possible only in subgraphs whose union lists it", () => {
  const graph = queryGraphOf(compose(PARTIAL_UNION));
  assert.equal(graph.possibleIn("b", { abstract: "Item", concrete: "Video" }), true);
  assert.equal(graph.possibleIn("a", { abstract: "Item", concrete: "Video" }), false);
  assert.equal(graph.possibleIn("a", { abstract: "Item", concrete: "Post" }), true);
});

const IFACE = compose({
  a: fed2("@key") + `
    type Query { things: [Node] }
    interface Node { id: ID! size: Int }
    type Box implements Node @key(fields: "id") { id: ID! size: Int }
    type Bag implements Node @key(fields: "id") { id: ID! size: Int }`,
});

Deno.test("issue 13 requirements: a fragment on an implemented interface applies to the concrete type", () => {
  const graph = queryGraphOf(IFACE);
  const items = itemsFor(graph, {
    type: "Box",
    items: graph.fieldSet("id ... on Node { size } ... on Bag { x }"),
  });
  assert.deepEqual(items.map((i) => i.name), ["id", "size"]);
});

Deno.test("issue 13 requirements: an interface condition inside a required object reads every implementation", () => {
  const graph = queryGraphOf(IFACE);
  const [item] = graph.fieldSet("things { ... on Node { size } }");
  const rep = repSelection(graph, { item: item!, model: graph.field("Query", "things")! });
  assert.deepEqual([...rep!.byType.keys()], ["Box", "Bag"]);
  assert.deepEqual(rep!.byType.get("Bag")?.map((f) => f.key), ["size"]);
});
