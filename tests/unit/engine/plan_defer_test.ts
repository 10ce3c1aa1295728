import assert from "node:assert/strict";
import { buildSchema, parse } from "graphql";
import { normalizeOperation } from "../../../lib/engine/prepare/normalize.ts";
import { type PlanNode, planOperation } from "../../../lib/engine/plan/mod.ts";
import { compose, fed2, fetchesOf } from "./_planner_fixture.ts";

const MODEL = compose({
  products: fed2("@key") + `
    type Query { products: [Product!]! }
    type Product @key(fields: "id") { id: ID! name: String! }
  `,
  prices: fed2("@key") + `
    type Product @key(fields: "id") { id: ID! price: Int! }
  `,
  reviews: fed2("@key", "@external", "@requires") + `
    type Product @key(fields: "id") {
      id: ID!
      price: Int! @external
      reviews: [Review!]!
      deal: Boolean! @requires(fields: "price")
    }
    type Review { body: String! stars: Int! }
  `,
});

function plan(
  query: string,
  options: { variables?: Record<string, unknown>; incremental?: boolean } = {},
) {
  const op = normalizeOperation(MODEL.apiSchema, parse(query), {
    variables: options.variables ?? {},
    incremental: options.incremental ?? true,
  });
  return { op, planned: planOperation(MODEL, op) };
}

/** Subgraph names of a plan node's fetches, in plan order. */
function services(node: PlanNode | null): string[] {
  return fetchesOf(node).map((f) => f.split(" ")[0]!);
}

Deno.test("issue 31: a deferred fragment of another subgraph is a branch after the primary fetch, which fetches its keys", () => {
  const { planned } = plan(`{ products { name ... @defer(label: "p") { price } } }`);
  const node = planned.plan.node;
  assert.equal(node?.kind, "Defer");
  if (node?.kind !== "Defer") return;
  assert.deepEqual(node.primary.node, {
    kind: "Fetch",
    serviceName: "products",
    variableUsages: [],
    operation: "query{products{name __typename id}}",
    operationKind: "query",
  });
  assert.equal(node.deferred.length, 1);
  const [d] = node.deferred;
  assert.deepEqual({ ...d!, node: services(d!.node) }, {
    id: 1,
    label: "p",
    path: ["products"],
    depends: 0,
    node: ["prices"],
  });
  assert.deepEqual(planned.defer?.deferred[0]?.fetches.size, 1);
});

Deno.test("issue 31: a deferred field from the primary part's own fetch is delivered with it (no branch fetch)", () => {
  const { planned } = plan(`{ products { name ... @defer { id } } }`);
  const node = planned.plan.node;
  assert.equal(node?.kind, "Defer");
  if (node?.kind !== "Defer") return;
  assert.deepEqual(services(node.primary.node), ["products"]);
  assert.equal(node.deferred[0]?.node, null);
});

Deno.test("issue 31: a deferred @requires field: its requirement's fetch is in the branch, not the primary part", () => {
  const { planned } = plan(`{ products { name ... @defer { deal } } }`);
  const node = planned.plan.node;
  if (node?.kind !== "Defer") throw new Error("no Defer node");
  assert.deepEqual(services(node.primary.node), ["products"]);
  assert.deepEqual(services(node.deferred[0]!.node), ["prices", "reviews"]);
});

Deno.test("issue 31: nested defers: the inner branch depends on the outer one", () => {
  const { op, planned } = plan(
    `{ products { ... @defer(label: "outer") { price ... @defer(label: "inner") { reviews { body } } } } }`,
  );
  assert.deepEqual(op.defers?.map((d) => [d.id, d.label, d.parent]), [[1, "outer", 0], [
    2,
    "inner",
    1,
  ]]);
  const node = planned.plan.node;
  if (node?.kind !== "Defer") throw new Error("no Defer node");
  assert.deepEqual(node.deferred.map((d) => [d.label, d.depends, services(d.node)]), [
    ["outer", 0, ["prices"]],
    ["inner", 1, ["reviews"]],
  ]);
});

Deno.test("issue 31: @defer(if: false) and a client without incremental delivery plan one part", () => {
  const off = plan(`query($d: Boolean!) { products { name ... @defer(if: $d) { price } } }`, {
    variables: { d: false },
  });
  assert.equal(off.op.defers, undefined);
  assert.notEqual(off.planned.plan.node?.kind, "Defer");
  const once = plan(`{ products { name ... @defer { price } } }`, { incremental: false });
  assert.equal(once.planned.defer, undefined);
  assert.deepEqual(services(once.planned.plan.node), ["products", "prices"]);
});

Deno.test("issue 31: a field both deferred and primary belongs to the primary part", () => {
  const { op } = plan(`{ products { price ... @defer { price name } } }`);
  const fields = op.selection.fields[0]!.selection!.fields;
  assert.deepEqual(fields.map((f) => [f.key, f.defer]), [["price", 0], ["name", 1]]);
});

Deno.test("issue 31: an interface-level field takes the least deferred delivery of the same field in a member (the planner may serve both with one fetch)", () => {
  const schema = buildSchema(`
    type Query { i: I }
    interface I { a: Int b: Int }
    type T implements I { a: Int b: Int }
  `);
  const op = normalizeOperation(
    schema,
    parse(`{ i { ... on T { a } ... on I { ... @defer { a b } } } }`),
    { incremental: true },
  );
  const selection = op.selection.fields[0]!.selection!;
  assert.deepEqual(selection.interfaceFields.map((f) => [f.key, f.defer]), [["a", 0], ["b", 1]]);
  assert.deepEqual(selection.byType.get("T")!.map((f) => [f.key, f.defer]), [["a", 0], ["b", 1]]);
});
