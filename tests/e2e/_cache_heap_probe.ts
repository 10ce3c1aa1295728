/**
 * Probe of `document_caches_memory_test.ts` (run with `--v8-flags=--expose-gc`):
 * the real heap a parse + plan cache entry pair takes, against the estimate
 * (`entryCost` of both), for distinct documents of one size. Prints one JSON line.
 *
 *   deno run -A --v8-flags=--expose-gc tests/e2e/_cache_heap_probe.ts tiny|large
 *
 * @module
 */
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { buildSupergraph } from "../../lib/supergraph/mod.ts";
import { createEngine, execute, prepare } from "../../lib/engine/mod.ts";
import { entryCost } from "../../lib/engine/admission/cache_cost.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])\n';
const composed = composeSupergraph([{
  name: "s",
  url: "http://127.0.0.1:1/graphql",
  sdl: LINK + "type Query { small(n: Int): String }",
}]);
if (!composed.ok) throw new Error("the probe's subgraph does not compose");
const model = buildSupergraph(composed.supergraphSdl);
/** Answers every field the subgraph operation selects with "ok". */
const fetch = async (request: Request) => {
  const query = String(JSON.parse(await request.text()).query);
  const data: Record<string, string> = {};
  for (const match of query.matchAll(/(\w+)\s*:\s*small/g)) data[match[1]!] = "ok";
  return Response.json({ data });
};
const engine = createEngine(model, {
  fetch,
  http1: null,
  planCacheSize: 1e7,
  parseCacheMaxBytes: 1e10,
  planCacheMaxBytes: 1e10,
});
const large = Deno.args[0] === "large";
const documentOf = (i: number) =>
  large
    ? `{ ${Array.from({ length: 60 }, (_, k) => `a${i}x${k}: small(n: ${k})`).join(" ")} }`
    : `{ a${i}: small(n: ${i}) }`;
const count = large ? 300 : 5000;

async function run(from: number, to: number): Promise<number> {
  let estimate = 0;
  for (let i = from; i < to; i++) {
    const query = documentOf(i);
    const prepared = prepare(engine, { query });
    if (!prepared.ok) throw new Error(`not prepared: ${query}`);
    await execute(engine, prepared.operation, {});
    estimate += 2 * entryCost(`${query}\u0000`);
  }
  return estimate;
}

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --v8-flags=--expose-gc");
await run(0, 50);
gc();
gc();
const before = Deno.memoryUsage().heapUsed;
const estimate = await run(100, 100 + count);
gc();
gc();
const real = Deno.memoryUsage().heapUsed - before;
console.log(JSON.stringify({
  documentBytes: documentOf(0).length,
  realPerEntryPair: Math.round(real / count),
  estimatePerEntryPair: Math.round(estimate / count),
}));
