/**
 * Small federated graphs the planner unit tests share (one per planning shape of issue 13).
 *
 * @module
 */
import { fed2 } from "./_planner_fixture.ts";

/** Shape 1: `pricing.label` requires `score` from catalog, which requires `base` from pricing. */
export const REQUIRES_CHAIN = {
  catalog: fed2("@key", "@external", "@requires") + `
    type Query { products: [Product!]! }
    type Product @key(fields: "id") {
      id: ID!
      name: String!
      base: Int! @external
      score: Int! @requires(fields: "base")
    }`,
  pricing: fed2("@key", "@external", "@requires") + `
    type Product @key(fields: "id") {
      id: ID!
      base: Int!
      score: Int! @external
      label: String! @requires(fields: "score")
    }`,
};

/** Shape 2: one root field shared by two subgraphs, one of them `@provides` a field. */
export const SHARED_ROOT = {
  a: fed2("@key", "@shareable", "@external", "@provides") + `
    type Query {
      product: Product @shareable
      top: Product @provides(fields: "price")
    }
    type Product @key(fields: "id") { id: ID! name: String @shareable price: Int @external }`,
  b: fed2("@key", "@shareable") + `
    type Query { product: Product @shareable }
    type Product @key(fields: "id") { id: ID! price: Int @shareable }`,
};

/** Shape 4: `Profile.avatar` is only reachable by re-entering the parent `User` in `b`. */
export const REENTER_PARENT = {
  a: fed2("@key", "@shareable") + `
    type Query { user: User }
    type User @key(fields: "id") { id: ID! profile: Profile @shareable }
    type Profile @shareable { bio: String }`,
  b: fed2("@key", "@shareable") + `
    type User @key(fields: "id") { id: ID! profile: Profile @shareable }
    type Profile @shareable { bio: String avatar: String }`,
};

/** Shape 7: a union whose `Video` member exists only in `b`. */
export const PARTIAL_UNION = {
  a: fed2("@key", "@shareable") + `
    type Query { feed: [Item] @shareable }
    union Item = Post
    type Post @key(fields: "id") { id: ID! text: String @shareable }`,
  b: fed2("@key", "@shareable") + `
    type Query { feed: [Item] @shareable }
    union Item = Post | Video
    type Post @key(fields: "id") { id: ID! text: String @shareable }
    type Video @key(fields: "id") { id: ID! url: String }`,
};

/** Many shareable fields over three subgraphs: many alternatives per field. */
export const WIDE = {
  a: fed2("@key", "@shareable") + `
    type Query { things: [Thing] @shareable }
    type Thing @key(fields: "id") { id: ID! f1: Int @shareable f2: Int @shareable f3: Int @shareable g: Int }`,
  b: fed2("@key", "@shareable") + `
    type Query { things: [Thing] @shareable }
    type Thing @key(fields: "id") { id: ID! f1: Int @shareable f2: Int @shareable f3: Int @shareable h: Int }`,
  c: fed2("@key", "@shareable") + `
    type Thing @key(fields: "id") { id: ID! f1: Int @shareable f2: Int @shareable f3: Int @shareable k: Int }`,
};

/**
 * A requirement with an argument nested in an external value type: `freight.pricey` requires
 * `family { mean(currency: "USD") }` and `cheap` the same field in euros, which stock serves with
 * any currency.
 */
export const REQUIRES_ARGUMENT = {
  stock: fed2("@key") + `
    type Query { products: [Product] }
    type Product @key(fields: "sku") {
      sku: String!
      family: Family
    }
    type Family {
      mean(currency: String!): Int
      size: Int
    }`,
  freight: fed2("@key", "@external", "@requires") + `
    type Product @key(fields: "sku") {
      sku: String!
      family: Family @external
      pricey: Boolean @requires(fields: "family { mean(currency: \\"USD\\") }")
      cheap: Boolean @requires(fields: "family { mean(currency: \\"EUR\\") }")
      cut(limit: Int!): Int
    }
    type Family @external {
      mean(currency: String!): Int
    }`,
};
