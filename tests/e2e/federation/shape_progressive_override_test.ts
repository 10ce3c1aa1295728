/**
 * Progressive `@override` (Federation 2.7, `label: "percent(n)"`): at
 * `percent(100)` the field is always served by the overriding subgraph, at
 * `percent(0)` always by the original one. The subgraph that must not
 * serve a field answers a stale value (-1), so a wrong choice shows in the
 * data.
 *
 * @module
 */
import { ok } from "node:assert/strict";
import {
  type Area,
  describeRequests,
  fetched,
  registerArea,
  type SubgraphDef,
} from "./_harness.ts";
import { monolithCase } from "./_monolith.ts";
import { registerDifferential } from "./_differential.ts";

const PRODUCTS = [
  { id: "p1", name: "Lamp", price: 30, stock: 4 },
  { id: "p2", name: "Desk", price: 120, stock: 0 },
];
const product = (id: string) => PRODUCTS.find((p) => p.id === id)!;

/** The monolith's data. */
export const root = { products: PRODUCTS.map((p) => ({ ...p })) };

const link = (imports: string[]) =>
  `extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ${
    JSON.stringify(imports)
  })\n`;

const NAME = "shape_progressive_override";
const NO_LABELS = "Apollo Gateway ignores override labels: price stays with legacy (stale -1)";

/** `legacy` owns products; `modern` takes `price` at 100 % and `stock` at 0 %. */
const SUBGRAPHS: readonly SubgraphDef[] = [
  {
    name: "legacy",
    typeDefs: link(["@key"]) + `
        type Query {
          products: [Product!]!
        }
        type Product @key(fields: "id") {
          id: ID!
          name: String!
          price: Int!
          stock: Int!
        }
      `,
    resolvers: {
      Query: { products: () => PRODUCTS.map((p) => ({ id: p.id })) },
      Product: {
        __resolveReference: (ref: { id: string }) => ref,
        name: (p: { id: string }) => product(p.id).name,
        price: () => -1,
        stock: (p: { id: string }) => product(p.id).stock,
      },
    },
  },
  {
    name: "modern",
    typeDefs: link(["@key", "@override"]) + `
        type Product @key(fields: "id") {
          id: ID!
          price: Int! @override(from: "legacy", label: "percent(100)")
          stock: Int! @override(from: "legacy", label: "percent(0)")
        }
      `,
    resolvers: {
      Product: {
        __resolveReference: (ref: { id: string }) => ref,
        price: (p: { id: string }) => product(p.id).price,
        stock: () => -1,
      },
    },
  },
];

/** The graph and its cases. */
export const area: Area = {
  name: NAME,
  title: "progressive @override (percent labels)",
  subgraphs: SUBGRAPHS,
  cases: [
    {
      ...monolithCase({ name: NAME, subgraphs: SUBGRAPHS }, {
        name: "percent(100): always the overriding subgraph",
        query: `{ products { name price } }`,
        root,
        note: NO_LABELS,
      }),
      check: (run) => ok(!fetched(run, "legacy", "price"), describeRequests(run)),
    },
    {
      name: "percent(0): always the original subgraph",
      query: `{ products { name stock } }`,
      check: (run) => ok(!fetched(run, "modern", "stock"), describeRequests(run)),
    },
    monolithCase({ name: NAME, subgraphs: SUBGRAPHS }, {
      name: "both labels in one query",
      query: `{ products { id stock price } }`,
      root,
      note: NO_LABELS,
    }),
  ],
};

registerArea(area);
registerDifferential({ area, root });
