/**
 * Audit shape "requires with argument conflict": two fields of one
 * subgraph require the same external field with different arguments
 * (`cost(currency: "USD")` and `cost(currency: "EUR")`), and a third
 * requires a field with an argument nested in an `@external` value type
 * (`family { mean(currency: "USD") }`). A representation carries one value
 * per field name, so the two `cost`s cannot travel in one representation:
 * answering both from one fetch computes one of them from the other
 * currency (wrong data, no error).
 *
 * @module
 */
import { type Area, fed2, type FedCase, registerArea, type SubgraphDef } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";
import { monolithCase } from "./_monolith.ts";

const PRODUCTS = [
  { sku: "p1", name: "Crate", usd: 11, mass: 1, mean: 9 },
  { sku: "p2", name: "Drum", usd: 22, mass: 2, mean: 14 },
];
const costOf = (usd: number, currency: string) => {
  if (currency === "USD") return usd;
  if (currency === "EUR") return usd * 2;
  throw new Error(`Unsupported currency ${currency}`);
};
const feeOf = (cost: number, mass: number) => cost * mass * 10;
const product = (sku: unknown) => PRODUCTS.find((p) => p.sku === sku);

/** The monolith's data. */
export const root = {
  products: PRODUCTS.map((p) => ({
    sku: p.sku,
    name: p.name,
    mass: p.mass,
    cost: ({ currency }: { currency: string }) => costOf(p.usd, currency),
    family: { mean: ({ currency }: { currency: string }) => costOf(p.mean, currency) },
    fee: feeOf(costOf(p.usd, "USD"), p.mass),
    feeEur: feeOf(costOf(p.usd, "EUR"), p.mass),
    pricey: costOf(p.mean, "USD") > 11,
  })),
};

type Rep = { sku: string; cost?: number; mass?: number; family?: { mean?: number } };
function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} was not provided`);
  return value;
}

const NAME = "shape_requires_argument_conflict";

/** `stock` (root, costs, families), `freight` (fees computed from them). */
const SUBGRAPHS: readonly SubgraphDef[] = [
  {
    name: "stock",
    typeDefs: fed2("@key") + `
        type Query {
          products: [Product]
        }
        type Product @key(fields: "sku") {
          sku: String!
          name: String
          cost(currency: String!): Int
          mass: Int
          family: Family
        }
        type Family {
          mean(currency: String!): Int
        }
      `,
    resolvers: {
      Query: { products: () => PRODUCTS },
      Product: {
        __resolveReference: (ref: Rep) => product(ref.sku) ?? null,
        cost: (p: { usd: number }, { currency }: { currency: string }) => costOf(p.usd, currency),
        family: (p: { mean: number }) => ({ mean: p.mean }),
      },
      Family: {
        mean: (f: { mean: number }, { currency }: { currency: string }) => costOf(f.mean, currency),
      },
    },
  },
  {
    name: "freight",
    typeDefs: fed2("@key", "@external", "@requires") + `
        type Product @key(fields: "sku") {
          sku: String!
          mass: Int @external
          cost(currency: String!): Int @external
          fee: Int @requires(fields: "cost(currency: \\"USD\\") mass")
          feeEur: Int @requires(fields: "cost(currency: \\"EUR\\") mass")
          family: Family @external
          pricey: Boolean @requires(fields: "family { mean(currency: \\"USD\\") }")
        }
        type Family @external {
          mean(currency: String!): Int
        }
      `,
    resolvers: {
      Product: {
        __resolveReference: (ref: Rep) => ref,
        fee: (p: Rep) => feeOf(need(p.cost, "cost"), need(p.mass, "mass")),
        feeEur: (p: Rep) => feeOf(need(p.cost, "cost"), need(p.mass, "mass")),
        pricey: (p: Rep) => need(p.family?.mean, "family.mean") > 11,
      },
    },
  },
];

/** A case whose expected answer is the monolith's (the reference gateway is wrong). */
function fromMonolith(name: string, query: string, note: string): FedCase {
  return monolithCase({ name: NAME, subgraphs: SUBGRAPHS }, { name, query, root, note });
}

/** The graph and its cases. */
export const area: Area = {
  name: NAME,
  title: "audit requires-with-argument-conflict: one field required with two arguments",
  subgraphs: SUBGRAPHS,
  cases: [
    fromMonolith(
      "one external field required with two different arguments in one query",
      `{ products { sku name fee feeEur pricey } }`,
      "Apollo Gateway sends one representation with cost(currency: EUR) for both fee and " +
        "feeEur: fee is computed from euros (wrong data, no error)",
    ),
    {
      name: "the other currency's requiring field alone",
      query: `{ products { feeEur } }`,
    },
    {
      name: "client selects the required field with the other argument beside the requiring one",
      query: `{ products { eur: cost(currency: "EUR") fee usd: cost(currency: "USD") } }`,
    },
    fromMonolith(
      "requirement with an argument nested in an external value type, client asks another",
      `{ products { pricey family { mean(currency: "EUR") } } }`,
      "Apollo Gateway merges the required mean(currency: USD) into the client's " +
        "mean(currency: EUR) and answers dollars for it",
    ),
    {
      name: "requirement with an argument nested in an external value type",
      query: `{ products { name pricey } }`,
    },
  ],
};

registerArea(area);
registerDifferential({
  area,
  root,
  generator: { values: { String: ['"USD"', '"EUR"'] } },
});
