/**
 * `@context` / `@fromContext` (Federation 2.8): `Order.total` takes its
 * `currency` argument from the nearest `Customer` ancestor (the context),
 * whose `currency` is shared by `customers` and `orders`. The argument is
 * not in the API schema: the router must select the context value and pass
 * it to the subgraph.
 *
 * @module
 */
import { type Area, registerArea, type SubgraphDef } from "./_harness.ts";
import { monolithCase } from "./_monolith.ts";
import { registerDifferential } from "./_differential.ts";

const CUSTOMERS = [
  { id: "c1", name: "Ada", currency: "EUR", orders: ["o1", "o2"] },
  { id: "c2", name: "Bob", currency: "USD", orders: ["o3"] },
];
const AMOUNTS: Record<string, number> = { o1: 10, o2: 25, o3: 7 };
const totalOf = (amount: number, currency: string | null | undefined) => `${amount} ${currency}`;
const customer = (id: string) => CUSTOMERS.find((c) => c.id === id)!;

/** The monolith's data. */
export const root = {
  customers: CUSTOMERS.map((c) => ({
    id: c.id,
    name: c.name,
    currency: c.currency,
    orders: c.orders.map((o) => ({
      id: o,
      amount: AMOUNTS[o],
      total: totalOf(AMOUNTS[o]!, c.currency),
    })),
  })),
};

const link = (imports: string[]) =>
  `extend schema @link(url: "https://specs.apollo.dev/federation/v2.8", import: ${
    JSON.stringify(imports)
  })\n`;

const NAME = "shape_context";
const NO_CONTEXT = "Apollo Gateway 2.14 does not load a supergraph using @context " +
  "(context/v0.1 is unsupported): the monolith is the reference";

/** `customers` (names, currencies), `orders` (orders in the customer's context). */
const SUBGRAPHS: readonly SubgraphDef[] = [
  {
    name: "customers",
    typeDefs: link(["@key", "@shareable"]) + `
        type Query {
          customers: [Customer!]!
        }
        type Customer @key(fields: "id") {
          id: ID!
          name: String!
          currency: String! @shareable
        }
      `,
    resolvers: {
      Query: { customers: () => CUSTOMERS },
      Customer: { __resolveReference: (ref: { id: string }) => customer(ref.id) },
    },
  },
  {
    name: "orders",
    typeDefs: link(["@key", "@shareable", "@context", "@fromContext"]) + `
        type Customer @key(fields: "id") @context(name: "customer") {
          id: ID!
          currency: String! @shareable
          orders: [Order!]!
        }
        type Order @key(fields: "id") {
          id: ID!
          amount: Int!
          total(currency: String @fromContext(field: "$customer { currency }")): String!
        }
      `,
    resolvers: {
      Customer: {
        __resolveReference: (ref: { id: string }) => customer(ref.id),
        orders: (c: { id: string }) => customer(c.id).orders.map((id) => ({ id })),
      },
      Order: {
        __resolveReference: (ref: { id: string }) => ref,
        amount: (o: { id: string }) => AMOUNTS[o.id],
        total: (o: { id: string }, args: { currency?: string | null }) =>
          totalOf(AMOUNTS[o.id]!, args.currency),
      },
    },
  },
];

/** The graph and its cases. */
export const area: Area = {
  name: NAME,
  title: "@context and @fromContext",
  subgraphs: SUBGRAPHS,
  cases: [
    monolithCase({ name: NAME, subgraphs: SUBGRAPHS }, {
      name: "argument taken from the nearest ancestor's context",
      query: `{ customers { name orders { id total } } }`,
      root,
      note: NO_CONTEXT,
    }),
    monolithCase({ name: NAME, subgraphs: SUBGRAPHS }, {
      name: "context value also selected by the client, under an alias",
      query: `{ customers { c: currency orders { amount t: total } } }`,
      root,
      note: NO_CONTEXT,
    }),
  ],
};

registerArea(area);
registerDifferential({ area, root });
