/**
 * Issue 15: the parse and plan caches are bounded in bytes, keep no AST
 * locations, and never hold a document over `engine.max_cached_document_bytes`.
 */
import assert from "node:assert/strict";
import { createEngine, planOf, prepare } from "../../../lib/engine/mod.ts";
import { entryCost } from "../../../lib/engine/admission/cache_cost.ts";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";

const MODEL = buildSupergraph(
  Deno.readTextFileSync(new URL("../../../schema/supergraph.graphql", import.meta.url)),
);

/** A distinct valid document of about `bytes` characters (aliases of `users { id }`). */
function bigDocument(index: number, bytes: number): string {
  const alias = `a${index}_${"x".repeat(40)}`;
  const count = Math.ceil(bytes / (alias.length + 20));
  const fields = Array.from({ length: count }, (_, i) => `${alias}${i}: users { id }`);
  return `query Q${index} { ${fields.join(" ")} }`;
}

Deno.test("issue 15: many large distinct documents never hold more than the caches' byte bounds", () => {
  const maxBytes = 2_000_000;
  const engine = createEngine(MODEL, {
    parseCacheMaxBytes: maxBytes,
    planCacheMaxBytes: maxBytes,
  });
  for (let i = 0; i < 60; i++) {
    const prepared = prepare(engine, { query: bigDocument(i, 10_000) });
    assert.ok(prepared.ok);
    planOf(engine, prepared.operation);
    assert.ok(engine.prepared.bytes <= maxBytes, `parse cache at ${engine.prepared.bytes} bytes`);
    assert.ok(engine.plans.bytes <= maxBytes, `plan cache at ${engine.plans.bytes} bytes`);
  }
  // The count bound (1 000) alone would have kept all 60 (about 24 MB by the estimate).
  assert.ok(engine.prepared.size < 60 && engine.prepared.size > 0);
  assert.ok(engine.plans.size < 60 && engine.plans.size > 0);
  assert.equal(
    engine.prepared.bytes,
    engine.prepared.size * entryCost(`${bigDocument(59, 10_000)}\u0000`),
  );
});

Deno.test("issue 15: a document over engine.max_cached_document_bytes is neither parse- nor plan-cached", () => {
  const engine = createEngine(MODEL, { maxCachedDocumentBytes: 5_000 });
  const big = prepare(engine, { query: bigDocument(1, 6_000) });
  assert.ok(big.ok);
  planOf(engine, big.operation);
  assert.equal(engine.prepared.size, 0);
  assert.equal(engine.plans.size, 0);
  const small = prepare(engine, { query: "{ users { id } }" });
  assert.ok(small.ok);
  planOf(engine, small.operation);
  assert.equal(engine.prepared.size, 1);
  assert.equal(engine.plans.size, 1);
  // The operation name is part of the key: a small document with a huge name is not cached either.
  const named = prepare(engine, { query: "{ users { id } }", operationName: "n".repeat(6_000) });
  assert.ok(!named.ok);
  assert.equal(engine.prepared.size, 1);
});

Deno.test("issue 15: cached documents keep no AST locations; validation errors still have them", () => {
  const engine = createEngine(MODEL);
  const prepared = prepare(engine, { query: "{ users { id } }" });
  assert.ok(prepared.ok);
  assert.equal(prepared.operation.document.loc, undefined);
  assert.equal(prepared.operation.operation.selectionSet.loc, undefined);
  const invalid = prepare(engine, { query: "{\n  users { zzz } }" });
  assert.ok(!invalid.ok);
  assert.deepEqual(invalid.errors[0]?.locations, [{ line: 2, column: 11 }]);
});
