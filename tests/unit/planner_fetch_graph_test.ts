import assert from "node:assert/strict";
import { compose, fetchesOf, planQuery } from "./_planner_fixture.ts";
import { PlanningError } from "../../lib/engine/plan.ts";
import { REQUIRES_CHAIN } from "./_planner_graphs.ts";

const link = (imports: string[]) =>
  `extend schema @link(url: "https://specs.apollo.dev/federation/v2.8", import: ${
    JSON.stringify(imports)
  })\n`;

const CONTEXT = compose({
  customers: link(["@key", "@shareable"]) + `
    type Query { customers: [Customer!]! }
    type Customer @key(fields: "id") { id: ID! currency: String! @shareable }`,
  orders: link(["@key", "@shareable", "@context", "@fromContext"]) + `
    type Customer @key(fields: "id") @context(name: "customer") {
      id: ID!
      currency: String! @shareable
      orders: [Order!]!
    }
    type Order @key(fields: "id") {
      id: ID!
      amount: Int!
      total(currency: String @fromContext(field: "$customer { currency }")): String!
    }`,
});

Deno.test("issue 13 fetch graph: a field taking @fromContext arguments fails planning instead of being sent without them", () => {
  assert.throws(
    () => planQuery(CONTEXT, `{ customers { orders { total } } }`),
    (e) => e instanceof PlanningError && /@fromContext/.test(e.message),
  );
  // The rest of the graph plans.
  assert.equal(
    fetchesOf(planQuery(CONTEXT, `{ customers { orders { amount } } }`).plan.node).length,
    2,
  );
});

Deno.test("issue 13 fetch graph: @requires fields may come from the subgraph being entered (A → B → A)", () => {
  const fetches = fetchesOf(planQuery(compose(REQUIRES_CHAIN), `{ products { label } }`).plan.node);
  assert.deepEqual(fetches.map((f) => f.split(" ")[0]), [
    "catalog",
    "pricing",
    "catalog",
    "pricing",
  ]);
});
