/**
 * `@key`: several keys, composite and nested keys, `resolvable: false`, and
 * choosing a key the current subgraph can actually provide.
 *
 * @module
 */
import { equal, ok } from "node:assert/strict";
import {
  type Area,
  describeRequests,
  fed2,
  fetched,
  registerArea,
  requestsTo,
} from "./_harness.ts";

const PRODUCTS = [
  { upc: "1", sku: "S1", name: "Table" },
  { upc: "2", sku: "S2", name: "Couch" },
];
const VARIANTS: Record<string, string[]> = { "1": ["red", "blue"], "2": ["green"] };
const STOCK: Record<string, number> = { "1/red": 3, "1/blue": 0, "2/green": 7 };
const WAREHOUSES: Record<string, { id: string; region: { code: string } }> = {
  S1: { id: "W1", region: { code: "EU" } },
  S2: { id: "W2", region: { code: "US" } },
};
const MANAGERS: Record<string, string> = { "W1/EU": "Ann", "W2/US": "Bob" };

type Ref = { upc?: string; sku?: string };

/** The graph: products (keys upc and sku), inventory (sku only), logistics (nested key), reviews (resolvable: false). */
export const area: Area = {
  name: "keys",
  title: "@key",
  subgraphs: [
    {
      name: "products",
      typeDefs: fed2("@key", "@shareable") + `
        type Query {
          products: [Product!]!
          product(upc: String!): Product
          productGrid: [[Product!]!]!
        }
        type Product @key(fields: "upc") @key(fields: "sku") {
          upc: String!
          sku: String!
          name: String!
          variants: [Variant!]!
        }
        type Variant @key(fields: "upc color") {
          upc: String!
          color: String!
        }
      `,
      resolvers: {
        Query: {
          products: () => PRODUCTS,
          productGrid: () => [[PRODUCTS[1]], [], [PRODUCTS[0], PRODUCTS[1]]],
          product: (_: unknown, { upc }: { upc: string }) =>
            PRODUCTS.find((p) => p.upc === upc) ?? null,
        },
        Product: {
          __resolveReference: (ref: Ref) =>
            PRODUCTS.find((p) => (ref.upc !== undefined ? p.upc === ref.upc : p.sku === ref.sku)) ??
              null,
          variants: (p: { upc: string }) =>
            (VARIANTS[p.upc] ?? []).map((color) => ({ upc: p.upc, color })),
        },
      },
    },
    {
      name: "inventory",
      typeDefs: fed2("@key", "@shareable") + `
        type Product @key(fields: "sku") {
          sku: String!
          inStock: Boolean!
          warehouse: Warehouse
        }
        type Variant @key(fields: "upc color") {
          upc: String!
          color: String!
          stock: Int!
        }
        type Warehouse @key(fields: "id region { code }") {
          id: ID!
          region: Region!
        }
        type Region @shareable {
          code: String!
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (ref: { sku: string }) => ({ sku: ref.sku }),
          inStock: (p: { sku: string }) => p.sku === "S1",
          warehouse: (p: { sku: string }) => WAREHOUSES[p.sku] ?? null,
        },
        Variant: {
          __resolveReference: (ref: { upc: string; color: string }) => ref,
          stock: (v: { upc: string; color: string }) => STOCK[`${v.upc}/${v.color}`] ?? 0,
        },
      },
    },
    {
      name: "logistics",
      typeDefs: fed2("@key", "@shareable") + `
        type Warehouse @key(fields: "id region { code }") {
          id: ID!
          region: Region!
          manager: String!
        }
        type Region @shareable {
          code: String!
        }
      `,
      resolvers: {
        Warehouse: {
          __resolveReference: (ref: { id: string; region: { code: string } }) => ref,
          manager: (w: { id: string; region: { code: string } }) =>
            MANAGERS[`${w.id}/${w.region.code}`] ?? "nobody",
        },
      },
    },
    {
      name: "reviews",
      typeDefs: fed2("@key") + `
        type Query {
          reviews: [Review!]!
          orphanReviews: [Review!]!
        }
        type Review {
          id: ID!
          body: String!
          product: Product!
        }
        type Product @key(fields: "upc", resolvable: false) {
          upc: String!
        }
      `,
      resolvers: {
        Query: {
          reviews: () => [
            { id: "r1", body: "Great", product: { upc: "1" } },
            { id: "r2", body: "Meh", product: { upc: "2" } },
            { id: "r3", body: "Again", product: { upc: "1" } },
          ],
          orphanReviews: () => [
            { id: "r9", body: "Gone", product: { upc: "9" } },
            { id: "r1", body: "Great", product: { upc: "1" } },
          ],
        },
      },
    },
  ],
  cases: [
    {
      name: "entity field through the other subgraph's only key (sku, not upc)",
      query: `{ product(upc: "1") { upc name inStock } }`,
      check: (run) => {
        const inv = requestsTo(run, "inventory");
        equal(inv.length, 1, describeRequests(run));
        const reps = inv[0]!.variables.representations as Record<string, unknown>[];
        ok(
          reps.every((r) => r.sku !== undefined && r.__typename === "Product"),
          JSON.stringify(reps),
        );
      },
    },
    {
      name: "key fields fetched for the join are not in the response",
      query: `{ products { inStock } }`,
    },
    {
      name: "resolvable: false reference resolved by the subgraph that owns the key",
      query: `{ reviews { body product { upc name } } }`,
    },
    {
      name: "resolvable: false reference: its key field comes from the referencing subgraph alone",
      query: `{ reviews { id product { upc } } }`,
      check: (run) => {
        equal(run.requests.length, 1, describeRequests(run));
        equal(run.requests[0]!.subgraph, "reviews");
      },
    },
    {
      name:
        "key chosen by what the current subgraph can provide (upc → products → sku → inventory)",
      query: `{ reviews { id product { name inStock } } }`,
      check: (run) => {
        ok(fetched(run, "products", "sku"), describeRequests(run));
      },
    },
    {
      name: "batched entity fetch sends each distinct representation once and fans results out",
      query: `{ reviews { id product { name } } }`,
      note: "Apollo Gateway sends duplicate representations (fails the check); " +
        "the issue requires each distinct entity once",
      check: (run) => {
        const products = requestsTo(run, "products");
        equal(products.length, 1, describeRequests(run));
        const reps = products[0]!.variables.representations as unknown[];
        equal(reps.length, 2, JSON.stringify(reps));
      },
    },
    {
      name: "composite key (two fields) joins Variant across subgraphs",
      query: `{ products { upc variants { color stock } } }`,
    },
    {
      name: "nested key (id region { code }) joins Warehouse across subgraphs",
      query: `{ products { name warehouse { id manager } } }`,
    },
    {
      name: "three-hop entity chain keeps list order and aliases",
      query: `{ all: products { n: name w: warehouse { m: manager region { code } } } }`,
      ordered: true,
    },
    {
      name: "client alias named like a key field does not clash with the key fetched for the join",
      query: `{ products { sku: name inStock } }`,
      override: {
        note: "Apollo Gateway answers the key value (S1) under the client's alias sku instead of " +
          "name: the key it fetches for the join overwrites the aliased field",
        response: {
          data: { products: [{ sku: "Table", inStock: true }, { sku: "Couch", inStock: false }] },
        },
      },
    },
    {
      name: "client aliases swapping key field names on an entity reached by reference",
      query: `{ reviews { product { upc: name name: upc inStock } } }`,
    },
    {
      name: "entity fetched by one key and joined by another in one selection",
      query: `{ product(upc: "2") { sku inStock warehouse { manager } variants { stock } } }`,
    },
    {
      name:
        "entity missing in the hop that converts keys (upc → sku): later hops skip it, no error",
      query: `{ orphanReviews { id product { upc warehouse { manager } } } }`,
    },
    {
      name: "entities in a list of lists joined at every position",
      query: `{ productGrid { name inStock } }`,
    },
    {
      name: "entity fetches under two aliased root fields",
      query: `{ a: products { inStock } b: product(upc: "2") { upc inStock } }`,
    },
    {
      name: "only __typename of a referenced entity: no entity fetch",
      query: `{ reviews { product { __typename upc } } }`,
      check: (run) => equal(run.requests.length, 1, describeRequests(run)),
    },
    {
      name: "entity list nested in an entity list (reviews → product → variants → stock)",
      query: `{ reviews { id product { variants { color stock } } } }`,
    },
    {
      name:
        "fragments without type condition under @include mixing entity fields of three subgraphs",
      query: `query Q($on: Boolean = true) {
        product(upc: "1") { ... on Product { inStock } ... @include(if: $on) { warehouse { region { code } manager } } }
      }`,
    },
  ],
};

registerArea(area);
