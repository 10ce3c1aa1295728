/**
 * Issue 42, the pure parts of `@cacheTag` and the stores' bounds: formats read
 * from a supergraph (and refused when malformed), tags rendered from key fields
 * and arguments, the memory store's tag indexes (bounded in bytes and keys,
 * expired and evicted keys pruned, nothing left after an invalidation), and
 * the entity cache's metrics counting only what was stored, in UTF-8 bytes.
 */
import assert from "node:assert/strict";
import { parse } from "graphql";
import { RouterError } from "../../lib/errors.ts";
import { CachePolicy } from "../../lib/engine/mod.ts";
import { storeRoot } from "../../lib/engine/execute/entity_cache.ts";
import { EntityCacheStore, MemoryStore } from "../../lib/store/mod.ts";
import { parseCacheTagFormat, readCacheTags, renderCacheTag } from "../../lib/supergraph/mod.ts";

function refusal(sdl: string): string {
  try {
    readCacheTags(parse(sdl), "Query");
  } catch (error) {
    assert.ok(error instanceof RouterError);
    assert.equal(error.code, "SUPERGRAPH_INVALID");
    return error.message;
  }
  throw new Error("not refused");
}

Deno.test("@cacheTag formats: read from types and root fields; malformed ones refuse the supergraph", () => {
  const tags = readCacheTags(
    parse(`
    type Query {
      user(id: ID!, org: OrgInput): User @cacheTag(format: "user-{$args.id}") @cacheTag(format: "org-{$args.org.id}")
      plain: Int
    }
    type User @cacheTag(format: "user-{$key.id}") @federation__cacheTag(format: "users") { id: ID! }
    extend type User @cacheTag(format: "org-{$key.org.id}")
  `),
    "Query",
  );
  assert.equal(tags.types.get("User")?.length, 3);
  assert.equal(tags.rootFields.get("user")?.length, 2);
  assert.equal(tags.rootFields.has("plain"), false);
  assert.match(refusal(`type User @cacheTag(format: "u-{$args.id}") { id: ID }`), /User.*\{\$key/);
  assert.match(
    refusal(`type Query { u(id: ID): Int @cacheTag(format: "u-{$key.id}") }`),
    /Query\.u.*\{\$args/,
  );
  assert.match(
    refusal(`type Query { u(id: ID): Int @cacheTag(format: "u-{$args.name}") }`),
    /no argument "name"/,
  );
  assert.match(
    refusal(`type User { name(x: Int): Int @cacheTag(format: "n") }`),
    /User\.name: only root fields/,
  );
  assert.match(refusal(`type User @cacheTag(format: "u-{id}") { id: ID }`), /is not \{\$key/);
  assert.match(refusal(`type User @cacheTag(format: "u-{$key.id") { id: ID }`), /unmatched "\{"/);
  assert.match(refusal(`type User @cacheTag(format: "u-}") { id: ID }`), /unmatched "\}"/);
  assert.match(refusal(`type User @cacheTag(format: "") { id: ID }`), /1 to 256/);
});

Deno.test("@cacheTag tags: nested key fields and scalars; a missing or non-scalar value makes no tag", () => {
  const format = parseCacheTagFormat("t-{$key.org.id}-{$key.n}");
  assert.ok(typeof format !== "string");
  assert.equal(renderCacheTag(format, { key: { org: { id: "a" }, n: 2 } }), "t-a-2");
  assert.equal(renderCacheTag(format, { key: { org: { id: true }, n: 0 } }), "t-true-0");
  assert.equal(renderCacheTag(format, { key: { org: {}, n: 2 } }), null);
  assert.equal(renderCacheTag(format, { key: { org: { id: ["a"] }, n: 2 } }), null);
  assert.equal(renderCacheTag(format, { key: { org: null, n: 2 } }), null);
});

Deno.test("memory tag indexes: bounded in bytes and keys; expired and evicted keys pruned; nothing left after invalidation", async () => {
  let now = 0;
  // Each key held costs 64 + 2 × its length: "k1" → 68; a tag's own 64 + 2 × length.
  const store = new MemoryStore({
    maxBytes: 10_000,
    maxTagIndexBytes: 64 + 2 * 2 + 3 * 68,
    maxKeysPerTag: 2,
    now: () => now,
  });
  const tagged = (ttlMs: number) => ({ ttlMs, tagKeys: ["t1"] });
  assert.equal(await store.setTagged("k1", "a", tagged(100)), "stored");
  assert.equal(await store.setTagged("k2", "b", tagged(200)), "stored");
  // Two live keys already: a third is refused and not written.
  assert.equal(await store.setTagged("k3", "c", tagged(100)), "index_full");
  assert.equal(await store.get("k3"), null);
  // Rewriting a key already held is no new key.
  assert.equal(await store.setTagged("k1", "a2", tagged(100)), "stored");
  // Once k1 expired, its place is free.
  now = 150;
  assert.equal(await store.setTagged("k3", "c", tagged(100)), "stored");
  // The byte bound: a second tag index does not fit while the first holds its keys.
  assert.equal(await store.setTagged("k4", "d", { ttlMs: 100, tagKeys: ["t2"] }), "index_full");
  assert.equal(await store.deleteTagged("t1"), 2);
  assert.equal(store.tagIndexBytes, 0, "an invalidated index leaves nothing behind");
  assert.equal(await store.get("k2"), null);
  assert.equal(await store.deleteTagged("t1"), 0);
  // A key the LRU dropped leaves its index at the next prune.
  const small = new MemoryStore({
    maxBytes: 200,
    maxTagIndexBytes: 1_000,
    maxKeysPerTag: 1,
    now: () => now,
  });
  assert.equal(await small.setTagged("a", "x".repeat(40), tagged(1_000)), "stored");
  await small.set("b", "y".repeat(40), 1_000); // evicts "a"
  assert.equal(await small.get("a"), null);
  assert.equal(await small.setTagged("c", "z", tagged(1_000)), "stored");
  assert.equal(await small.setTagged("d", "x".repeat(100), tagged(1_000)), "too_large");
});

Deno.test("entity cache metrics: only entries stored are counted, in UTF-8 bytes; others by reason", async () => {
  const stored: [string, string, number][] = [];
  const skipped: string[] = [];
  const run = (backend: EntityCacheStore) => ({
    settings: {
      backend,
      ttlOf: () => 60_000,
      keyFields: () => new Set<string>(),
      now: () => 1_000,
      events: {
        lookup() {},
        stored: (subgraph: string, type: string, bytes: number) =>
          void stored.push([subgraph, type, bytes]),
        skipped: (_: string, __: string, reason: string) => void skipped.push(reason),
      },
    },
    privateId: null,
    policy: new CachePolicy(),
  });
  const answer = (payload: unknown) => ({
    subgraph: "s",
    headers: new Headers({ "cache-control": "max-age=60" }),
    ok: true,
    payload,
  });
  const lookup = { key: "s:Query:root:h", privateSuffix: null, type: "Query" };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
  const roomy = new EntityCacheStore({
    store: new MemoryStore({ maxBytes: 100_000 }),
    prefix: "e",
    maxEntryBytes: 40,
  });
  storeRoot(run(roomy), lookup, answer({ data: { a: "é" } }));
  await settle();
  // `61000:0:{"data":{"a":"é"}}`: 26 characters, 27 bytes.
  assert.deepEqual(stored, [["s", "Query", 27]]);
  storeRoot(run(roomy), lookup, answer({ data: { a: "x".repeat(40) } }));
  await settle();
  assert.deepEqual(skipped, ["too_large"], "over max_entry_bytes: not stored, not counted");
  // The memory store's own bound: an entry larger than all of it was counted as stored before.
  const tiny = new EntityCacheStore({ store: new MemoryStore({ maxBytes: 100 }), prefix: "e" });
  storeRoot(run(tiny), lookup, answer({ data: { a: "x".repeat(40) } }));
  await settle();
  assert.equal(stored.length, 1);
  assert.deepEqual(skipped, ["too_large", "too_large"]);
  assert.deepEqual(await tiny.getMany([lookup.key]), [null]);
});
