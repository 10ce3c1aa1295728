import assert from "node:assert/strict";
import { parse } from "graphql";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import { normalizeOperation } from "../../../lib/engine/prepare/normalize.ts";
import { type PlanNode, planOperation } from "../../../lib/engine/plan/mod.ts";

const DEMO = buildSupergraph(
  Deno.readTextFileSync(new URL("../../../schema/supergraph.graphql", import.meta.url)),
);

function plan(query: string, variables: Record<string, unknown> = {}): PlanNode | null {
  const op = normalizeOperation(DEMO.apiSchema, parse(query), { variables });
  return planOperation(DEMO, op).plan.node;
}

const entities = "query($representations:[_Any!]!){_entities(representations:$representations)";

Deno.test("issue 3: a root field of one subgraph is one root fetch", () => {
  assert.deepEqual(plan(`{ users { id name } }`), {
    kind: "Fetch",
    serviceName: "accounts",
    variableUsages: [],
    operation: "query{users{id name}}",
    operationKind: "query",
  });
});

Deno.test("issue 3: demo nested query crosses four subgraphs: root fetch, then inventory in parallel with the reviews → accounts sequence", () => {
  const node = plan(
    `{ topProducts(first: 2) { name inStock shippingEstimate reviews { body author { name } } } }`,
  );
  assert.deepEqual(node, {
    kind: "Sequence",
    nodes: [
      {
        kind: "Fetch",
        serviceName: "products",
        variableUsages: [],
        operation: "query{topProducts(first:2){name __typename upc sku price weight}}",
        operationKind: "query",
      },
      {
        kind: "Parallel",
        nodes: [
          {
            kind: "Flatten",
            path: ["topProducts", "@"],
            node: {
              kind: "Fetch",
              serviceName: "inventory",
              variableUsages: [],
              operation: `${entities}{...on Product{inStock shippingEstimate}}}`,
              operationKind: "query",
              requires: "...on Product{__typename upc sku price weight}",
            },
          },
          {
            kind: "Sequence",
            nodes: [
              {
                kind: "Flatten",
                path: ["topProducts", "@"],
                node: {
                  kind: "Fetch",
                  serviceName: "reviews",
                  variableUsages: [],
                  operation: `${entities}{...on Product{reviews{body author{__typename id}}}}}`,
                  operationKind: "query",
                  requires: "...on Product{__typename upc}",
                },
              },
              {
                kind: "Flatten",
                path: ["topProducts", "@", "reviews", "@", "author"],
                node: {
                  kind: "Fetch",
                  serviceName: "accounts",
                  variableUsages: [],
                  operation: `${entities}{...on User{name}}}`,
                  operationKind: "query",
                  requires: "...on User{__typename id}",
                },
              },
            ],
          },
        ],
      },
    ],
  });
});

Deno.test("issue 3: @key choice: inventory's only key (upc sku) is fetched from products first", () => {
  const node = plan(`{ user(id: "1") { name reviews { product { name inStock } } } }`);
  assert.equal(node?.kind, "Sequence");
  const nodes = node?.kind === "Sequence" ? node.nodes : [];
  assert.deepEqual(
    nodes.map((n) => n.kind === "Flatten" ? [n.node.serviceName, n.path.join(".")] : [n.kind]),
    [
      ["Fetch"],
      ["reviews", "user"],
      ["products", "user.reviews.@.product"],
      ["inventory", "user.reviews.@.product"],
    ],
  );
  const products = nodes[2];
  assert.equal(
    products?.kind === "Flatten" ? products.node.operation : "",
    `${entities}{...on Product{name sku}}}`,
  );
  const inventory = nodes[3];
  assert.equal(
    inventory?.kind === "Flatten" ? inventory.node.requires : "",
    "...on Product{__typename upc sku}",
  );
});

Deno.test("issue 3: independent root fields of two subgraphs run in parallel", () => {
  const node = plan(`{ users { id } warehouses { id } }`);
  assert.equal(node?.kind, "Parallel");
  assert.deepEqual(
    node?.kind === "Parallel" ? node.nodes.map((n) => n.kind === "Fetch" && n.serviceName) : [],
    ["accounts", "inventory"],
  );
});

