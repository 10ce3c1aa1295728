/**
 * Issue 42's "what it must show", on each backend the cache runs on: in
 * memory, and on a real redis-server shared by two replicas (what one replica
 * stored, the other serves; what one invalidates, both lose). Through the
 * router's HTTP handler over real subgraphs on loopback:
 *
 * - a `private` entity is served again to its identity (on either replica),
 *   never to another;
 * - TTL expiry (a controlled clock), and on Redis every entry has its `PX`;
 * - `no-store`, `no-cache`, `max-age=0` and an unreadable age store nothing;
 * - a partial hit asks the subgraph only for the missing representations, in
 *   order; an entity that came back `null` is not cached;
 * - invalidation by entity, type and subgraph; the endpoint refuses a wrong
 *   key (also a prefix of the right one), a missing one and another method;
 * - an entity answer with errors, or with the wrong number of entities, is
 *   not cached; an entity's `@requires` values are part of its key;
 * - Redis down from the start: answers still correct; Redis back: entries
 *   are shared again, and each change is logged once.
 */
import assert from "node:assert/strict";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { createHandler } from "../../lib/http/mod.ts";
import { createLogger } from "../../lib/log/mod.ts";
import { buildState } from "../../lib/state/mod.ts";
import { createStores } from "../../lib/store/mod.ts";
import { serveSubgraph } from "../../demo/subgraph.ts";
import { REDIS_SERVER, type RedisServer, startRedis } from "./_redis.ts";

const FED =
  `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])\n`;
const KEY = "b".repeat(40);

/** Two subgraphs: `products` (the root list) and `reviews` (Product entities). */
interface Graph {
  /** The representations `reviews` was asked for, per request. */
  readonly asked: unknown[][];
  /** Requests `products` received. */
  rootRequests: number;
  /** The `Cache-Control` both subgraphs answer with (null: none). */
  cacheControl: string | null;
  readonly sdl: string;
  /** The reviews subgraph's URL. */
  readonly reviewsUrl: string;
  close(): Promise<void>;
}

function startGraph(): Graph {
  const graph = {
    asked: [] as unknown[][],
    rootRequests: 0,
    cacheControl: "max-age=60" as string | null,
  };
  const products = serveSubgraph("products", {
    typeDefs: FED + `type Query { products(ids: [ID!]!): [Product!]! }
      type Product @key(fields: "id") { id: ID! }`,
    resolvers: {
      Query: { products: (_: unknown, { ids }: { ids: string[] }) => ids.map((id) => ({ id })) },
    },
  }, {
    onRequest: () => void graph.rootRequests++,
    cacheControl: () => graph.cacheControl,
  });
  const reviews = serveSubgraph("reviews", {
    typeDefs: FED + `type Product @key(fields: "id") { id: ID! stars: Int viewer: String }`,
    resolvers: {
      Product: {
        // Product 9 does not exist here: its entity is null. Product 7's stars are an error.
        __resolveReference: (p: { id: string }) => p.id === "9" ? null : p,
        stars: (p: { id: string }) => {
          if (p.id === "7") throw new Error("no stars for 7");
          return Number(p.id) * 10;
        },
        viewer: (_: unknown, __: unknown, ctx: { headers: Headers }) => ctx.headers.get("x-user"),
      },
    },
  }, {
    onRequest: (body) =>
      graph.asked.push(
        ((body.variables ?? {}) as { representations?: unknown[] }).representations ?? [],
      ),
    cacheControl: () => graph.cacheControl,
  });
  const composed = composeSupergraph([
    { name: "products", url: products.url, sdl: products.sdl },
    { name: "reviews", url: reviews.url, sdl: reviews.sdl },
  ]);
  assert.ok(composed.ok);
  return Object.assign(graph, {
    sdl: composed.supergraphSdl,
    reviewsUrl: reviews.url,
    async close() {
      await Promise.all([products.close(), reviews.close()]);
    },
  });
}

interface Replica {
  post(ids: string[], options?: { user?: string; fields?: string }): Promise<Response>;
  /** Any query, without variables. */
  query(text: string): Promise<Response>;
  invalidate(body: unknown, init?: { key?: string | null; method?: string }): Promise<Response>;
  close(): Promise<void>;
}

