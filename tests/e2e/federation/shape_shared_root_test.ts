/**
 * Issue 13, shape 2: `@shareable` root fields and aliases. `product` is a
 * shareable root field of three subgraphs whose value type `Product` has
 * different fields in each: every alias (and every part of one selection)
 * must go to a subgraph that serves it. `reviews` is shared by two
 * subgraphs, one of which `@provides` the author's name; `users` owns the
 * name behind a `resolvable: false` key, so the providing subgraph is the
 * only way to the name from `reviews`.
 *
 * @module
 */
import { equal } from "node:assert/strict";
import { type Area, describeRequests, fed2, registerArea, requestsTo } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const PRODUCT = { id: "1", name: "Lamp", price: 30, category: "home" };
const USERS = [{ id: "u1", name: "Ada" }, { id: "u2", name: "Bob" }];
const REVIEWS = [
  { id: "r1", body: "Great", author: "u1" },
  { id: "r2", body: "Meh", author: "u2" },
];
const user = (id: string) => USERS.find((u) => u.id === id)!;

/** The monolith's data. */
export const root = {
  product: { ...PRODUCT },
  reviews: REVIEWS.map((r) => ({ id: r.id, body: r.body, author: { ...user(r.author) } })),
  users: USERS.map((u) => ({ ...u })),
};

/** The graph: `names`, `prices`, `categories` share `product`; `feed` and `reviews` share `reviews`. */
export const area: Area = {
  name: "shape_shared_root",
  title: "issue 13 shape 2: @shareable root fields, aliases and @provides",
  subgraphs: [
    {
      name: "names",
      typeDefs: fed2("@shareable") + `
        type Query {
          product: Product @shareable
        }
        type Product @shareable {
          id: ID!
          name: String!
        }
      `,
      resolvers: { Query: { product: () => PRODUCT } },
    },
    {
      name: "prices",
      typeDefs: fed2("@shareable") + `
        type Query {
          product: Product @shareable
        }
        type Product @shareable {
          id: ID!
          price: Int!
        }
      `,
      resolvers: { Query: { product: () => PRODUCT } },
    },
    {
      name: "categories",
      typeDefs: fed2("@shareable") + `
        type Query {
          product: Product @shareable
        }
        type Product @shareable {
          id: ID!
          category: String!
        }
      `,
      resolvers: { Query: { product: () => PRODUCT } },
    },
    {
      name: "users",
      typeDefs: fed2("@key", "@shareable") + `
        type Query {
          users: [User!]!
        }
        type User @key(fields: "id", resolvable: false) {
          id: ID!
          name: String! @shareable
        }
      `,
      resolvers: { Query: { users: () => USERS } },
    },
    {
      name: "feed",
      typeDefs: fed2("@key", "@shareable") + `
        type Query {
          reviews: [Review!]! @shareable
        }
        type Review @key(fields: "id") {
          id: ID!
          body: String! @shareable
          author: User! @shareable
        }
        type User @key(fields: "id", resolvable: false) {
          id: ID!
        }
      `,
      resolvers: {
        Query: { reviews: () => REVIEWS.map((r) => ({ ...r, author: { id: r.author } })) },
        Review: {
          __resolveReference: (ref: { id: string }) => REVIEWS.find((r) => r.id === ref.id),
        },
      },
    },
    {
      name: "reviews",
      typeDefs: fed2("@key", "@shareable", "@provides", "@external") + `
        type Query {
          reviews: [Review!]! @shareable @provides(fields: "author { name }")
        }
        type Review @key(fields: "id") {
          id: ID!
          body: String! @shareable
          author: User! @shareable
        }
        type User @key(fields: "id") {
          id: ID!
          name: String! @external
        }
      `,
      resolvers: {
        Query: {
          reviews: () =>
            REVIEWS.map((r) => ({ ...r, author: { id: r.author, name: user(r.author).name } })),
        },
        Review: {
          __resolveReference: (ref: { id: string }) => {
            const review = REVIEWS.find((r) => r.id === ref.id)!;
            return { ...review, author: { id: review.author } };
          },
        },
      },
    },
  ],
  cases: [
    {
      name: "aliases of a shared root field go each to a subgraph serving their selection",
      query: `{ n: product { name } p: product { price } c: product { category } }`,
      check: (run) => equal(run.requests.length, 3, describeRequests(run)),
    },
    {
      name: "one selection of a shared value-type root field split across three subgraphs",
      query: `{ product { id name price category } }`,
    },
    {
      name: "aliases with overlapping selections",
      query: `{ a: product { id name price } b: product { id category } c: product { name } }`,
    },
    {
      name: "@provides makes the author's name local: one fetch from the providing subgraph",
      query: `{ reviews { body author { name } } }`,
      check: (run) => {
        equal(run.requests.length, 1, describeRequests(run));
        equal(requestsTo(run, "reviews").length, 1, describeRequests(run));
      },
    },
    {
      name: "aliases of a shared root field: only the one selecting the provided field needs it",
      query: `{ a: reviews { id body } b: reviews { author { id name } } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root });
