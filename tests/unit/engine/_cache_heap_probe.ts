/**
 * Run by `cache_cost_heap_test.ts` with `--v8-flags=--expose-gc`: fills both
 * engine caches with `count` distinct documents of about `bytes` characters
 * and prints the heap they hold (after GC) next to the bytes they are charged.
 */
import { createEngine, planOf, prepare } from "../../../lib/engine/mod.ts";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";

const [bytes, count] = Deno.args.map(Number) as [number, number];
const model = buildSupergraph(
  Deno.readTextFileSync(new URL("../../../schema/supergraph.graphql", import.meta.url)),
);
const gc = (globalThis as unknown as { gc: () => void }).gc;

/** A distinct valid document of about `size` characters (aliases of `users { id }`). */
function document(index: number, size: number): string {
  const fields: string[] = [];
  let length = 12;
  for (let i = 0; length < size || i === 0; i++) {
    const field = `a${index}_${i}: users { id }`;
    fields.push(field);
    length += field.length + 1;
  }
  return `query Q${index} { ${fields.join(" ")} }`;
}

const engine = createEngine(model, {
  parseCacheMaxBytes: 1e12,
  planCacheMaxBytes: 1e12,
  planCacheSize: 1e6,
});
const texts = Array.from({ length: count }, (_, i) => document(i, bytes));
// Warm: the first plan builds shared structures that are not per entry.
const warm = prepare(engine, { query: document(count + 1, bytes) });
if (warm.ok) planOf(engine, warm.operation);
gc();
gc();
const before = Deno.memoryUsage().heapUsed;
const charged = engine.prepared.bytes + engine.plans.bytes;
const entries = engine.prepared.size + engine.plans.size;
for (const query of texts) {
  const prepared = prepare(engine, { query });
  if (!prepared.ok) throw new Error(JSON.stringify(prepared.errors));
  planOf(engine, prepared.operation);
}
gc();
gc();
const heap = Deno.memoryUsage().heapUsed - before;
console.log(JSON.stringify({
  heap,
  charged: engine.prepared.bytes + engine.plans.bytes - charged,
  entries: engine.prepared.size + engine.plans.size - entries,
  chars: texts[0]!.length,
}));
