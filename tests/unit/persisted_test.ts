/**
 * Issue 30, what document a request runs: trusted documents prepared once,
 * APQ registration with a verified hash, the safelist and log_unknown.
 */
import assert from "node:assert/strict";
import {
  buildTrustedDocuments,
  parseManifest,
  type PersistedState,
  resolveDocument,
  sha256Hex,
} from "../../lib/persisted/mod.ts";
import { ApqCache, MemoryStore } from "../../lib/store/mod.ts";

async function state(
  options: Partial<PersistedState> = {},
): Promise<PersistedState & { prepared: string[] }> {
  const prepared: string[] = [];
  const documents = await buildTrustedDocuments([{ id: "custom-id", body: "query A { a }" }], {
    prepare: (query, name) => {
      prepared.push(`${name ?? ""}:${query}`);
      return { ok: false, stage: "select", errors: [] };
    },
  });
  return {
    documents,
    safelist: false,
    logUnknown: false,
    apq: new ApqCache({
      memory: new MemoryStore({ maxBytes: 100_000 }),
      shared: null,
      prefix: "apq",
      ttlMs: 60_000,
    }),
    prepared,
    ...options,
  };
}

Deno.test("persisted: a trusted document is prepared once at load, per operation name, and found by id or SHA-256", async () => {
  const s = await state();
  assert.deepEqual(s.prepared, [":query A { a }", "A:query A { a }"]);
  for (const hash of ["custom-id", await sha256Hex("query A { a }")]) {
    const result = await resolveDocument(s, { query: null, operationName: "A", hash });
    assert.ok(result.ok && result.trusted !== null, hash);
  }
  assert.equal(s.prepared.length, 2, "no preparation per request");
});

Deno.test("APQ: registration needs the text's SHA-256 (PERSISTED_QUERY_HASH_MISMATCH otherwise), then the hash alone runs it", async () => {
  const s = await state();
  const query = "{ b }";
  const wrong = await resolveDocument(s, { query, operationName: null, hash: "00".repeat(32) });
  assert.equal(wrong.ok ? "" : wrong.error.code, "PERSISTED_QUERY_HASH_MISMATCH");
  const hash = await sha256Hex(query);
  assert.equal((await resolveDocument(s, { query: null, operationName: null, hash })).ok, false);
  assert.equal((await resolveDocument(s, { query, operationName: null, hash })).ok, true);
  const byHash = await resolveDocument(s, { query: null, operationName: null, hash });
  assert.ok(byHash.ok && byHash.query === query && byHash.trusted === null);
});

Deno.test("safelist: anything not trusted is PERSISTED_QUERY_NOT_IN_LIST; log_unknown only reports it", async () => {
  const seen: boolean[] = [];
  const strict = await state({
    safelist: true,
    apq: null,
    onUnknown: (refused) => seen.push(refused),
  });
  const refused = await resolveDocument(strict, {
    query: "{ b }",
    operationName: null,
    hash: null,
  });
  assert.equal(refused.ok ? "" : refused.error.code, "PERSISTED_QUERY_NOT_IN_LIST");
  const trusted = await resolveDocument(strict, {
    query: "query A { a }",
    operationName: "A",
    hash: null,
  });
  assert.ok(trusted.ok && trusted.trusted !== null);
  const rollout = await state({ logUnknown: true, onUnknown: (refused) => seen.push(refused) });
  assert.equal(
    (await resolveDocument(rollout, { query: "{ b }", operationName: null, hash: null })).ok,
    true,
  );
  assert.deepEqual(seen, [true, false]);
});

Deno.test("manifests: an unreadable one names the file and what is wrong", () => {
  assert.throws(() => parseManifest("[1]", "m.json"), {
    code: "CONFIG_INVALID",
    message: /m\.json.*JSON object/,
  });
  assert.throws(
    () =>
      parseManifest(
        '{"format":"apollo-persisted-query-manifest","version":2,"operations":[]}',
        "pq.json",
      ),
    { message: /unsupported version 2/ },
  );
  assert.throws(() => parseManifest('{"abc": 1}', "map.json"), {
    message: /"abc" must be a document/,
  });
});

Deno.test("APQ: a document past maxDocumentLength runs but is not registered (a client cannot fill the store)", async () => {
  const apq = new ApqCache({
    memory: new MemoryStore({ maxBytes: 1_000_000 }),
    shared: null,
    prefix: "apq",
    ttlMs: 60_000,
    maxDocumentLength: 100,
  });
  const s = await state({ apq });
  const long = `{ ${"a ".repeat(60)}}`;
  const hash = await sha256Hex(long);
  assert.equal((await resolveDocument(s, { query: long, operationName: null, hash })).ok, true);
  const byHash = await resolveDocument(s, { query: null, operationName: null, hash });
  assert.equal(byHash.ok ? "" : byHash.error.code, "PERSISTED_QUERY_NOT_FOUND");
});
