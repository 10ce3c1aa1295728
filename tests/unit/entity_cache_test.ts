/**
 * Issue 42, the pure parts of the entity cache: reading a subgraph's
 * Cache-Control, the client answer's policy, keys (canonical, so an
 * invalidation's key finds the entry), the invalidation request's shape, the
 * config's checks, and the memory store's prefix deletion.
 */
import assert from "node:assert/strict";
import { CachePolicy, invalidationPrefix, parseCacheControl } from "../../lib/engine/mod.ts";
import { canonicalJson, topLevelFields } from "../../lib/engine/execute/entity_cache.ts";
import { readTargets } from "../../lib/http/entity_cache_invalidation.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { EntityCacheStore, MemoryStore } from "../../lib/store/mod.ts";

Deno.test("Cache-Control: s-maxage over max-age, private, no-store and no-cache, unreadable ages", () => {
  assert.deepEqual(parseCacheControl("public, max-age=60"), {
    cacheable: true,
    ttlMs: 60_000,
    private: false,
  });
  assert.equal(parseCacheControl("max-age=60, s-maxage=10").ttlMs, 10_000);
  assert.equal(parseCacheControl("PRIVATE, Max-Age=5").private, true);
  assert.equal(parseCacheControl("max-age=5, no-store").cacheable, false);
  assert.equal(parseCacheControl("no-cache").cacheable, false);
  assert.equal(parseCacheControl("max-age=abc").ttlMs, 0);
  assert.equal(parseCacheControl("max-age=-1").ttlMs, 0);
  assert.equal(parseCacheControl("").ttlMs, null);
});

Deno.test("client Cache-Control: the smallest TTL, private if any part was, no-store if any part could not be cached", () => {
  const policy = new CachePolicy();
  policy.add({ cacheable: true, ttlMs: 120_000, private: false });
  policy.add({ cacheable: true, ttlMs: 45_000, private: false });
  assert.equal(policy.header(), "max-age=45, public");
  policy.add({ cacheable: true, ttlMs: 90_000, private: true });
  assert.equal(policy.header(), "max-age=45, private");
  policy.add({ cacheable: true, ttlMs: 0, private: false });
  assert.equal(policy.header(), "no-store");
  const silent = new CachePolicy();
  silent.add({ cacheable: true, ttlMs: null, private: false });
  assert.equal(silent.header(), "no-store");
  const failed = new CachePolicy();
  failed.uncacheable();
  assert.equal(failed.header(), "no-store");
});

Deno.test("entity keys: canonical JSON whatever the order; an invalidation names the same prefix", () => {
  assert.equal(
    canonicalJson({ b: [2, { y: 1, x: 2 }], a: "1" }),
    '{"a":"1","b":[2,{"x":2,"y":1}]}',
  );
  assert.deepEqual(topLevelFields("upc sku { id } owner { org { id } }"), ["upc", "sku", "owner"]);
  const one = invalidationPrefix({ subgraph: "s", type: "T", key: { a: 1, b: "x" } });
  const two = invalidationPrefix({ subgraph: "s", type: "T", key: { b: "x", a: 1 } });
  assert.equal(one, two);
  assert.equal(one, 's:T:{"a":1,"b":"x"}:');
  assert.equal(invalidationPrefix({ subgraph: "s", type: "T" }), "s:T:");
  assert.equal(invalidationPrefix({ subgraph: "s" }), "s:");
});

Deno.test("invalidation requests: Apollo Router's four kinds; anything else says what is wrong", () => {
  assert.deepEqual(
    readTargets([
      { kind: "subgraph", subgraph: "a" },
      { kind: "type", subgraph: "a", type: "T" },
      { kind: "entity", subgraph: "a", type: "T", key: { id: "1" } },
      { kind: "cache_tag", subgraphs: ["a", "b", "a"], cache_tag: "t-1" },
    ]),
    [
      { kind: "subgraph", subgraph: "a" },
      { kind: "type", subgraph: "a", type: "T" },
      {
        kind: "entity",
        subgraph: "a",
        type: "T",
        key: { id: "1" },
      },
      { kind: "cache_tag", subgraph: "a", tag: "t-1" },
      {
        kind: "cache_tag",
        subgraph: "b",
        tag: "t-1",
      },
    ],
  );
  assert.match(
    String(readTargets([{ kind: "cache_tag", subgraphs: [], cache_tag: "t" }])),
    /"subgraphs"/,
  );
  assert.match(
    String(readTargets([{ kind: "cache_tag", subgraphs: ["a:*"], cache_tag: "t" }])),
    /"subgraphs"/,
  );
  assert.match(String(readTargets([{ kind: "cache_tag", subgraphs: ["a"] }])), /"cache_tag"/);
  assert.match(
    String(readTargets([{ kind: "cache_tag", subgraphs: ["a"], cache_tag: "x".repeat(1025) }])),
    /"cache_tag"/,
  );
  assert.match(String(readTargets([])), /1 to 100/);
  assert.match(
    String(readTargets(new Array(101).fill({ kind: "subgraph", subgraph: "a" }))),
    /1 to 100/,
  );
  assert.match(String(readTargets([{ kind: "type", subgraph: "a" }])), /"type"/);
  assert.match(String(readTargets([{ kind: "subgraph", subgraph: "a:*" }])), /"subgraph"/);
  assert.match(
    String(readTargets([{ kind: "entity", subgraph: "a", type: "T", key: [1] }])),
    /"key"/,
  );
  assert.match(String(readTargets([{ kind: "tag", subgraph: "a", type: "T" }])), /"kind"/);
  assert.match(String(readTargets([null])), /not an object/);
});

Deno.test("entity_cache config: private_id forms, a provider that exists, a strong shared key", () => {
  const ok = parseConfig({
    entity_cache: {
      enabled: true,
      private_id: "token_subject",
      default_ttl: "30s",
      subgraphs: { all: { ttl: "10s" }, reviews: { enabled: false } },
    },
  }).entity_cache;
  assert.equal(ok.default_ttl_ms, 30_000);
  assert.deepEqual(ok.subgraphs.reviews, { enabled: false, ttl_ms: 0 });
  assert.throws(
    () => parseConfig({ entity_cache: { private_id: "client_ip" } }),
    /entity_cache\.private_id.*token_subject or header:<Name>/,
  );
  assert.throws(
    () => parseConfig({ entity_cache: { storage: { provider_id: "nope" } } }),
    /entity_cache\.storage\.provider_id.*no storage_providers\.redis entry/,
  );
  assert.throws(
    () => parseConfig({ entity_cache: { invalidation: { enabled: true, shared_key: "short" } } }),
    /entity_cache\.invalidation\.shared_key.*at least 16/,
  );
  assert.throws(
    () =>
      parseConfig({
        entity_cache: {
          invalidation: { enabled: true, shared_key: "k".repeat(16), path: "/graphql" },
        },
      }),
    /entity_cache\.invalidation\.path.*another endpoint/,
  );
});

Deno.test("memory store: a prefix deletion counts live entries only and leaves other prefixes", async () => {
  let now = 0;
  const store = new EntityCacheStore({
    store: new MemoryStore({ maxBytes: 100_000, now: () => now }),
    prefix: "p",
  });
  await store.set("a:T:1:x", "1", 100);
  await store.set("a:T:2:x", "2", 10);
  await store.set("ab:T:1:x", "3", 100);
  now = 50;
  assert.equal(await store.invalidate("a:"), 1);
  assert.deepEqual(await store.getMany(["a:T:1:x", "ab:T:1:x"]), [null, "3"]);
});
