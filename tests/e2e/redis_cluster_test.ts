/**
 * The Redis store on a real 3-master Redis Cluster (`cluster_enabled: true`):
 * it becomes available (a cluster client says `connect`, never `ready`), and
 * its commands work whatever slot their keys hash to: GCRA rate-limit steps,
 * multi-key reads, prefix deletion over every master, tag indexes; a master
 * lost makes it unavailable (calls fail at once, never hang). The entity
 * cache through the router on a cluster: entity_cache_tags_test.ts.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../../lib/config/mod.ts";
import { RedisStore, StoreUnavailable } from "../../lib/store/mod.ts";
import { REDIS_SERVER, startRedisCluster } from "./_redis.ts";

Deno.test({
  name:
    "Redis Cluster store: available; rate limits, reads, prefix and tag deletion across slots; a lost master makes it unavailable",
  ignore: REDIS_SERVER === null,
  async fn() {
    const cluster = await startRedisCluster();
    const provider = parseConfig({
      storage_providers: {
        redis: [{ id: "c", urls: [...cluster.urls], cluster_enabled: true, command_timeout: "2s" }],
      },
    }).storage_providers.redis[0]!;
    const changes: boolean[] = [];
    const store = new RedisStore(provider, { onAvailability: (up) => changes.push(up) });
    try {
      for (let i = 0; i < 200 && !store.available; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(store.available, true, `availability changes: ${changes}`);
      const limit = { rate: 1, burst: 1, periodMs: 60_000 };
      // Keys in several slots: each has its own budget.
      for (const client of ["a", "b", "c", "d", "e"]) {
        assert.equal((await store.rateLimit(`rl:${client}`, limit)).allowed, true);
        assert.equal((await store.rateLimit(`rl:${client}`, limit)).allowed, false);
      }
      const keys = Array.from({ length: 20 }, (_, i) => `p:${i}`);
      for (const key of keys) await store.set(key, key.toUpperCase(), 60_000);
      assert.deepEqual(await store.getMany([...keys, "p:none"]), [
        ...keys.map((key) => key.toUpperCase()),
        null,
      ]);
      assert.equal(
        await store.setTagged("p:0", "P0", { ttlMs: 60_000, tagKeys: ["#tag:x"] }),
        "stored",
      );
      assert.equal(
        await store.setTagged("p:7", "P7", { ttlMs: 60_000, tagKeys: ["#tag:x"] }),
        "stored",
      );
      assert.equal(await store.deleteTagged("#tag:x"), 2);
      assert.deepEqual(await store.getMany(["p:0", "p:7", "p:1"]), [null, null, "P:1"]);
      assert.equal(await store.deletePrefix("p:"), 18);
      assert.deepEqual(await store.getMany(keys), keys.map(() => null));
      // A master lost: the store is unavailable (the features fall back), and calls fail at once.
      await cluster.kill(1);
      for (let i = 0; i < 100 && store.available; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(store.available, false);
      assert.equal(changes.at(-1), false);
      await assert.rejects(store.getMany(keys), StoreUnavailable);
    } finally {
      await store.close();
      await cluster.stop();
    }
  },
});
