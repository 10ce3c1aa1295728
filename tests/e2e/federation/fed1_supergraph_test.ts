/**
 * A Federation 1 supergraph (core v0.1 + join v0.1, as Federation 1
 * composition wrote it: `@join__owner`, no `@link`, no `@shareable`) over
 * the Federation 1 subgraphs of `fed1_test.ts`.
 *
 * @module
 */
import { type Area, registerArea } from "./_harness.ts";
import { fed1Graph } from "./_fed1_graph.ts";

const SUPERGRAPH = `
schema
  @core(feature: "https://specs.apollo.dev/core/v0.1")
  @core(feature: "https://specs.apollo.dev/join/v0.1")
{
  query: Query
}

directive @core(feature: String!) repeatable on SCHEMA

directive @join__field(graph: join__Graph, requires: join__FieldSet, provides: join__FieldSet) on FIELD_DEFINITION

directive @join__type(graph: join__Graph!, key: join__FieldSet) repeatable on OBJECT | INTERFACE

directive @join__owner(graph: join__Graph!) on OBJECT | INTERFACE

directive @join__graph(name: String!, url: String!) on ENUM_VALUE

scalar join__FieldSet

enum join__Graph {
  ACCOUNTS @join__graph(name: "accounts", url: "{{url:accounts}}")
  INVENTORY @join__graph(name: "inventory", url: "{{url:inventory}}")
  PRODUCTS @join__graph(name: "products", url: "{{url:products}}")
  REVIEWS @join__graph(name: "reviews", url: "{{url:reviews}}")
}

type Product
  @join__owner(graph: PRODUCTS)
  @join__type(graph: PRODUCTS, key: "upc")
  @join__type(graph: INVENTORY, key: "upc")
  @join__type(graph: REVIEWS, key: "upc")
{
  upc: String! @join__field(graph: PRODUCTS)
  name: String @join__field(graph: PRODUCTS)
  price: Int @join__field(graph: PRODUCTS)
  weight: Int @join__field(graph: PRODUCTS)
  inStock: Boolean @join__field(graph: INVENTORY)
  shippingEstimate: Int @join__field(graph: INVENTORY, requires: "price weight")
  reviews: [Review] @join__field(graph: REVIEWS)
}

type Query {
  me: User @join__field(graph: ACCOUNTS)
  topProducts(first: Int = 5): [Product] @join__field(graph: PRODUCTS)
}

type Review
  @join__owner(graph: REVIEWS)
  @join__type(graph: REVIEWS, key: "id")
{
  id: ID! @join__field(graph: REVIEWS)
  body: String @join__field(graph: REVIEWS)
  author: User @join__field(graph: REVIEWS, provides: "username")
  product: Product @join__field(graph: REVIEWS)
}

type User
  @join__owner(graph: ACCOUNTS)
  @join__type(graph: ACCOUNTS, key: "id")
  @join__type(graph: REVIEWS, key: "id")
{
  id: ID! @join__field(graph: ACCOUNTS)
  name: String @join__field(graph: ACCOUNTS)
  username: String @join__field(graph: ACCOUNTS)
  reviews: [Review] @join__field(graph: REVIEWS)
}
`;

/** The Federation 1 graph behind a join v0.1 supergraph. */
export const area: Area = {
  name: "fed1_supergraph",
  title: "Federation 1 supergraph (join v0.1)",
  supergraphSdl: SUPERGRAPH,
  ...fed1Graph,
};

registerArea(area);