async function startReplica(
  graph: Graph,
  redis: RedisServer | null,
  lines: string[] = [],
): Promise<Replica> {
  const config = parseConfig({
    supergraph_path: "unused.graphql",
    mcp: { enabled: false },
    headers: { all: { request: [{ op: "propagate", named: "x-user" }] } },
    ...(redis === null ? {} : {
      storage_providers: {
        redis: [{ id: "shared", urls: [redis.url], command_timeout: "200ms" }],
      },
    }),
    entity_cache: {
      enabled: true,
      private_id: "header:x-user",
      invalidation: { enabled: true, shared_key: KEY },
      ...(redis === null ? {} : { storage: { provider_id: "shared" } }),
    },
  });
  const log = createLogger({ level: "info", write: (line) => lines.push(line) });
  const stores = createStores(config, { log });
  const state = await buildState({
    config,
    log,
    supergraphSdl: graph.sdl,
    operationFiles: [],
    traceKeyPem: null,
    stores,
  });
  const handle = createHandler(() => state);
  return {
    post: (ids, options = {}) =>
      handle(
        new Request("http://router/graphql", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(options.user === undefined ? {} : { "x-user": options.user }),
          },
          body: JSON.stringify({
            query: `query($ids: [ID!]!) { products(ids: $ids) { id ${
              options.fields ?? "stars"
            } } }`,
            variables: { ids },
          }),
        }),
      ),
    query: (text) =>
      handle(
        new Request("http://router/graphql", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ query: text }),
        }),
      ),
    invalidate: (body, init = {}) =>
      handle(
        new Request("http://router/invalidation", {
          method: init.method ?? "POST",
          headers: init.key === null ? {} : { authorization: init.key ?? KEY },
          body: init.method === "GET" ? null : JSON.stringify(body),
        }),
      ),
    async close() {
      state.keySources.close();
      await stores.close();
    },
  };
}

/** Lets the entries written after an answer land (writes are not awaited by requests). */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 40));
}

async function data(response: Response): Promise<unknown> {
  assert.equal(response.status, 200);
  const body = await response.json();
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

/** Sends one command to Redis (RESP) and reads its whole reply (small replies). */
async function redisCommand(port: number, ...args: string[]): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const encoder = new TextEncoder();
    await conn.write(
      encoder.encode(
        `*${args.length}\r\n${
          args.map((a) => `$${encoder.encode(a).length}\r\n${a}\r\n`).join("")
        }`,
      ),
    );
    const buffer = new Uint8Array(1 << 16);
    const n = await conn.read(buffer);
    return new TextDecoder().decode(buffer.subarray(0, n ?? 0));
  } finally {
    conn.close();
  }
}

/** The keys Redis holds (`KEYS *`: a test's small keyspace). */
async function redisKeys(port: number): Promise<string[]> {
  const reply = await redisCommand(port, "KEYS", "*");
  return reply.split("\r\n").filter((_line, i, all) => i > 0 && all[i - 1]!.startsWith("$"));
}

/** The two replicas of a backend: on Redis, two routers sharing it; in memory, one router twice. */
async function withReplicas(
  backend: "memory" | "redis",
  fn: (
    graph: Graph,
    a: Replica,
    b: Replica,
    redis: RedisServer | null,
  ) => Promise<void>,
): Promise<void> {
  const redis = backend === "redis" ? await startRedis() : null;
  const graph = startGraph();
  const a = await startReplica(graph, redis);
  const b = redis === null ? a : await startReplica(graph, redis);
  try {
    if (redis !== null) await connected(a, b);
    await fn(graph, a, b, redis);
  } finally {
    await a.close();
    if (b !== a) await b.close();
    await graph.close();
    await redis?.stop();
  }
}

