/**
 * Operation features across subgraphs: `@skip`/`@include` with variables and
 * defaults (skipped fields are not fetched), fragments, aliases, variables
 * with defaults, `__typename` anywhere, a `node(id:)` interface root field,
 * operation selection by name.
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

const PRODUCTS = [{ id: "p1", name: "Table" }, { id: "p2", name: "Couch" }];
const CATEGORIES = [{ id: "c1", title: "Furniture" }];
const REVIEWS: Record<string, { id: string; body: string }[]> = {
  p1: [{ id: "rv1", body: "Solid" }, { id: "rv2", body: "Wobbly" }],
  p2: [{ id: "rv3", body: "Soft" }],
};

/** The graph: products (root fields, Node) and reviews (Product.reviews). */
export const area: Area = {
  name: "directives",
  title: "operation directives, fragments, aliases and variables",
  subgraphs: [
    {
      name: "products",
      typeDefs: fed2("@key") + `
        type Query {
          products: [Product!]!
          product(id: ID!): Product
          node(id: ID!): Node
        }
        interface Node {
          id: ID!
        }
        type Product implements Node @key(fields: "id") {
          id: ID!
          name: String!
        }
        type Category implements Node {
          id: ID!
          title: String!
        }
      `,
      resolvers: {
        Query: {
          products: () => PRODUCTS,
          product: (_: unknown, a: { id: string }) => PRODUCTS.find((p) => p.id === a.id) ?? null,
          node: (_: unknown, a: { id: string }) =>
            PRODUCTS.find((p) => p.id === a.id) ?? CATEGORIES.find((c) => c.id === a.id) ?? null,
        },
        Node: {
          __resolveType: (n: { id: string }) => n.id.startsWith("p") ? "Product" : "Category",
        },
        Product: { __resolveReference: (r: { id: string }) => PRODUCTS.find((p) => p.id === r.id) },
      },
    },
    {
      name: "reviews",
      typeDefs: fed2("@key") + `
        type Product @key(fields: "id") {
          id: ID!
          reviews(first: Int = 10): [Review!]!
        }
        type Review {
          id: ID!
          body: String!
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (r: { id: string }) => r,
          reviews: (p: { id: string }, a: { first: number }) =>
            (REVIEWS[p.id] ?? []).slice(0, a.first),
        },
      },
    },
  ],
  cases: [
    {
      name: "@skip(if: $var) true: the skipped field's subgraph is not asked",
      query: `query Q($s: Boolean!) { products { name reviews @skip(if: $s) { body } } }`,
      variables: { s: true },
      check: (run) => equal(requestsTo(run, "reviews").length, 0, describeRequests(run)),
    },
    {
      name: "@include(if: $var) with a default false: not fetched",
      query: `query Q($i: Boolean = false) { products { id reviews @include(if: $i) { body } } }`,
      check: (run) => equal(requestsTo(run, "reviews").length, 0, describeRequests(run)),
    },
    {
      name: "@include(if: $var) true overrides the default: fetched",
      query: `query Q($i: Boolean = false) { products { id reviews @include(if: $i) { body } } }`,
      variables: { i: true },
      check: (run) => ok(fetched(run, "reviews", "body"), describeRequests(run)),
    },
    {
      name: "@skip and @include on inline fragments and fragment spreads",
      query: `query Q($s: Boolean!) {
        products { id ... on Product @skip(if: $s) { name } ...R @include(if: true) }
      }
      fragment R on Product { reviews { body } }`,
      variables: { s: true },
    },
    {
      name: "@skip(if: true) literal on a root field: the field is absent",
      query: `{ products @skip(if: true) { id } product(id: "p2") { name } }`,
    },
    {
      name: "aliases on one field with different arguments, nested aliases",
      query:
        `{ a: product(id: "p1") { name } b: product(id: "p2") { n: name r: reviews { body } } }`,
      ordered: true,
    },
    {
      name: "variables with defaults reach both subgraphs",
      query:
        `query Q($id: ID! = "p1", $first: Int = 1) { product(id: $id) { name reviews(first: $first) { body } } }`,
    },
    {
      name: "__typename at the root, on entities, on nested objects and on an interface",
      query:
        `{ __typename products { __typename reviews { __typename id } } node(id: "c1") { __typename } }`,
    },
    {
      name: "node(id:) interface root field with fragments, entity fields and null",
      query: `{
        node(id: "p1") { id ... on Product { name reviews { body } } }
        c: node(id: "c1") { id ... on Category { title } }
        missing: node(id: "x") { id }
      }`,
    },
    {
      name: "nested named fragments across subgraphs",
      query: `query { products { ...P } }
        fragment P on Product { id ...Q }
        fragment Q on Product { reviews(first: 1) { ...RV } }
        fragment RV on Review { body }`,
    },
    {
      name: "operationName selects one of several operations",
      query: `query A { products { id } } query B { products { name } }`,
      operationName: "B",
    },
    {
      name: "a missing required variable is a request error",
      query: `query Q($id: ID!) { product(id: $id) { name } }`,
      variables: {},
    },
    {
      name: "@skip and @include on the same field: included only when both allow",
      query: `query Q($s: Boolean!, $i: Boolean!) {
        products { id reviews @skip(if: $s) @include(if: $i) { id } name @skip(if: $i) @include(if: $i) }
      }`,
      variables: { s: false, i: true },
    },
    {
      name: "fragment on the root type spreading fields of both subgraphs",
      query:
        `query { ...Root } fragment Root on Query { product(id: "p2") { ...on Product { name reviews { body } } } }`,
    },
    {
      name: "variable used only by an entity fetch's field argument",
      query: `query Q($first: Int!) { products { id reviews(first: $first) { id } } }`,
      variables: { first: 1 },
    },
    {
      name: "introspection fields next to federated fields in one operation",
      query:
        `{ __schema { queryType { name } } __type(name: "Review") { name kind } products { id reviews { id } } }`,
    },
    {
      name: "root field skipped by a variable default: data is {}",
      query: `query Q($s: Boolean = true) { product(id: "p1") @skip(if: $s) { name } }`,
    },
  ],
};

registerArea(area);
