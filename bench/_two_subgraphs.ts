/**
 * The small federated graph of the per-request CPU benchmarks (plugins,
 * telemetry): `products` (5 top products) and `reviews` (2 reviews each),
 * answered in-process from constant bodies, and the query that makes one root
 * fetch and one entity fetch.
 *
 * @module
 */
import { composeSupergraph } from "../lib/compose/mod.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';
const composed = composeSupergraph([
  {
    name: "products",
    url: "http://products.invalid/graphql",
    sdl: `${LINK}
type Query { topProducts: [Product!]! }
type Product @key(fields: "upc") { upc: ID! name: String! price: Int! }`,
  },
  {
    name: "reviews",
    url: "http://reviews.invalid/graphql",
    sdl: `${LINK}
type Product @key(fields: "upc") { upc: ID! reviews: [Review!]! }
type Review { id: ID! body: String! }`,
  },
]);
if (!composed.ok) throw new Error("bench supergraph does not compose");

/** The supergraph of `products` and `reviews`. */
export const TWO_SUBGRAPHS_SDL: string = composed.supergraphSdl;

/** The query: a root fetch (products) and an entity fetch (reviews). */
export const TWO_SUBGRAPHS_QUERY =
  "query Top { topProducts { upc name price reviews { id body } } }";

const PRODUCTS = JSON.stringify({
  data: {
    topProducts: Array.from({ length: 5 }, (_, i) => ({
      __typename: "Product",
      upc: `p${i}`,
      name: `Product ${i}`,
      price: 10 * i,
    })),
  },
});
const REVIEWS = JSON.stringify({
  data: {
    _entities: Array.from({ length: 5 }, (_, i) => ({
      reviews: [{ id: `r${i}`, body: `Review ${i}` }, { id: `s${i}`, body: `Other ${i}` }],
    })),
  },
});

/**
 * The subgraphs' `fetch`: the same body for every request to each.
 * @param request A subgraph request.
 * @returns Its answer.
 */
export function twoSubgraphsFetch(request: Request): Promise<Response> {
  return Promise.resolve(
    new Response(request.url.startsWith("http://products") ? PRODUCTS : REVIEWS, {
      headers: { "content-type": "application/json" },
    }),
  );
}