/** Waits until the replicas' invalidation answers 202 (their Redis client connected). */
async function connected(...replicas: Replica[]): Promise<void> {
  for (const replica of replicas) {
    for (let i = 0;; i++) {
      const response = await replica.invalidate([{ kind: "subgraph", subgraph: "none" }]);
      await response.body?.cancel();
      if (response.status === 202) break;
      assert.ok(i < 100, "the replica did not connect to Redis");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

for (const backend of ["memory", "redis"] as const) {
  const ignore = backend === "redis" && REDIS_SERVER === null;

  Deno.test({
    name:
      `entity cache (${backend}): a private entity is served again to its identity on either replica, never to another`,
    ignore,
    fn: () =>
      withReplicas(backend, async (graph, a, b, redis) => {
        graph.cacheControl = "private, max-age=60";
        const fields = "viewer stars";
        // No identity: a private answer is not stored at all (nobody could be served it).
        await data(await a.post(["1"], { fields }));
        await settle();
        if (redis !== null) assert.deepEqual(await redisKeys(redis.port), []);
        graph.asked.length = 0;
        graph.rootRequests = 0;
        const ann = { products: [{ id: "1", viewer: "ann", stars: 10 }] };
        const bob = { products: [{ id: "1", viewer: "bob", stars: 10 }] };
        const first = await a.post(["1"], { user: "ann", fields });
        assert.equal(first.headers.get("cache-control"), "max-age=60, private");
        assert.deepEqual(await data(first), ann);
        await settle();
        graph.asked.length = 0;
        graph.rootRequests = 0;
        assert.deepEqual(await data(await b.post(["1"], { user: "ann", fields })), ann);
        assert.equal(graph.rootRequests + graph.asked.length, 0, "ann's entries served to ann");
        assert.deepEqual(await data(await b.post(["1"], { user: "bob", fields })), bob);
        assert.equal(graph.rootRequests, 1, "bob's root fetch went to the subgraph");
        assert.equal(graph.asked.length, 1, "bob's entity fetch went to the subgraph");
        await settle();
        // Each identity keeps its own entries.
        assert.deepEqual(await data(await a.post(["1"], { user: "bob", fields })), bob);
        assert.deepEqual(await data(await a.post(["1"], { user: "ann", fields })), ann);
        assert.equal(graph.asked.length, 1);
        // No identity: nothing private is served (or stored).
        const anonymous = await data(await b.post(["1"], { fields }));
        assert.deepEqual(anonymous, { products: [{ id: "1", viewer: null, stars: 10 }] });
        assert.equal(graph.asked.length, 2);
      }),
  });

  Deno.test({
    name: `entity cache (${backend}): entries expire after their TTL; on Redis each has its PX`,
    ignore,
    fn: () =>
      withReplicas(backend, async (graph, a, b, redis) => {
        graph.cacheControl = "max-age=5";
        const realNow = Date.now;
        let offset = 0;
        Date.now = () => realNow() + offset;
        try {
          await data(await a.post(["1", "2"]));
          await settle();
          if (redis !== null) {
            const keys = await redisKeys(redis.port);
            assert.equal(keys.length, 3, "one root entry, two entities");
            for (const key of keys) {
              const ttl = Number(
                /^:(-?\d+)/.exec(await redisCommand(redis.port, "PTTL", key))?.[1],
              );
              assert.ok(ttl > 0 && ttl <= 5_000, `${key}: PTTL ${ttl}`);
            }
          }
          offset = 4_000;
          await data(await b.post(["1", "2"]));
          assert.equal(graph.asked.length, 1, "still fresh at 4 s");
          offset = 5_001;
          await data(await b.post(["1", "2"]));
          assert.equal(graph.asked.length, 2, "expired at 5 s");
          assert.equal(graph.rootRequests, 2);
        } finally {
          Date.now = realNow;
        }
      }),
  });

  Deno.test({
    name:
      `entity cache (${backend}): no-store, no-cache, max-age=0 and an unreadable age store nothing`,
    ignore,
    fn: () =>
      withReplicas(backend, async (graph, a, b, redis) => {
        for (const cacheControl of ["no-store", "no-cache", "max-age=0", "max-age=soon"]) {
          graph.cacheControl = cacheControl;
          graph.asked.length = 0;
          const first = await a.post(["1"]);
          assert.equal(first.headers.get("cache-control"), "no-store", cacheControl);
          await data(first);
          await settle();
          await data(await b.post(["1"]));
          assert.equal(graph.asked.length, 2, `${cacheControl}: asked again`);
          if (redis !== null) assert.deepEqual(await redisKeys(redis.port), [], cacheControl);
        }
      }),
  });

  Deno.test({
    name:
      `entity cache (${backend}): a partial hit asks only for the missing representations; a null entity is not cached`,
    ignore,
    fn: () =>
      withReplicas(backend, async (graph, a, b) => {
        const stars = (ids: string[]) => ({
          products: ids.map((id) => ({ id, stars: id === "9" ? null : Number(id) * 10 })),
        });
        assert.deepEqual(await data(await a.post(["1", "9", "3"])), stars(["1", "9", "3"]));
        await settle();
        graph.asked.length = 0;
        const ids = ["4", "3", "9", "1", "2"];
        assert.deepEqual(await data(await b.post(ids)), stars(ids));
        assert.deepEqual(graph.asked, [[
          { __typename: "Product", id: "4" },
          { __typename: "Product", id: "9" },
          { __typename: "Product", id: "2" },
        ]]);
      }),
  });

  Deno.test({
    name:
      `entity cache (${backend}): an entity answer with errors is not cached; the client answer says no-store`,
    ignore,
    fn: () =>
      withReplicas(backend, async (graph, a, b) => {
        for (const replica of [a, b]) {
          const response = await replica.post(["7", "1"]);
          assert.equal(response.headers.get("cache-control"), "no-store");
          const body = await response.json();
          assert.deepEqual(body.data, {
            products: [{ id: "7", stars: null }, { id: "1", stars: 10 }],
          });
          assert.match(JSON.stringify(body.errors), /no stars for 7/);
          await settle();
        }
        assert.deepEqual(
          graph.asked,
          [0, 1].map(() => [
            { __typename: "Product", id: "7" },
            { __typename: "Product", id: "1" },
          ]),
        );
        assert.equal(graph.rootRequests, 1, "the root answer (no errors) was cached");
      }),
  });

  Deno.test({
    name:
      `entity cache (${backend}): invalidation by entity, type and subgraph on one replica clears both; a wrong key is refused`,
    ignore,
    fn: () =>
      withReplicas(backend, async (graph, a, b) => {
        const warm = async () => {
          await data(await a.post(["1", "2"]));
          await settle();
          graph.asked.length = 0;
          graph.rootRequests = 0;
        };
        const count = async (response: Response) => {
          assert.equal(response.status, 202);
          return (await response.json()).count;
        };
        await warm();
        const refused = [
          await b.invalidate([{ kind: "subgraph", subgraph: "reviews" }], { key: "nope" }),
          await b.invalidate([{ kind: "subgraph", subgraph: "reviews" }], {
            key: KEY.slice(0, -1),
          }),
          await b.invalidate([{ kind: "subgraph", subgraph: "reviews" }], { key: `${KEY}b` }),
          await b.invalidate([{ kind: "subgraph", subgraph: "reviews" }], { key: null }),
        ];
        for (const response of refused) {
          assert.equal(response.status, 401);
          assert.equal((await response.json()).errors[0].extensions.code, "UNAUTHENTICATED");
        }
        const get = await b.invalidate(null, { method: "GET" });
        assert.equal(get.status, 405);
        await get.body?.cancel();
        // Nothing went.
        await data(await b.post(["1", "2"]));
        assert.equal(graph.asked.length + graph.rootRequests, 0);

        const entity = { kind: "entity", subgraph: "reviews", type: "Product", key: { id: "2" } };
        assert.equal(await count(await b.invalidate([entity])), 1);
        await data(await a.post(["1", "2"]));
        assert.deepEqual(graph.asked, [[{ __typename: "Product", id: "2" }]]);
        await settle();

        assert.equal(
          await count(await b.invalidate([{ kind: "type", subgraph: "reviews", type: "Product" }])),
          2,
        );
        await data(await a.post(["1", "2"]));
        assert.equal(graph.asked.length, 2, "the type's entries went");
        assert.equal(graph.rootRequests, 0, "another subgraph's stayed");
        await settle();

        assert.equal(
          await count(await b.invalidate([{ kind: "subgraph", subgraph: "products" }])),
          1,
        );
        await data(await a.post(["1", "2"]));
        assert.equal(graph.rootRequests, 1, "the subgraph's root entry went");
        assert.equal(graph.asked.length, 2, "another subgraph's stayed");
      }),
  });
}

Deno.test({
  name:
    "entity cache on Redis: down from the start, answers are still correct; back, entries are shared again; each change logged once",
  ignore: REDIS_SERVER === null,
  async fn() {
    const redis = await startRedis({ stopped: true });
    const graph = startGraph();
    const lines: string[] = [];
    const a = await startReplica(graph, redis, lines);
    const b = await startReplica(graph, redis);
    const want = { products: [{ id: "1", stars: 10 }, { id: "2", stars: 20 }] };
    try {
      assert.deepEqual(await data(await a.post(["1", "2"])), want);
      await settle();
      assert.deepEqual(await data(await b.post(["1", "2"])), want);
      assert.equal(graph.asked.length, 2, "nothing was kept without Redis");
      const down = await a.invalidate([{ kind: "subgraph", subgraph: "reviews" }]);
      assert.equal(down.status, 503);
      assert.equal((await down.json()).errors[0].extensions.code, "STORE_UNAVAILABLE");

      await redis.start();
      await connected(a, b);
      graph.asked.length = 0;
      assert.deepEqual(await data(await a.post(["1", "2"])), want);
      await settle();
      assert.deepEqual(await data(await b.post(["1", "2"])), want);
      assert.equal(graph.asked.length, 1, "replica b served what replica a stored");
      const logged = (text: string) => lines.filter((l) => l.includes(text)).length;
      assert.equal(logged("Redis unavailable"), 1);
      assert.equal(logged("Redis connected"), 1);
    } finally {
      await a.close();
      await b.close();
      await graph.close();
      await redis.stop();
    }
  },
});

Deno.test("entity cache: an entity's @requires values are part of its key (a changed input is asked again)", async () => {
  let weight = 2;
  const estimated: unknown[][] = [];
  const link =
    `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@external", "@requires"])\n`;
  const products = serveSubgraph("products", {
    typeDefs: link + `type Query { product: Product! }
      type Product @key(fields: "id") { id: ID! weight: Int! }`,
    resolvers: { Query: { product: () => ({ id: "1", weight }) } },
  }, { cacheControl: () => "no-store" });
  const shipping = serveSubgraph("shipping", {
    typeDefs: link + `type Product @key(fields: "id") {
        id: ID! weight: Int! @external estimate: Int! @requires(fields: "weight") }`,
    resolvers: {
      Product: { estimate: (p: { weight: number }) => p.weight * 100 },
    },
  }, {
    cacheControl: () => "max-age=60",
    onRequest: (body) =>
      estimated.push(
        ((body.variables ?? {}) as { representations?: unknown[] }).representations ?? [],
      ),
  });
  const composed = composeSupergraph([
    { name: "products", url: products.url, sdl: products.sdl },
    { name: "shipping", url: shipping.url, sdl: shipping.sdl },
  ]);
  assert.ok(composed.ok);
  const graph = { sdl: composed.supergraphSdl } as Graph;
  const router = await startReplica(graph, null);
  const ask = async () => {
    const answer = await data(await router.query("{ product { id estimate } }"));
    await settle();
    return answer;
  };
  try {
    assert.deepEqual(await ask(), { product: { id: "1", estimate: 200 } });
    assert.deepEqual(await ask(), { product: { id: "1", estimate: 200 } });
    assert.equal(estimated.length, 1, "the same weight: served from the cache");
    weight = 3;
    assert.deepEqual(await ask(), { product: { id: "1", estimate: 300 } });
    assert.equal(estimated.length, 2, "another weight: asked again");
    assert.deepEqual(estimated[1], [{ __typename: "Product", id: "1", weight: 3 }]);
  } finally {
    await router.close();
    await Promise.all([products.close(), shipping.close()]);
  }
});

Deno.test("entity cache: an _entities answer of the wrong length stores nothing (no entity is kept under another's key)", async () => {
  const graph = startGraph();
  // Between the router and the reviews subgraph: drops the first entity of the next answer.
  let truncate = true;
  const upstream = graph.reviewsUrl;
  const proxy = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (r) => {
    const answer = await fetch(upstream, {
      method: "POST",
      headers: r.headers,
      body: await r.text(),
    });
    const body = await answer.json();
    if (truncate && Array.isArray(body.data?._entities)) {
      truncate = false;
      body.data._entities.shift();
    }
    return Response.json(body, { headers: { "cache-control": "max-age=60" } });
  });
  const router = await startReplica(
    { ...graph, sdl: graph.sdl.replace(upstream, `http://127.0.0.1:${proxy.addr.port}/graphql`) },
    null,
  );
  try {
    const malformed = await router.post(["1", "2"]);
    assert.equal(malformed.headers.get("cache-control"), "no-store");
    await malformed.body?.cancel();
    await settle();
    graph.asked.length = 0;
    assert.deepEqual(await data(await router.post(["1", "2"])), {
      products: [{ id: "1", stars: 10 }, { id: "2", stars: 20 }],
    });
    assert.equal(graph.asked.length, 1, "both asked again: nothing was stored");
    assert.equal(graph.asked[0]!.length, 2);
  } finally {
    await router.close();
    await proxy.shutdown();
    await graph.close();
  }
});
