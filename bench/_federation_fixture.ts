/**
 * The federation benchmark's supergraph and nested query, read from the load
 * benchmark's fixtures (`load/fixtures/`, copied from
 * `../shared/bench/federation`) so the engine benchmarks and the load
 * benchmark share one copy and run on a clean clone.
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
