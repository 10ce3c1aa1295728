/**
 * Issue 30 with a real redis-server: two router processes share APQ
 * registrations and one rate-limit budget; Redis killed mid-run gives the
 * documented fallback (APQ from memory, rate limits fail open) and no request
 * fails for it; when Redis returns, the shared budget holds again.
 */
import assert from "node:assert/strict";
import { type ServeProcess, spawnServe } from "./_cli.ts";
import { REDIS_SERVER, type RedisServer, startRedis } from "./_redis.ts";
import { helloWorkspace } from "./_workspace.ts";
import { sha256Hex } from "../../lib/persisted/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { createStores } from "../../lib/store/mod.ts";

interface Fleet {
  readonly urls: readonly string[];
  readonly routers: readonly ServeProcess[];
  readonly redis: RedisServer;
  close(): Promise<void>;
}

/** A subgraph, a Redis, and two router processes on one config. */
async function fleet(rateLimit: string): Promise<Fleet> {
  const redis = await startRedis();
  const workspace = await helloWorkspace(`storage_providers:
  redis:
    - id: shared
      urls: ["${redis.url}"]
      command_timeout: 200ms
      connect_timeout: 200ms
automatic_persisted_queries:
  storage: { provider_id: shared }
rate_limit:
  enabled: true
  key: "header:X-Client"
  storage: { provider_id: shared }
${rateLimit}
`);
  const routers = [spawnServe(workspace.configPath), spawnServe(workspace.configPath)];
  const urls: string[] = [];
  for (const router of routers) {
    const line = await router.waitFor((l) => l.includes("GW Router listening"));
    urls.push(JSON.parse(line).url);
    await router.waitFor((l) => l.includes("Redis connected"));
  }
  return {
    urls,
    routers,
    redis,
    async close() {
      await Promise.all(routers.map((router) => router.close()));
      await redis.stop();
      await workspace.close();
    },
  };
}

async function post(url: string, body: unknown, client = "c1"): Promise<Response> {
  return await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", "x-client": client },
    body: JSON.stringify(body),
  });
}

const ignore = REDIS_SERVER === null;
/** Ignored tests say why in their names, as the suite's other known gaps do. */
const gap = ignore ? "KNOWN GAP (redis-server not installed; run .ci/setup.d/redis.sh): " : "";

Deno.test({
  name: gap +
    "issue 30: two routers share APQ registrations and one rate-limit budget through Redis",
  ignore,
  async fn() {
    const { urls, close } = await fleet("  rate: 40\n  burst: 40\n  period: 1m");
    try {
      const query = "{ hello }";
      const extensions = { persistedQuery: { version: 1, sha256Hash: await sha256Hex(query) } };
      // Registered on the first router, served by hash on the second.
      const registered = await post(urls[0]!, { query, extensions }, "apq");
      assert.deepEqual(await registered.json(), { data: { hello: "world" } });
      const byHash = await post(urls[1]!, { extensions }, "apq");
      assert.deepEqual(await byHash.json(), { data: { hello: "world" } });
      // One budget: 40 at once for client c1, whichever router answers.
      let allowed = 0;
      let lastRefusal: Response | null = null;
      for (let i = 0; i < 80; i++) {
        const response = await post(urls[i % 2]!, { query });
        if (response.status === 200) allowed++;
        else {
          assert.equal(response.status, 429);
          lastRefusal = response;
        }
        await response.body?.cancel();
      }
      // ±5 %: refills during the run (40 per minute) add at most a couple.
      assert.ok(allowed >= 38 && allowed <= 42, `allowed ${allowed} of 80, budget 40`);
      assert.ok(lastRefusal !== null);
      assert.ok(Number(lastRefusal.headers.get("retry-after")) >= 1);
      assert.equal(lastRefusal.headers.get("ratelimit-limit"), "40");
      assert.equal(lastRefusal.headers.get("ratelimit-remaining"), "0");
    } finally {
      await close();
    }
  },
});

