/**
 * `@requires` (and `@external`): nested selections, inline fragments on
 * interfaces, field arguments, chains, bouncing between two subgraphs, the
 * same field required with different arguments, required data that is null.
 *
 * @module
 */
import { equal } from "node:assert/strict";
import { type Area, describeRequests, fed2, registerArea } from "./_harness.ts";

interface P {
  id: string;
  name: string;
  weight: number | null;
  dimensions: { size: number; unit: string } | null;
  prices: Record<string, number>;
  attributes: Record<string, unknown>;
}
const PRODUCTS: P[] = [
  {
    id: "p1",
    name: "Atlas",
    weight: 2,
    dimensions: { size: 10, unit: "cm" },
    prices: { EUR: 100, USD: 110, GBP: 90 },
    attributes: { __typename: "BookAttr", label: "book", pages: 300 },
  },
  {
    id: "p2",
    name: "Chair",
    weight: null,
    dimensions: { size: 5, unit: "in" },
    prices: { EUR: 50, USD: 55, GBP: 45 },
    attributes: { __typename: "FurnitureAttr", label: "chair", material: "oak" },
  },
  {
    id: "p3",
    name: "Zine",
    weight: 1.5,
    dimensions: null,
    prices: { EUR: 20, USD: 22, GBP: 18 },
    attributes: { __typename: "BookAttr", label: "zine", pages: 12 },
  },
];

const ATTRIBUTE_TYPES = `
  interface Attribute {
    label: String!
  }
  type BookAttr implements Attribute @shareable {
    label: String!
    pages: Int!
  }
  type FurnitureAttr implements Attribute @shareable {
    label: String!
    material: String!
  }
  type Dimensions @shareable {
    size: Int!
    unit: String!
  }
`;
const attributeResolvers = {
  Attribute: { __resolveType: (a: { __typename: string }) => a.__typename },
};

type Rep = Record<string, unknown> & { id: string };

