/**
 * Features in combination: `@requires` + `@provides` + `@interfaceObject` in
 * one query, provides on an entity-interface member, a skipped requires
 * field, and a subgraph error inside a requires chain.
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

const ACCOUNTS = [
  { __typename: "User", id: "u1", name: "Ada", handle: "@ada" },
  { __typename: "User", id: "u2", name: "Bob", handle: "@bob" },
  { __typename: "Org", id: "o1", name: "Acme" },
];
const TRUST: Record<string, number> = { u1: 9, u2: 4, o1: 7 };
const PRODUCTS = [
  { upc: "1", name: "Table", price: 899, weight: 100 },
  { upc: "2", name: "Couch", price: 1299, weight: 1000 },
  { upc: "3", name: "Chair", price: 54, weight: 50 },
];
const REVIEWS = [
  { id: "r1", body: "Love it", authorId: "u1", upc: "1" },
  { id: "r2", body: "Wobbly", authorId: "u2", upc: "3" },
  { id: "r3", body: "Pricey", authorId: "u1", upc: "2" },
];
const account = (id: string) => ACCOUNTS.find((a) => a.id === id) ?? null;

/** The graph: accounts (entity interface), ratings (@interfaceObject), reviews (@provides), products, shipping (@requires). */
export const area: Area = {
  name: "combinations",
  title: "features in combination",
  subgraphs: [
    {
      name: "accounts",
      typeDefs: fed2("@key") + `
        type Query {
          accounts: [Account!]!
        }
        interface Account @key(fields: "id") {
          id: ID!
          name: String!
        }
        type User implements Account @key(fields: "id") {
          id: ID!
          name: String!
          handle: String!
        }
        type Org implements Account @key(fields: "id") {
          id: ID!
          name: String!
        }
      `,
      resolvers: {
        Query: { accounts: () => ACCOUNTS },
        Account: {
          __resolveType: (a: { __typename: string }) => a.__typename,
          __resolveReference: (r: { id: string }) => account(r.id),
        },
        User: { __resolveReference: (r: { id: string }) => account(r.id) },
        Org: { __resolveReference: (r: { id: string }) => account(r.id) },
      },
    },
    {
      name: "ratings",
      typeDefs: fed2("@key", "@interfaceObject", "@external", "@requires") + `
        type Account @key(fields: "id") @interfaceObject {
          id: ID!
          trust: Int!
          name: String! @external
          greeting: String! @requires(fields: "name")
        }
      `,
      resolvers: {
        Account: {
          __resolveReference: (r: { id: string }) => r,
          trust: (a: { id: string }) => TRUST[a.id] ?? 0,
          greeting: (a: { name: string }) => `Hello ${a.name}`,
        },
      },
    },
    {
      name: "reviews",
      typeDefs: fed2("@key", "@external", "@provides") + `
        type Query {
          reviews: [Review!]!
        }
        type Review {
          id: ID!
          body: String!
          author: User! @provides(fields: "handle")
          product: Product!
        }
        type User @key(fields: "id") {
          id: ID!
          handle: String! @external
        }
        type Product @key(fields: "upc") {
          upc: String!
        }
      `,
      resolvers: {
        Query: { reviews: () => REVIEWS },
        Review: {
          author: (r: { authorId: string }) => ({
            id: r.authorId,
            handle: account(r.authorId)?.handle,
          }),
          product: (r: { upc: string }) => ({ upc: r.upc }),
        },
      },
    },
    {
      name: "products",
      typeDefs: fed2("@key") + `
        type Product @key(fields: "upc") {
          upc: String!
          name: String!
          price: Int!
          weight: Int!
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (r: { upc: string }) => PRODUCTS.find((p) => p.upc === r.upc),
        },
      },
    },
    {
      name: "shipping",
      typeDefs: fed2("@key", "@external", "@requires") + `
        type Product @key(fields: "upc") {
          upc: String!
          price: Int! @external
          weight: Int! @external
          shipping: Int @requires(fields: "price weight")
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (r: { upc: string }) => r,
          shipping: (p: { upc: string; price: number; weight: number }) => {
            if (p.upc === "3") throw new Error("no shipping for 3");
            return p.price > 1000 ? 0 : p.weight / 2;
          },
        },
      },
    },
  ],
  cases: [
    {
      name: "requires + provides + interface object in one query",
      query: `{ reviews { body author { __typename handle trust } product { name shipping } } }`,
      ordered: true,
      check: (run) => {
        equal(requestsTo(run, "accounts").length, 0, describeRequests(run));
        ok(fetched(run, "ratings", "trust"), describeRequests(run));
      },
    },
    {
      name: "provided field plus interface-owner and interface-object fields of the same entity",
      query: `{ reviews { author { handle name trust } } }`,
      override: {
        note: "Apollo Gateway takes Account.name from the @interfaceObject subgraph, where it " +
          "is only @external (for a @requires), and fails with a non-null error",
        response: {
          data: {
            reviews: [
              { author: { handle: "@ada", name: "Ada", trust: 9 } },
              { author: { handle: "@bob", name: "Bob", trust: 4 } },
              { author: { handle: "@ada", name: "Ada", trust: 9 } },
            ],
          },
        },
      },
      check: (run) => ok(!fetched(run, "accounts", "handle"), describeRequests(run)),
    },
    {
      name: "entity interface root field with @interfaceObject field and member fragments",
      query: `{ accounts { __typename name trust ... on User { handle } } }`,
    },
    {
      name: "requires field under @include(if: false): its subgraph is not asked",
      query:
        `query Q($ship: Boolean = false) { reviews { product { name shipping @include(if: $ship) } } }`,
      check: (run) => equal(requestsTo(run, "shipping").length, 0, describeRequests(run)),
    },
    {
      name: "subgraph error inside a requires chain re-pathed to the client path",
      query: `{ reviews { id product { upc s: shipping } } }`,
    },
    {
      name: "@interfaceObject field with @requires on the interface owner's field",
      query: `{ accounts { __typename greeting } reviews { author { handle greeting } } }`,
      override: {
        note: "Apollo Gateway does not send the required name to the @interfaceObject " +
          'subgraph (greeting "Hello undefined")',
        response: {
          data: {
            accounts: [
              { __typename: "User", greeting: "Hello Ada" },
              { __typename: "User", greeting: "Hello Bob" },
              { __typename: "Org", greeting: "Hello Acme" },
            ],
            reviews: [
              { author: { handle: "@ada", greeting: "Hello Ada" } },
              { author: { handle: "@bob", greeting: "Hello Bob" } },
              { author: { handle: "@ada", greeting: "Hello Ada" } },
            ],
          },
        },
      },
    },
  ],
};

registerArea(area);
