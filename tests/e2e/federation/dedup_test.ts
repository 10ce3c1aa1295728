/**
 * Request deduplication (single flight): identical concurrent subgraph
 * requests share one response when `engine.enable_single_flight` is on,
 * and each goes out when it is off; mutations are never shared.
 *
 * The reference gateway does not deduplicate: it only confirms the data.
 *
 * @module
 */
import { equal } from "node:assert/strict";
import { type Area, describeRequests, fed2, registerArea, requestsTo } from "./_harness.ts";

const PRODUCTS = [{ id: "1", name: "Table" }, { id: "2", name: "Couch" }];
const slow = <T>(value: T, ms = 150) =>
  new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

/** The graph: a slow root subgraph and a slow entity subgraph, so concurrent requests overlap. */
export const area: Area = {
  name: "dedup",
  title: "single-flight deduplication",
  subgraphs: [
    {
      name: "products",
      typeDefs: fed2("@key") + `
        type Query {
          products: [Product!]!
        }
        type Mutation {
          touch: Boolean!
        }
        type Product @key(fields: "id") {
          id: ID!
          name: String!
        }
      `,
      resolvers: {
        Query: { products: () => slow(PRODUCTS) },
        Mutation: { touch: () => slow(true) },
      },
    },
    {
      name: "inventory",
      typeDefs: fed2("@key") + `
        type Product @key(fields: "id") {
          id: ID!
          stock: Int!
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (r: { id: string }) => slow(r),
          stock: (p: { id: string }) => Number(p.id) * 3,
        },
      },
    },
  ],
  cases: [
    {
      name: "single flight on: identical concurrent root and entity fetches go out once",
      query: `{ products { name stock } }`,
      concurrent: 3,
      settings: { enableSingleFlight: true },
      checkReference: false,
      check: (run) => {
        equal(requestsTo(run, "products").length, 1, describeRequests(run));
        equal(requestsTo(run, "inventory").length, 1, describeRequests(run));
      },
    },
    {
      name: "single flight off: every concurrent request goes out",
      query: `{ products { name stock } }`,
      concurrent: 3,
      settings: { enableSingleFlight: false },
      checkReference: false,
      check: (run) => {
        equal(requestsTo(run, "products").length, 3, describeRequests(run));
        equal(requestsTo(run, "inventory").length, 3, describeRequests(run));
      },
    },
    {
      name: "single flight on: mutations are never shared",
      query: `mutation { touch }`,
      concurrent: 3,
      settings: { enableSingleFlight: true },
      checkReference: false,
      check: (run) => equal(requestsTo(run, "products").length, 3, describeRequests(run)),
    },
    {
      name: "single flight on: requests whose propagated headers differ are not shared",
      query: `{ products { name stock } }`,
      concurrent: 2,
      concurrentHeaders: [{ authorization: "Bearer a" }, { authorization: "Bearer b" }],
      settings: {
        enableSingleFlight: true,
        headers: { all: [{ op: "propagate", named: "authorization" }] },
      },
      checkReference: false,
      check: (run) => {
        const sent = requestsTo(run, "products").map((r) => r.headers.get("authorization")).sort();
        equal(
          JSON.stringify(sent),
          JSON.stringify(["Bearer a", "Bearer b"]),
          describeRequests(run),
        );
      },
    },
  ],
};

registerArea(area);