Deno.test({
  name: gap +
    "issue 30: Redis killed mid-run: APQ from memory, rate limits fail open, no request fails; the shared budget returns with Redis",
  ignore,
  async fn() {
    const { urls, routers, redis, close } = await fleet("  rate: 5\n  burst: 5\n  period: 1m");
    try {
      const [a, b] = urls as [string, string];
      const query = "{ hello }";
      const extensions = { persistedQuery: { version: 1, sha256Hash: await sha256Hex(query) } };
      await redis.stop();
      // Every request is answered, none fails for Redis: 20 > burst 5 (fail open).
      for (let i = 0; i < 20; i++) {
        const response = await post(i % 2 ? a : b, { query }, `down-${Math.floor(i / 10)}`);
        const text = await response.text();
        assert.equal(response.status, 200, `request ${i}: ${text}`);
      }
      // APQ registers and serves from memory on the same router.
      const registered = await post(a, { query, extensions }, "apq-down");
      assert.deepEqual(await registered.json(), { data: { hello: "world" } });
      const byHash = await post(a, { extensions }, "apq-down");
      assert.deepEqual(await byHash.json(), { data: { hello: "world" } });
      // Logged once per change of state, counted, and readiness unaffected.
      for (const router of routers) {
        await router.waitFor((l) => l.includes("Redis unavailable"));
      }
      const ready = await fetch(`${a}/health/ready`);
      assert.equal(ready.status, 200);
      await ready.body?.cancel();
      await redis.start();
      for (const router of routers) {
        const connected = (l: string) => l.includes("Redis connected");
        await router.waitFor((l) => connected(l) && router.lines.filter(connected).length >= 2);
      }
      // Shared again: client "back" gets 5 across both routers, then 429.
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) {
        const response = await post(i % 2 ? a : b, { query }, "back");
        statuses.push(response.status);
        await response.body?.cancel();
      }
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429, 429]);
      for (const router of routers) {
        assert.equal(router.lines.filter((l) => l.includes("Redis unavailable")).length, 1);
      }
    } finally {
      await close();
    }
  },
});

Deno.test({
  name: gap +
    "issue 30: a Redis that hangs (connected, answering nothing) costs a request at most command_timeout",
  ignore,
  async fn() {
    const { urls, redis, close } = await fleet("  rate: 5\n  burst: 5\n  period: 1m");
    try {
      const query = "{ hello }";
      const extensions = { persistedQuery: { version: 1, sha256Hash: await sha256Hex(query) } };
      redis.freeze(true);
      for (let i = 0; i < 8; i++) {
        const started = performance.now();
        const response = await post(urls[0]!, i === 0 ? { query, extensions } : { query }, "hung");
        const text = await response.text();
        const ms = performance.now() - started;
        assert.equal(response.status, 200, text);
        // command_timeout is 200 ms; a registration and a rate-limit check each wait at most that.
        assert.ok(ms < 1_500, `request ${i} took ${Math.round(ms)} ms`);
      }
      redis.freeze(false);
    } finally {
      redis.freeze(false);
      await close();
    }
  },
});

Deno.test({
  name: gap +
    "issue 30: Redis's reachability is reported once per change and each fallback is counted",
  ignore,
  async fn() {
    const redis = await startRedis({ stopped: true });
    const events: string[] = [];
    const config = parseConfig({
      storage_providers: { redis: [{ id: "r", urls: [redis.url], connect_timeout: "100ms" }] },
      automatic_persisted_queries: { storage: { provider_id: "r" } },
      rate_limit: { storage: { provider_id: "r" } },
    });
    const lines: string[] = [];
    const log = {
      debug() {},
      info: (msg: string) => lines.push(msg),
      warn: (msg: string) => lines.push(msg),
      error() {},
    };
    const stores = createStores(config, {
      log,
      events: {
        fallback: (feature) => events.push(`fallback ${feature}`),
        availability: (provider, up) => events.push(`${provider} ${up ? "up" : "down"}`),
      },
    });
    try {
      const until = async (what: () => boolean) => {
        for (let i = 0; i < 200 && !what(); i++) await new Promise((r) => setTimeout(r, 25));
        assert.ok(what(), JSON.stringify(events));
      };
      await until(() => lines.some((l) => l.startsWith("Redis unavailable")));
      await stores.apq.set("h", "{ a }");
      assert.equal(await stores.apq.get("h"), "{ a }"); // from memory
      const limit = { rate: 1, burst: 1, periodMs: 60_000 };
      assert.equal((await stores.rateLimiter.check("k", limit)).kind, "fail_open");
      await redis.start();
      await until(() => events.includes("r up"));
      assert.equal((await stores.rateLimiter.check("k", limit)).kind, "decided");
      // Initial "down" gauge, one change to down (logged), one change to up.
      assert.deepEqual(events.filter((e) => e.startsWith("r ")), ["r down", "r down", "r up"]);
      assert.deepEqual(events.filter((e) => e.startsWith("fallback")), [
        "fallback apq",
        "fallback rate_limit",
      ]);
      assert.equal(lines.filter((l) => l.startsWith("Redis unavailable")).length, 1);
    } finally {
      await stores.close();
      await redis.stop();
    }
  },
});
