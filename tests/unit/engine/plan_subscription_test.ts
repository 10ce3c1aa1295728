import assert from "node:assert/strict";
import { parse } from "graphql";
import { composeSupergraph } from "../../../lib/compose/mod.ts";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import { normalizeOperation } from "../../../lib/engine/prepare/normalize.ts";
import { planOperation } from "../../../lib/engine/plan/mod.ts";
import { rootFetchOf } from "../../../lib/engine/subscriptions/subscribe.ts";

const LINK =
  `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])\n`;
const composed = composeSupergraph([
  {
    name: "reviews",
    url: "http://reviews/graphql",
    sdl: LINK + `type Query { n: Int }
      type Subscription { reviewAdded: Review }
      type Review { id: ID! product: Product! }
      type Product @key(fields: "upc", resolvable: false) { upc: String! }`,
  },
  {
    name: "products",
    url: "http://products/graphql",
    sdl: LINK + `type Query { p: Product }
      type Product @key(fields: "upc") { upc: String! name: String! }`,
  },
]);
assert.ok(composed.ok);
const MODEL = buildSupergraph(composed.supergraphSdl);

function plan(query: string) {
  return planOperation(MODEL, normalizeOperation(MODEL.apiSchema, parse(query)));
}

Deno.test("issue 29: a subscription's plan is the subgraph subscription as root fetch, then the entity fetches that depend on it", () => {
  const planned = plan(`subscription { reviewAdded { id product { name } } }`);
  assert.deepEqual(planned.plan.node, {
    kind: "Sequence",
    nodes: [
      {
        kind: "Fetch",
        serviceName: "reviews",
        variableUsages: [],
        operation: "subscription{reviewAdded{id product{__typename upc}}}",
        operationKind: "subscription",
      },
      {
        kind: "Flatten",
        path: ["reviewAdded", "product"],
        node: {
          kind: "Fetch",
          serviceName: "products",
          variableUsages: [],
          operation:
            "query($representations:[_Any!]!){_entities(representations:$representations){...on Product{name}}}",
          operationKind: "query",
          requires: "...on Product{__typename upc}",
        },
      },
    ],
  });
  const root = rootFetchOf(planned.step);
  assert.equal(root?.subgraph, "reviews");
  assert.equal(root?.node.operationKind, "subscription");
});

Deno.test("issue 29: a subscription served by one subgraph is one root fetch, and a query plan has no subscription root", () => {
  const planned = plan(`subscription { reviewAdded { id } }`);
  assert.equal(planned.plan.node?.kind, "Fetch");
  assert.equal(rootFetchOf(planned.step)?.node.operation, "subscription{reviewAdded{id}}");
  assert.equal(rootFetchOf(plan(`{ p { name } }`).step), null);
});
