/**
 * The classic four-subgraph Federation 1 graph (v1 SDLs: `extend type`,
 * `@extends`, `@external` keys, v1 `@requires`/`@provides`) and its cases,
 * shared by `fed1_test.ts` (composed) and `fed1_supergraph_test.ts` (a
 * hand-written Federation 1 supergraph, join v0.1).
 *
 * @module
 */
import { equal } from "node:assert/strict";
import type { Area } from "./_harness.ts";
import { describeRequests, requestsTo } from "./_harness.ts";

const USERS = [{ id: "1", name: "Ada Lovelace", username: "@ada" }, {
  id: "2",
  name: "Alan Turing",
  username: "@complete",
}];
const PRODUCTS = [
  { upc: "1", name: "Table", price: 899, weight: 100 },
  { upc: "2", name: "Couch", price: 1299, weight: 1000 },
  { upc: "3", name: "Chair", price: 54, weight: 50 },
];
const REVIEWS = [
  { id: "1", authorID: "1", product: { upc: "1" }, body: "Love it!" },
  { id: "2", authorID: "1", product: { upc: "2" }, body: "Too expensive." },
  { id: "3", authorID: "2", product: { upc: "3" }, body: "Could be better." },
  { id: "4", authorID: "2", product: { upc: "1" }, body: "Prefer something else." },
];
const usernameOf = (id: string) => USERS.find((u) => u.id === id)?.username;

/** The graph and its cases. */
export const fed1Graph: Pick<Area, "subgraphs" | "cases"> = {
  subgraphs: [
    {
      name: "accounts",
      typeDefs: `
        extend type Query {
          me: User
        }
        type User @key(fields: "id") {
          id: ID!
          name: String
          username: String
        }
      `,
      resolvers: {
        Query: { me: () => USERS[0] },
        User: { __resolveReference: (r: { id: string }) => USERS.find((u) => u.id === r.id) },
      },
    },
    {
      name: "reviews",
      typeDefs: `
        type Review @key(fields: "id") {
          id: ID!
          body: String
          author: User @provides(fields: "username")
          product: Product
        }
        extend type User @key(fields: "id") {
          id: ID! @external
          username: String @external
          reviews: [Review]
        }
        extend type Product @key(fields: "upc") {
          upc: String! @external
          reviews: [Review]
        }
      `,
      resolvers: {
        Review: {
          author: (r: { authorID: string }) => ({
            id: r.authorID,
            username: usernameOf(r.authorID),
          }),
        },
        User: {
          reviews: (u: { id: string }) => REVIEWS.filter((r) => r.authorID === u.id),
        },
        Product: {
          reviews: (p: { upc: string }) => REVIEWS.filter((r) => r.product.upc === p.upc),
        },
      },
    },
    {
      name: "products",
      typeDefs: `
        extend type Query {
          topProducts(first: Int = 5): [Product]
        }
        type Product @key(fields: "upc") {
          upc: String!
          name: String
          price: Int
          weight: Int
        }
      `,
      resolvers: {
        Query: { topProducts: (_: unknown, a: { first: number }) => PRODUCTS.slice(0, a.first) },
        Product: {
          __resolveReference: (r: { upc: string }) => PRODUCTS.find((p) => p.upc === r.upc),
        },
      },
    },
    {
      name: "inventory",
      typeDefs: `
        type Product @extends @key(fields: "upc") {
          upc: String! @external
          weight: Int @external
          price: Int @external
          inStock: Boolean
          shippingEstimate: Int @requires(fields: "price weight")
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (r: { upc: string }) => ({ ...r, inStock: r.upc !== "2" }),
          shippingEstimate: (p: { price: number; weight: number }) =>
            p.price > 1000 ? 0 : Math.round(p.weight * 0.5),
        },
      },
    },
  ],
  cases: [
    {
      name: "extend type Query root fields and entity fields across v1 subgraphs",
      query: `{ me { name reviews { body product { name } } } }`,
    },
    {
      name: "@extends entity with @requires on @external fields",
      query: `{ topProducts { name inStock shippingEstimate } }`,
    },
    {
      name: "v1 @provides: provided username not fetched from accounts",
      query: `{ topProducts(first: 2) { upc reviews { author { username } } } }`,
      check: (run) => equal(requestsTo(run, "accounts").length, 0, describeRequests(run)),
    },
    {
      name: "v1 entity cycle (User → Review → User) with a field beyond the provides",
      query: `{ me { username reviews { author { name username } } } }`,
    },
    {
      name: "v1 @external key of an extended type answered without asking its owner",
      query: `{ me { reviews { product { upc } } } }`,
      check: (run) => equal(requestsTo(run, "products").length, 0, describeRequests(run)),
    },
  ],
};