/** The graph: products (data), shipping (requires products' fields), billing (requires shipping's). */
export const area: Area = {
  name: "requires",
  title: "@requires",
  subgraphs: [
    {
      name: "products",
      typeDefs: fed2("@key", "@shareable", "@external", "@requires") + ATTRIBUTE_TYPES + `
        type Query {
          products: [Product!]!
        }
        type Product @key(fields: "id") {
          id: ID!
          name: String!
          weight: Float
          dimensions: Dimensions
          price(currency: String! = "GBP"): Float!
          attributes: Attribute!
          shippingCost: Float @external
          discount: Float! @requires(fields: "shippingCost")
        }
      `,
      resolvers: {
        ...attributeResolvers,
        Query: { products: () => PRODUCTS },
        Product: {
          __resolveReference: (ref: Rep) => ({ ...PRODUCTS.find((p) => p.id === ref.id), ...ref }),
          price: (p: P, { currency }: { currency: string }) => p.prices[currency] ?? -1,
          discount: (p: { shippingCost: number | null }) =>
            p.shippingCost === null ? 0 : p.shippingCost / 10,
        },
      },
    },
    {
      name: "shipping",
      typeDefs: fed2("@key", "@shareable", "@external", "@requires") + ATTRIBUTE_TYPES + `
        type Product @key(fields: "id") {
          id: ID!
          weight: Float @external
          dimensions: Dimensions @external
          price(currency: String! = "GBP"): Float! @external
          attributes: Attribute! @external
          shippingCost: Float @requires(fields: "weight")
          volume: String @requires(fields: "dimensions { size unit }")
          packaging: String!
            @requires(fields: "attributes { __typename ... on BookAttr { pages } ... on FurnitureAttr { material } }")
          priceEUR: String! @requires(fields: "price(currency: \\"EUR\\")")
        }
      `,
      resolvers: {
        ...attributeResolvers,
        Product: {
          __resolveReference: (ref: Rep) => ref,
          shippingCost: (p: { weight: number | null }) => p.weight === null ? null : p.weight * 10,
          volume: (p: { dimensions: { size: number; unit: string } | null }) =>
            p.dimensions === null ? null : `${p.dimensions.size}${p.dimensions.unit}`,
          packaging: (
            p: { attributes: { __typename: string; pages?: number; material?: string } },
          ) =>
            p.attributes.__typename === "BookAttr"
              ? ((p.attributes.pages ?? 0) > 100 ? "box" : "envelope")
              : `crate:${p.attributes.material}`,
          priceEUR: (p: { price: number }) => `EUR ${p.price}`,
        },
      },
    },
    {
      name: "billing",
      typeDefs: fed2("@key", "@external", "@requires") + `
        type Product @key(fields: "id") {
          id: ID!
          price(currency: String! = "GBP"): Float! @external
          shippingCost: Float @external
          priceUSD: String! @requires(fields: "price(currency: \\"USD\\")")
          insurance: Float! @requires(fields: "shippingCost")
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (ref: Rep) => ref,
          priceUSD: (p: { price: number }) => `USD ${p.price}`,
          insurance: (p: { shippingCost: number | null }) =>
            p.shippingCost === null ? 0 : p.shippingCost * 2,
        },
      },
    },
  ],
  cases: [
    {
      name:
        "required scalar fetched first and sent in the representation; null required data stays null",
      query: `{ products { id shippingCost } }`,
    },
    {
      name: "required nested selection (dimensions { size unit }), null object passed through",
      query: `{ products { id volume } }`,
    },
    {
      name: "required inline fragments on an interface",
      query: `{ products { name packaging } }`,
    },
    {
      name: "required field with an argument",
      query: `{ products { id priceEUR } }`,
    },
    {
      name: "two requires of one field with different arguments in one query",
      query: `{ products { id priceEUR priceUSD } }`,
      override: {
        note: "Apollo Gateway fetches price once and sends the same value to both subgraphs " +
          "(USD 100 instead of USD 110): the two requirements need two aliased fetches of price",
        response: {
          data: {
            products: [
              { id: "p1", priceEUR: "EUR 100", priceUSD: "USD 110" },
              { id: "p2", priceEUR: "EUR 50", priceUSD: "USD 55" },
              { id: "p3", priceEUR: "EUR 20", priceUSD: "USD 22" },
            ],
          },
        },
      },
    },
    {
      name: "chain of requires across three subgraphs (products → shipping → billing)",
      query: `{ products { name insurance } }`,
    },
    {
      name: "requires bouncing between two subgraphs (products → shipping → products)",
      query: `{ products { id discount } }`,
    },
    {
      name: "required field also selected by the client under an alias",
      query: `{ products { w: weight shippingCost p: price(currency: "USD") priceEUR } }`,
      ordered: true,
    },
    {
      name: "required fields are not fetched when no requiring field is selected",
      query: `{ products { name weight } }`,
      check: (run) => {
        equal(run.requests.length, 1, describeRequests(run));
        equal(run.requests[0]!.subgraph, "products");
      },
    },
    {
      name: "client alias named like a required field does not clash with the requirement",
      query: `{ products { weight: name shippingCost } }`,
      override: {
        note: "Apollo Gateway sends the client's aliased name as the required weight " +
          "(NaN errors); the requirement must be fetched apart from client aliases",
        response: {
          data: {
            products: [
              { weight: "Atlas", shippingCost: 20 },
              { weight: "Chair", shippingCost: null },
              { weight: "Zine", shippingCost: 15 },
            ],
          },
        },
      },
    },
    {
      name: "requires under a skipped and an included fragment",
      query: `query Q($a: Boolean = true) {
        products { id ... @include(if: $a) { volume } ... @skip(if: $a) { packaging } }
      }`,
    },
    {
      name: "one requiring field under two aliases, and every chain in one query",
      query: `{ products { a: shippingCost b: shippingCost insurance discount volume } }`,
    },
  ],
};

registerArea(area);
