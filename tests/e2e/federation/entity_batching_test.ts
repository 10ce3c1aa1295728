/**
 * Entity batching (`engine.batch_entity_fetches`, issue 33): sibling entity
 * fetches of one plan level that go to the same subgraph with different
 * selections are sent as one request, each an aliased `_entities` field, and
 * the answer is split back per fetch. The data and the errors (with their
 * paths) must be what the reference gateway, which sends one request per
 * fetch, answers; the checks count the requests.
 *
 * @module
 */
import { equal, match } from "node:assert/strict";
import { type Area, describeRequests, fed2, registerArea, requestsTo } from "./_harness.ts";

const PRODUCTS = [{ id: "1" }, { id: "2" }, { id: "3" }];

/** A root subgraph listing products two ways, and one that extends `Product`. */
export const area: Area = {
  name: "entity_batching",
  title: "entity batching",
  subgraphs: [
    {
      name: "catalog",
      typeDefs: fed2("@key") + `
        type Query {
          topProduct: Product
          products: [Product!]!
        }
        type Product @key(fields: "id") {
          id: ID!
          name: String!
        }
      `,
      resolvers: {
        Query: { topProduct: () => PRODUCTS[2], products: () => PRODUCTS },
        Product: { name: (p: { id: string }) => `product ${p.id}` },
      },
    },
    {
      name: "inventory",
      typeDefs: fed2("@key") + `
        type Product @key(fields: "id") {
          id: ID!
          stock: Int!
          price(currency: String!): String!
          flaky: String
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (r: { id: string }) => r,
          stock: (p: { id: string }) => Number(p.id) * 10,
          price: (p: { id: string }, args: { currency: string }) => `${p.id}0.00 ${args.currency}`,
          flaky: (p: { id: string }) => {
            if (p.id === "2") throw new Error("flaky failed for 2");
            return `steady ${p.id}`;
          },
        },
      },
    },
  ],
  cases: [
    {
      name: "two fetches of one type with different selections share one request",
      query: `{ topProduct { name stock } products { id name price(currency: "EUR") } }`,
      checkReference: false,
      check: (run) => {
        const sent = requestsTo(run, "inventory");
        equal(sent.length, 1, describeRequests(run));
        match(sent[0]!.query, /_e0:_entities\(representations:\$r0\).*_e1:_entities/);
      },
    },
    {
      name: "batching off: one request per fetch",
      query: `{ topProduct { name stock } products { id name price(currency: "EUR") } }`,
      settings: { batchEntityFetches: false },
      checkReference: false,
      check: (run) => equal(requestsTo(run, "inventory").length, 2, describeRequests(run)),
    },
    {
      name: "client variables of every part are declared once",
      query:
        `query Prices($c: String!) { topProduct { stock price(currency: $c) } products { price(currency: $c) } }`,
      variables: { c: "CHF" },
      checkReference: false,
      check: (run) => {
        const sent = requestsTo(run, "inventory");
        equal(sent.length, 1, describeRequests(run));
        equal(sent[0]!.variables.c, "CHF");
      },
    },
    {
      name: "an error in one part keeps its client path; the other part's data is whole",
      query: `{ topProduct { stock } products { id flaky } }`,
      checkReference: false,
      check: (run) => equal(requestsTo(run, "inventory").length, 1, describeRequests(run)),
    },
  ],
};

registerArea(area);
