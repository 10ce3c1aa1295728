/**
 * Audit shape "requires requires": a field requires a field that itself
 * has a `@requires`, in another subgraph, whose requirement is
 * `@inaccessible` (not in the API schema, never selectable by a client):
 * `wallet.affordable` ← `rules.premium` ← `catalog.cost`. A second chain
 * (`grab` ← `bargain` ← `promo.onSale`) runs beside it, and `verdict`
 * requires the ends of both chains at once. Four subgraphs, three fetch
 * levels.
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const PRODUCTS = [
  { id: "q1", cost: 900, onSale: false },
  { id: "q2", cost: 120, onSale: true },
  { id: "q3", cost: 640, onSale: true },
];
const product = (id: unknown) => PRODUCTS.find((p) => p.id === id);
const premiumOf = (cost: number) => cost > 500;
const bargainOf = (onSale: boolean) => onSale;
const verdictOf = (premium: boolean, bargain: boolean) =>
  `${premium ? "premium" : "plain"}${bargain ? "+deal" : ""}`;

/** The monolith's data (`cost` is inaccessible: not in the API schema). */
export const root = {
  products: PRODUCTS.map((p) => ({
    id: p.id,
    onSale: p.onSale,
    premium: premiumOf(p.cost),
    affordable: !premiumOf(p.cost),
    bargain: bargainOf(p.onSale),
    grab: bargainOf(p.onSale) && !premiumOf(p.cost),
    verdict: verdictOf(premiumOf(p.cost), bargainOf(p.onSale)),
  })),
};

/** Throws when a requirement did not reach the subgraph (instead of computing from nothing). */
function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} was not provided`);
  return value;
}

type Rep = { id: string; cost?: number; onSale?: boolean; premium?: boolean; bargain?: boolean };

/** The graph: `catalog` (cost), `promo` (root, onSale), `rules` (level 1), `wallet` (level 2). */
export const area: Area = {
  name: "shape_requires_requires",
  title: "audit requires-requires: a required field that has its own @requires",
  subgraphs: [
    {
      name: "catalog",
      typeDefs: fed2("@key", "@inaccessible") + `
        type Product @key(fields: "id") {
          id: ID!
          cost: Int! @inaccessible
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (ref: Rep) => product(ref.id) ?? null,
        },
      },
    },
    {
      name: "promo",
      typeDefs: fed2("@key") + `
        type Query {
          products: [Product!]!
        }
        type Product @key(fields: "id") {
          id: ID!
          onSale: Boolean!
        }
      `,
      resolvers: {
        Query: { products: () => PRODUCTS.map((p) => ({ id: p.id, onSale: p.onSale })) },
        Product: {
          __resolveReference: (ref: Rep) => {
            const p = product(ref.id);
            return p === undefined ? null : { id: p.id, onSale: p.onSale };
          },
        },
      },
    },
    {
      name: "rules",
      typeDefs: fed2("@key", "@external", "@requires") + `
        type Product @key(fields: "id") {
          id: ID!
          cost: Int! @external
          premium: Boolean! @requires(fields: "cost")
          onSale: Boolean! @external
          bargain: Boolean! @requires(fields: "onSale")
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (ref: Rep) => ref,
          premium: (p: Rep) => premiumOf(need(p.cost, "cost")),
          bargain: (p: Rep) => bargainOf(need(p.onSale, "onSale")),
        },
      },
    },
    {
      name: "wallet",
      typeDefs: fed2("@key", "@external", "@requires") + `
        type Product @key(fields: "id") {
          id: ID!
          premium: Boolean! @external
          affordable: Boolean! @requires(fields: "premium")
          bargain: Boolean! @external
          grab: Boolean! @requires(fields: "bargain premium")
          verdict: String! @requires(fields: "premium bargain")
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (ref: Rep) => ref,
          affordable: (p: Rep) => !need(p.premium, "premium"),
          grab: (p: Rep) => need(p.bargain, "bargain") && !need(p.premium, "premium"),
          verdict: (p: Rep) => verdictOf(need(p.premium, "premium"), need(p.bargain, "bargain")),
        },
      },
    },
  ],
  cases: [
    {
      name: "field requiring a field whose own requirement is inaccessible",
      query: `{ products { id affordable } }`,
    },
    {
      name: "the middle of the chain selected too",
      query: `{ products { premium affordable } }`,
    },
    {
      name: "two chains ending in one requiring field",
      query: `{ products { verdict } }`,
    },
    {
      name: "every field of both chains, under aliases",
      query:
        `{ products { i: id s: onSale b: bargain g: grab a: affordable p: premium v: verdict } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root });
