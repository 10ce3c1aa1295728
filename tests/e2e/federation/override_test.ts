/**
 * `@override`: a field moved to another subgraph is fetched from there only,
 * also when the `from` subgraph does not exist.
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

const PRODUCTS = [{ id: "1", name: "Table" }, { id: "2", name: "Couch" }];

/** The graph: `legacy` lost `price` and `Query.banner` to `modern`; `modern` also overrides from `ghost` (absent). */
export const area: Area = {
  name: "override",
  title: "@override",
  subgraphs: [
    {
      name: "legacy",
      typeDefs: fed2("@key", "@shareable") + `
        type Query {
          products: [Product!]!
          banner: String
        }
        type Product @key(fields: "id") {
          id: ID!
          name: String!
          price: Int!
          weight: Int!
          shipping: Int!
        }
      `,
      resolvers: {
        Query: { products: () => PRODUCTS, banner: () => "legacy banner" },
        Product: {
          __resolveReference: (ref: { id: string }) => PRODUCTS.find((p) => p.id === ref.id),
          price: () => -1,
          weight: (p: { id: string }) => Number(p.id) * 7,
          shipping: () => -1,
        },
      },
    },
    {
      name: "modern",
      typeDefs: fed2("@key", "@override", "@external", "@requires") + `
        type Query {
          banner: String @override(from: "legacy")
        }
        type Product @key(fields: "id") {
          id: ID!
          price: Int! @override(from: "legacy")
          rating: Int! @override(from: "ghost")
          weight: Int! @external
          shipping: Int! @override(from: "legacy") @requires(fields: "weight")
        }
      `,
      resolvers: {
        Query: { banner: () => "modern banner" },
        Product: {
          __resolveReference: (ref: { id: string }) => ref,
          price: (p: { id: string }) => Number(p.id) * 100,
          rating: (p: { id: string }) => Number(p.id) + 3,
          shipping: (p: { weight: number }) => p.weight * 2,
        },
      },
    },
  ],
  cases: [
    {
      name: "overridden entity field fetched from the overriding subgraph",
      query: `{ products { name price } }`,
      check: (run) => {
        ok(fetched(run, "modern", "price"), describeRequests(run));
        ok(!fetched(run, "legacy", "price"), describeRequests(run));
      },
    },
    {
      name: "overridden root field fetched from the overriding subgraph",
      query: `{ banner }`,
      check: (run) => {
        equal(requestsTo(run, "legacy").length, 0, describeRequests(run));
      },
    },
    {
      name: "override from a subgraph that does not exist",
      query: `{ products { id rating } }`,
    },
    {
      name: "overridden fields together with the old subgraph's own fields",
      query: `{ banner products { id name price rating } }`,
      check: (run) => ok(!fetched(run, "legacy", "price"), describeRequests(run)),
    },
    {
      name: "overridden field with @requires on a field of the old subgraph",
      query: `{ products { name shipping } }`,
      check: (run) => {
        ok(fetched(run, "legacy", "weight"), describeRequests(run));
        ok(!fetched(run, "legacy", "shipping"), describeRequests(run));
      },
    },
  ],
};

registerArea(area);