Deno.test("issue 3: @skip/@include with variables: skipped fields are not planned", () => {
  const query =
    `query($withStock: Boolean!) { topProducts { name inStock @include(if: $withStock) } }`;
  assert.deepEqual(plan(query, { withStock: false }), {
    kind: "Fetch",
    serviceName: "products",
    variableUsages: [],
    operation: "query{topProducts{name}}",
    operationKind: "query",
  });
  assert.equal(plan(query, { withStock: true })?.kind, "Sequence");
});

Deno.test("issue 3: variables used by a fetch are declared and listed sorted", () => {
  const node = plan(
    `query($n: Int, $upc: ID!) { product(upc: $upc) { name } topProducts(first: $n) { upc } }`,
  );
  assert.deepEqual(node, {
    kind: "Fetch",
    serviceName: "products",
    variableUsages: ["n", "upc"],
    operation: "query($n:Int,$upc:ID!){product(upc:$upc){name} topProducts(first:$n){upc}}",
    operationKind: "query",
  });
});

Deno.test("issue 3: mutation: consecutive root fields of one subgraph share a mutation fetch, entity fetches follow", () => {
  const node = plan(
    `mutation($i: AddReviewInput!) { a: addReview(input: $i) { id product { name } } b: addReview(input: $i) { id } }`,
  );
  assert.deepEqual(node, {
    kind: "Sequence",
    nodes: [
      {
        kind: "Fetch",
        serviceName: "reviews",
        variableUsages: ["i"],
        operation:
          "mutation($i:AddReviewInput!){a:addReview(input:$i){id product{__typename upc}} b:addReview(input:$i){id}}",
        operationKind: "mutation",
      },
      {
        kind: "Flatten",
        path: ["a", "product"],
        node: {
          kind: "Fetch",
          serviceName: "products",
          variableUsages: [],
          operation: `${entities}{...on Product{name}}}`,
          operationKind: "query",
          requires: "...on Product{__typename upc}",
        },
      },
    ],
  });
});

Deno.test("issue 3: plans are deterministic: equal inputs give byte-equal JSON", () => {
  const query = `{ topProducts { name reviews { author { name reviews { body } } } } }`;
  // A second model built from the same text: no state of one model or planner run leaks in.
  const again = buildSupergraph(
    Deno.readTextFileSync(new URL("../../../schema/supergraph.graphql", import.meta.url)),
  );
  const other = planOperation(again, normalizeOperation(again.apiSchema, parse(query))).plan.node;
  assert.equal(JSON.stringify(plan(query)), JSON.stringify(other));
  assert.equal(JSON.stringify(plan(query)), JSON.stringify(plan(query)));
});

Deno.test("issue 3: entity fetches to one subgraph at one plan level share one _entities call, a leaf joins a deeper one (federation benchmark: 13 fetches → 6)", async () => {
  const { BENCH_QUERY, BENCH_SUPERGRAPH } = await import("../../../bench/_federation_fixture.ts");
  const model = buildSupergraph(BENCH_SUPERGRAPH);
  const node = planOperation(model, normalizeOperation(model.apiSchema, parse(BENCH_QUERY))).plan
    .node;
  assert.equal(node?.kind, "Sequence");
  if (node?.kind !== "Sequence") return;
  const levels = node.nodes.map((level) =>
    (level.kind === "Parallel" ? level.nodes : [level]).map((n) =>
      n.kind === "Flatten"
        ? `${n.node.serviceName} ${(n.paths ?? [n.path]).map((p) => p.join(".")).join(" + ")}`
        : n.kind === "Fetch"
        ? n.serviceName
        : n.kind
    )
  );
  const product = "reviews.@.author.reviews.@.product";
  assert.deepEqual(levels, [
    ["accounts", "products"],
    ["reviews users.@ + topProducts.@"],
    [
      `products users.@.reviews.@.product + users.@.reviews.@.product.${product} + topProducts.@.${product}`,
      "accounts users.@.reviews.@.product.reviews.@.author + topProducts.@.reviews.@.author",
    ],
    [
      `inventory users.@.reviews.@.product + users.@.reviews.@.product.${product} + topProducts.@.${product} + topProducts.@`,
    ],
  ]);
});
