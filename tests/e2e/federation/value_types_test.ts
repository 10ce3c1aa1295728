/**
 * Value types shared by several subgraphs, and the same field with
 * different types in two subgraphs (the planner must alias it internally
 * where a subgraph query would otherwise be invalid).
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";

const PRODUCTS = [
  { id: "1", price: { amount: 300, currency: "EUR" }, dims: { w: 120, unit: "CM" } },
  { id: "2", price: { amount: 90, currency: "USD" }, dims: null },
];
const ITEMS = [
  { __typename: "Coupon", id: "c1", code: "SAVE10" },
  { __typename: "Voucher", id: "v1", code: null },
  { __typename: "Voucher", id: "v2", code: "GIFT" },
];

/** The graph: shop and ledger share Money, Currency and the Coupon.code field (String! vs String). */
export const area: Area = {
  name: "value_types",
  title: "value types",
  subgraphs: [
    {
      name: "shop",
      typeDefs: fed2("@key", "@shareable") + `
        type Query {
          products: [Product!]!
          items: [Item!]!
          priced(range: Range, tier: Tier): [Product!]!
        }
        input Range {
          min: Int
          max: Int
        }
        enum Tier {
          GOLD
          SILVER
        }
        type Product @key(fields: "id") {
          id: ID!
          price: Money!
          dims: Dims @shareable
        }
        type Money @shareable {
          amount: Int!
          currency: Currency!
        }
        enum Currency {
          EUR
          USD
        }
        type Dims @shareable {
          w: Int!
          unit: Unit!
        }
        enum Unit {
          CM
          IN
        }
        union Item = Coupon | Voucher
        type Coupon @key(fields: "id") {
          id: ID!
          code: String! @shareable
          similar: [Item!]!
        }
        type Voucher @key(fields: "id") {
          id: ID!
          code: String @shareable
          similar: [Item!]!
        }
      `,
      resolvers: {
        Query: {
          products: () => PRODUCTS,
          items: () => ITEMS,
          priced: (_: unknown, a: { range?: { min?: number; max?: number }; tier?: string }) =>
            PRODUCTS.filter((p) =>
              p.price.amount >= (a.range?.min ?? 0) && p.price.amount <= (a.range?.max ?? 1e9) &&
              (a.tier !== "GOLD" || p.price.amount > 100)
            ),
        },
        Coupon: { similar: () => ITEMS },
        Voucher: { similar: () => ITEMS.slice(1) },
        Item: { __resolveType: (i: { __typename: string }) => i.__typename },
        Product: { __resolveReference: (r: { id: string }) => PRODUCTS.find((p) => p.id === r.id) },
      },
    },
    {
      name: "ledger",
      typeDefs: fed2("@key", "@shareable") + `
        type Product @key(fields: "id") {
          id: ID!
          cost: Money!
          dims: Dims @shareable
        }
        type Dims @shareable {
          w: Int!
          volume: Int!
        }
        type Money @shareable {
          amount: Int!
          currency: Currency!
        }
        enum Currency {
          EUR
          USD
        }
        type Coupon @key(fields: "id") {
          id: ID!
          code: String @shareable
          discount: Int!
        }
        type Query {
          costs(range: Range, tier: Tier): [Int!]!
        }
        input Range {
          min: Int
          max: Int
          currency: Currency
        }
        enum Tier {
          GOLD
          BRONZE
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (r: { id: string }) => r,
          cost: (p: { id: string }) => ({ amount: Number(p.id) * 50, currency: "EUR" }),
          dims: (p: { id: string }) => p.id === "1" ? { w: 120, volume: 9000 } : null,
        },
        Query: { costs: () => [50, 100] },
        Coupon: {
          __resolveReference: (r: { id: string }) => r,
          code: () => "SAVE10",
          discount: () => 10,
        },
      },
    },
  ],
  cases: [
    {
      name: "one value type returned by two subgraphs on one entity",
      query: `{ products { id price { amount currency } cost { amount currency } } }`,
    },
    {
      name: "nested value type with an enum, null value object",
      query: `{ products { dims { w unit } } }`,
    },
    {
      name:
        "same field with different types in one subgraph query (String! and String) is aliased internally",
      query: `{ items { ... on Coupon { id code } ... on Voucher { id code } } }`,
    },
    {
      name: "same field with different types, client aliases and a field of the other subgraph",
      query:
        `{ items { __typename ... on Coupon { c: code discount } ... on Voucher { c: code } } }`,
    },
    {
      name: "same field with different types aliased internally at every nesting level",
      query:
        `{ items { ...on Coupon { code similar { ... on Coupon { code } ... on Voucher { code } } }
        ... on Voucher { code similar { ... on Coupon { code } ... on Voucher { code } } } } }`,
    },
    {
      name: "input object and input enum are the intersection of the subgraphs' definitions",
      query: `{ priced(range: { min: 100 }, tier: GOLD) { id } costs(range: { max: 5 }) }`,
    },
    {
      name: "input field defined in one subgraph only is rejected",
      query: `{ priced(range: { min: 1, currency: EUR }) { id } }`,
    },
    {
      name: "input enum value defined in one subgraph only is rejected",
      query: `{ priced(tier: SILVER) { id } }`,
    },
    {
      name: "value type field known to another subgraph only, fetched through the parent entity",
      query: `{ products { id dims { w unit volume } } }`,
    },
  ],
};

registerArea(area);
