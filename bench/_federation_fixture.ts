/**
 * The federation benchmark's supergraph and nested query, read from the load
 * benchmark's fixtures (`load/fixtures/`, copied from
 * `../shared/bench/federation`) so the engine benchmarks and the load
 * benchmark share one copy and run on a clean clone; and the subgraphs answering the
 * query's plan from memory, for the engine benchmarks.
 *
 * @module
 */

const FIXTURES = new URL("./load/fixtures/", import.meta.url);

/** `load/fixtures/supergraph.graphql` (= `../shared/bench/federation/supergraph.graphql`). */
export const BENCH_SUPERGRAPH: string = Deno.readTextFileSync(
  new URL("supergraph.graphql", FIXTURES),
);

/** The query of `load/fixtures/federated.request.json` (= `../shared/bench/federation/queries/federated.graphql`). */
export const BENCH_QUERY: string = (JSON.parse(
  Deno.readTextFileSync(new URL("federated.request.json", FIXTURES)),
) as { query: string }).query;

// The subgraphs answer from memory: 6 users, 9 products (5 top), 2 reviews each.
const users = Array.from({ length: 6 }, (_, i) => ({
  __typename: "User",
  id: `${i + 1}`,
  username: `user${i}`,
  name: `User ${i}`,
}));
const products = Array.from({ length: 9 }, (_, i) => ({
  __typename: "Product",
  upc: `${i + 1}`,
  name: `Product ${i}`,
  price: 100 + i,
  weight: 10 + i,
  inStock: i % 2 === 0,
  shippingEstimate: 5 + i,
}));
const review = (i: number) => ({
  __typename: "Review",
  id: `${i + 1}`,
  body: "A review body of a reasonable length. ".repeat(3),
  product: { __typename: "Product", upc: `${(i % 9) + 1}` },
  author: { __typename: "User", id: `${(i % 6) + 1}`, username: `user${i % 6}` },
});

/**
 * What the in-memory subgraphs answer one subgraph request body of {@linkcode BENCH_QUERY}'s
 * plan: the root fields, or the entities asked for.
 * @param body The subgraph request body (JSON).
 * @returns The response payload.
 */
export function benchSubgraphPayload(body: string): unknown {
  const { query, variables } = JSON.parse(body) as {
    query: string;
    variables: { representations?: { __typename: string; upc?: string; id?: string }[] };
  };
  if (!query.includes("_entities")) return { data: { users, topProducts: products.slice(0, 5) } };
  return {
    data: {
      _entities: (variables.representations ?? []).map((r, i) =>
        r.__typename === "Product"
          ? { ...products[Number(r.upc) - 1], reviews: [review(i), review(i + 1)] }
          : r.__typename === "Review"
          ? review(i)
          : { ...users[Number(r.id) - 1], reviews: [review(i), review(i + 2)] }
      ),
    },
  };
}

/**
 * A `fetch` answering as the in-memory subgraphs ({@linkcode benchSubgraphPayload}).
 * @param options `memo`: the same bytes for the same body, built once (as a warm subgraph).
 * @returns The fetch.
 */
export function benchSubgraphFetch(
  options: { readonly memo?: boolean } = {},
): (request: Request) => Promise<Response> {
  const answers = new Map<string, string>();
  return async (request) => {
    const body = await request.text();
    if (!options.memo) return Response.json(benchSubgraphPayload(body));
    let text = answers.get(body);
    if (text === undefined) {
      text = JSON.stringify(benchSubgraphPayload(body));
      answers.set(body, text);
    }
    return new Response(text);
  };
}
