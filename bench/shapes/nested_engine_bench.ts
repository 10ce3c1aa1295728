/**
 * The engine alone on the `nested` shape (issue 45): prepare (cached), plan
 * (cached), execute with the ~8 MB subgraph answer served from memory (the
 * same bytes `nested.ts` serves) and the answer's JSON, in one isolate, no
 * HTTP; beside it the shape's floor, `JSON.parse` + `JSON.stringify` of the
 * same text. Every answer is checked against the expected one.
 *
 *   deno bench -A --config tests/deno.json bench/shapes/nested_engine_bench.ts
 *
 * @module
 */
import { buildSupergraph } from "../../lib/supergraph/mod.ts";
import { createEngine, execute, prepare, resultJson } from "../../lib/engine/mod.ts";
import { nestedExpected, nestedQuery, nestedSubgraphs, nestedSupergraphSdl } from "./nested.ts";

const answer = await nestedSubgraphs();
const engine = createEngine(buildSupergraph(nestedSupergraphSdl(45400)), {
  fetch: async (request: Request) => {
    const bytes = await answer(new URL(request.url).pathname, await request.text());
    return new Response(bytes, { headers: { "content-type": "application/json" } });
  },
});
const expected = JSON.stringify({ data: await nestedExpected() });
let _sink: unknown;

async function once(): Promise<string> {
  const prepared = prepare(engine, { query: nestedQuery() });
  if (!prepared.ok) throw new Error("query did not prepare");
  return resultJson(await execute(engine, prepared.operation));
}
const first = await once();
if (first !== expected) throw new Error(`wrong answer: ${first.slice(0, 300)}`);

Deno.bench(
  "nested shape: prepare + execute (one 8 MB fetch from memory) + answer JSON",
  async () => {
    _sink = await once();
  },
);

Deno.bench("nested shape floor: JSON.parse + JSON.stringify of the answer", () => {
  _sink = JSON.stringify(JSON.parse(expected));
});
