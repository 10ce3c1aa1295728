/**
 * The engine alone on the `query` shape (issue 33): prepare (cached), plan
 * (cached), execute with the four subgraphs answered from memory (the same
 * bytes `query.ts` serves), and the answer's JSON, in one isolate, no HTTP.
 * Beside `bench/shapes/floor/main.ts` (the runtime's I/O without the engine)
 * it splits a request's CPU into the engine's part and the edge's.
 *
 *   deno bench -A --config tests/deno.json bench/shapes/query_engine_bench.ts
 *
 * @module
 */
import { buildSupergraph } from "../../lib/supergraph/mod.ts";
import { createEngine, execute, prepare, resultJson } from "../../lib/engine/mod.ts";
import { QUERY_TEXT, querySubgraphs, querySupergraphSdl } from "./query.ts";

const answer = await querySubgraphs();
const engine = createEngine(buildSupergraph(querySupergraphSdl(45300)), {
  fetch: async (request: Request) => {
    const bytes = await answer(new URL(request.url).pathname, await request.text());
    return new Response(bytes, { headers: { "content-type": "application/json" } });
  },
});
let _sink: unknown;

async function once(): Promise<string> {
  const prepared = prepare(engine, { query: QUERY_TEXT });
  if (!prepared.ok) throw new Error("query did not prepare");
  return resultJson(await execute(engine, prepared.operation));
}
const first = await once();
if (first.length < 80_000 || first.includes('"errors"')) throw new Error(first.slice(0, 300));

Deno.bench("query shape: prepare + execute (6 fetches from memory) + answer JSON", async () => {
  _sink = await once();
});

Deno.bench("query shape: the same without the answer JSON", async () => {
  const prepared = prepare(engine, { query: QUERY_TEXT });
  if (prepared.ok) _sink = await execute(engine, prepared.operation);
});
