/**
 * `@shareable`: fields and root fields resolvable by several subgraphs; the
 * plan picks the subgraph that saves fetches.
 *
 * @module
 */
import { deepStrictEqual, equal } from "node:assert/strict";
import { type Area, type CaseRun, describeRequests, fed2, registerArea } from "./_harness.ts";

const PRODUCTS = [
  { id: "1", name: "Table", dims: { w: 120, h: 75 } },
  { id: "2", name: "Couch", dims: { w: 200, h: 90 } },
];
const PRICES: Record<string, number> = { "1": 300, "2": 900 };
const STOCK: Record<string, number> = { "1": 4, "2": 0 };

const byId = (id: string) => PRODUCTS.find((p) => p.id === id) ?? null;
const subgraphsAsked = (run: CaseRun) => run.requests.map((r) => r.subgraph).sort();

const sharedTypes = `
  type Query {
    products: [Product!]! @shareable
    product(id: ID!): Product @shareable
  }
  type Dims @shareable {
    w: Int!
    h: Int!
  }
`;

/** The graph: two subgraphs sharing the root fields, Product.name and the Dims value type. */
export const area: Area = {
  name: "shareable",
  title: "@shareable",
  subgraphs: [
    {
      name: "pricing",
      typeDefs: fed2("@key", "@shareable") + sharedTypes + `
        type Product @key(fields: "id") {
          id: ID!
          name: String! @shareable
          dims: Dims! @shareable
          price: Int!
        }
      `,
      resolvers: {
        Query: { products: () => PRODUCTS, product: (_: unknown, a: { id: string }) => byId(a.id) },
        Product: {
          __resolveReference: (ref: { id: string }) => byId(ref.id),
          price: (p: { id: string }) => PRICES[p.id],
        },
      },
    },
    {
      name: "stock",
      typeDefs: fed2("@key", "@shareable") + sharedTypes + `
        type Product @key(fields: "id") {
          id: ID!
          name: String! @shareable
          dims: Dims! @shareable
          stock: Int!
        }
      `,
      resolvers: {
        Query: { products: () => PRODUCTS, product: (_: unknown, a: { id: string }) => byId(a.id) },
        Product: {
          __resolveReference: (ref: { id: string }) => byId(ref.id),
          stock: (p: { id: string }) => STOCK[p.id],
        },
      },
    },
  ],
  cases: [
    {
      name:
        "shared root field answered by the one subgraph that has every selected field (pricing)",
      query: `{ products { id name price } }`,
      check: (run) => deepStrictEqual(subgraphsAsked(run), ["pricing"], describeRequests(run)),
    },
    {
      name: "shared root field answered by the one subgraph that has every selected field (stock)",
      query: `{ product(id: "2") { name stock } }`,
      check: (run) => deepStrictEqual(subgraphsAsked(run), ["stock"], describeRequests(run)),
    },
    {
      name: "shareable field and shareable value type resolved where the entity already is",
      query: `{ products { stock dims { w h } name } }`,
      check: (run) => deepStrictEqual(subgraphsAsked(run), ["stock"], describeRequests(run)),
    },
    {
      name: "fields only in different subgraphs: one root fetch plus one entity fetch",
      query: `{ products { name price stock } }`,
      check: (run) => equal(run.requests.length, 2, describeRequests(run)),
    },
    {
      name: "two shared root fields in one operation",
      query: `{ a: product(id: "1") { price } b: product(id: "2") { stock dims { h } } }`,
      check: (run) => equal(run.requests.length, 2, describeRequests(run)),
    },
    {
      name: "two different shared root fields each answered by the subgraph that has their fields",
      query: `{ products { name stock } product(id: "1") { price } }`,
      check: (run) => equal(run.requests.length, 2, describeRequests(run)),
    },
  ],
};

registerArea(area);
