/**
 * Issue 42, `@cacheTag(format:)` and invalidation by tag, through the router's
 * HTTP handler over real subgraphs (in-process, on loopback) that declare the
 * directive under `@composeDirective`: in memory and on a real redis-server
 * shared by two replicas. A tag invalidation removes only the entries of the
 * subgraphs it names (a tag index never reaches another subgraph's entries);
 * `max_keys_per_tag` and `max_entry_bytes` keep entries out, counted by reason.
 * On a real 3-master Redis Cluster: entries over several slots, invalidation
 * reaching every master. The endpoint's refusals are the router's errors.
 */
import assert from "node:assert/strict";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { createHandler } from "../../lib/http/mod.ts";
import { createLogger } from "../../lib/log/mod.ts";
import { buildState } from "../../lib/state/mod.ts";
import { createStores } from "../../lib/store/mod.ts";
import { serveSubgraph } from "../../demo/subgraph.ts";
import { REDIS_SERVER, type RedisServer, startRedis, startRedisCluster } from "./_redis.ts";

const KEY = "t".repeat(32);
/** The directive as a subgraph declares it for the composition to keep it. */
const TAGGED = `extend schema
  @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@composeDirective"])
  @link(url: "https://gw-router.dev/cache/v0.1", import: ["@cacheTag"])
  @composeDirective(name: "@cacheTag")
directive @cacheTag(format: String!) repeatable on FIELD_DEFINITION | OBJECT
`;
const FED =
  `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])\n`;

interface Graph {
  /** Subgraph requests: the subgraph and the representations (entity fetches). */
  readonly seen: { subgraph: string; representations: unknown[] | null }[];
  readonly sdl: string;
  close(): Promise<void>;
}

function startGraph(): Graph {
  const seen: Graph["seen"] = [];
  const options = (subgraph: string) => ({
    onRequest: (body: { variables?: unknown }) =>
      seen.push({
        subgraph,
        representations:
          ((body.variables ?? {}) as { representations?: unknown[] }).representations ?? null,
      }),
    cacheControl: () => "max-age=60",
  });
  const products = serveSubgraph("products", {
    typeDefs: TAGGED + `type Query {
        product(id: ID!): Product @cacheTag(format: "product-{$args.id}")
        products(ids: [ID!]!): [Product!]! @cacheTag(format: "products")
      }
      type Product @key(fields: "id") @cacheTag(format: "product-{$key.id}")
        @cacheTag(format: "catalog") { id: ID! name: String! }`,
    resolvers: {
      Query: {
        product: (_: unknown, { id }: { id: string }) => ({ id, name: `p${id}` }),
        products: (_: unknown, { ids }: { ids: string[] }) =>
          ids.map((id) => ({ id, name: `p${id}` })),
      },
    },
  }, options("products"));
  const reviews = serveSubgraph("reviews", {
    typeDefs: FED + `type Product @key(fields: "id") { id: ID! stars: Int! }`,
    resolvers: {
      Product: { __resolveReference: (p: { id: string }) => ({ ...p, stars: Number(p.id) }) },
    },
  }, options("reviews"));
  const composed = composeSupergraph([
    { name: "products", url: products.url, sdl: products.sdl },
    { name: "reviews", url: reviews.url, sdl: reviews.sdl },
  ]);
  assert.ok(composed.ok, JSON.stringify(!composed.ok && composed.errors));
  return {
    seen,
    sdl: composed.supergraphSdl,
    async close() {
      await Promise.all([products.close(), reviews.close()]);
    },
  };
}

interface Router {
  handle(request: Request): Promise<Response>;
  post(query: string, variables?: unknown): Promise<unknown>;
  invalidate(body: unknown): Promise<Response>;
  close(): Promise<void>;
}

async function startRouter(
  graph: Graph,
  entityCache: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Promise<Router> {
  const config = parseConfig({
    supergraph_path: "unused.graphql",
    mcp: { enabled: false },
    entity_cache: {
      enabled: true,
      invalidation: { enabled: true, shared_key: KEY },
      ...entityCache,
    },
    ...extra,
  });
  const log = createLogger({ level: "error", write: () => {} });
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
    handle: (request) => handle(request),
    async post(query, variables = {}) {
      const response = await handle(
        new Request("http://router/graphql", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ query, variables }),
        }),
      );
      assert.equal(response.status, 200);
      const body = await response.json();
      // Entries are written after the answer: let them land.
      await new Promise((resolve) => setTimeout(resolve, 30));
      return body;
    },
    invalidate: (body) =>
      handle(
        new Request("http://router/invalidation", {
          method: "POST",
          headers: { authorization: KEY, "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
      ),
    async close() {
      state.keySources.close();
      await stores.close();
    },
  };
}

const ONE = "query($id: ID!) { product(id: $id) { id name stars } }";
const MANY = "query($ids: [ID!]!) { products(ids: $ids) { id name stars } }";

async function count(response: Response): Promise<number> {
  assert.equal(response.status, 202);
  return (await response.json()).count;
}

function asked(graph: Graph): string[] {
  return graph.seen.map((r) =>
    r.representations === null
      ? r.subgraph
      : `${r.subgraph}:${r.representations.map((p) => (p as { id: string }).id).join(",")}`
  );
}

/** The invalidation-by-tag scenario, the same in memory and on Redis. */
async function tagScenario(graph: Graph, a: Router, b: Router): Promise<void> {
  const cold = await a.post(ONE, { id: "1" });
  assert.deepEqual(cold, { data: { product: { id: "1", name: "p1", stars: 1 } } });
  assert.deepEqual(asked(graph), ["products", "reviews:1"]);
  graph.seen.length = 0;
  assert.deepEqual(await b.post(ONE, { id: "1" }), cold);
  assert.deepEqual(asked(graph), [], "warm (on the other replica too, when shared)");
  // The root entry of products carries product-1 ({$args.id}); the reviews entity
  // product-1 too ({$key.id}, the type's tag): each in its own subgraph's index.
  assert.equal(
    await count(
      await b.invalidate([
        { kind: "cache_tag", subgraphs: ["products"], cache_tag: "product-1" },
      ]),
    ),
    1,
  );
  assert.deepEqual(await a.post(ONE, { id: "1" }), cold);
  assert.deepEqual(asked(graph), ["products"], "the reviews entry stays: another subgraph's");
  graph.seen.length = 0;
  assert.equal(
    await count(
      await a.invalidate([
        { kind: "cache_tag", subgraphs: ["reviews", "products"], cache_tag: "product-1" },
      ]),
    ),
    2,
  );
  assert.deepEqual(await b.post(ONE, { id: "1" }), cold);
  assert.deepEqual(asked(graph), ["products", "reviews:1"]);
  graph.seen.length = 0;
  // A list of products: the root entry carries "products"; each entity its own tag and "catalog".
  await a.post(MANY, { ids: ["1", "2", "3"] });
  assert.deepEqual(asked(graph), ["products", "reviews:2,3"]);
  graph.seen.length = 0;
  assert.equal(
    await count(
      await b.invalidate([
        { kind: "cache_tag", subgraphs: ["reviews"], cache_tag: "product-2" },
      ]),
    ),
    1,
  );
  await b.post(MANY, { ids: ["1", "2", "3"] });
  assert.deepEqual(asked(graph), ["reviews:2"], "only the entity tagged product-2 went");
  graph.seen.length = 0;
  assert.equal(
    await count(
      await a.invalidate([
        { kind: "cache_tag", subgraphs: ["reviews"], cache_tag: "catalog" },
        { kind: "cache_tag", subgraphs: ["products"], cache_tag: "products" },
      ]),
    ),
    4,
  );
  await a.post(MANY, { ids: ["1", "2", "3"] });
  assert.deepEqual(asked(graph), ["products", "reviews:1,2,3"]);
  graph.seen.length = 0;
  assert.equal(
    await count(
      await a.invalidate([
        { kind: "cache_tag", subgraphs: ["reviews"], cache_tag: "no-such-tag" },
      ]),
    ),
    0,
  );
}

Deno.test("entity cache tags in memory: invalidation by tag removes the tagged entries of the subgraphs named, and only those", async () => {
  const graph = startGraph();
  const router = await startRouter(graph);
  try {
    await tagScenario(graph, router, router);
    // An argument written in the operation (no variable) is read as well.
    await router.post('{ product(id: "7") { id name } }');
    assert.equal(
      await count(
        await router.invalidate([
          { kind: "cache_tag", subgraphs: ["products"], cache_tag: "product-7" },
        ]),
      ),
      1,
    );
  } finally {
    await router.close();
    await graph.close();
  }
});

Deno.test({
  name:
    "entity cache tags on Redis: one tag invalidation clears both replicas; tag indexes live as long as their entries",
  ignore: REDIS_SERVER === null,
  async fn() {
    const redis = await startRedis();
    const graph = startGraph();
    const storage = {
      storage_providers: { redis: [{ id: "shared", urls: [redis.url], command_timeout: "1s" }] },
    };
    const cache = { storage: { provider_id: "shared", key_prefix: "gwt" } };
    const [a, b] = await Promise.all([
      startRouter(graph, cache, storage),
      startRouter(graph, cache, storage),
    ]);
    try {
      await connected(a, b);
      await tagScenario(graph, a, b);
      // Each index is a sorted set of keys, kept as long as its longest-lived key (60 s).
      const ttl = Number(await redisCli(redis, "PTTL", "gwt:#tag:reviews:catalog"));
      assert.ok(ttl > 50_000 && ttl <= 60_000, `PTTL ${ttl}`);
      assert.equal(await redisCli(redis, "ZCARD", "gwt:#tag:reviews:catalog"), "3");
      assert.equal(await redisCli(redis, "TYPE", "gwt:#tag:products:products"), "zset");
    } finally {
      await a.close();
      await b.close();
      await graph.close();
      await redis.stop();
    }
  },
});

/** With `max_keys_per_tag: 2`, the third entity tagged "catalog" is not kept. */
async function fullIndexScenario(graph: Graph, router: Router): Promise<void> {
  await router.post(MANY, { ids: ["1", "2", "3"] });
  graph.seen.length = 0;
  // "catalog" held products 1 and 2 of reviews; 3 could not be indexed, so it was not kept.
  await router.post(MANY, { ids: ["1", "2", "3"] });
  assert.deepEqual(asked(graph), ["reviews:3"]);
  graph.seen.length = 0;
  assert.equal(
    await count(
      await router.invalidate([
        { kind: "cache_tag", subgraphs: ["reviews"], cache_tag: "catalog" },
      ]),
    ),
    2,
  );
}

Deno.test("entity cache tags in memory: an entry a full tag index cannot take is not stored (max_keys_per_tag)", async () => {
  const graph = startGraph();
  const router = await startRouter(graph, { max_keys_per_tag: 2 });
  try {
    await fullIndexScenario(graph, router);
  } finally {
    await router.close();
    await graph.close();
  }
});

Deno.test({
  name:
    "entity cache tags on Redis: an entry a full tag index cannot take is not stored (max_keys_per_tag)",
  ignore: REDIS_SERVER === null,
  async fn() {
    const redis = await startRedis();
    const graph = startGraph();
    const storage = {
      storage_providers: { redis: [{ id: "shared", urls: [redis.url], command_timeout: "1s" }] },
    };
    const router = await startRouter(graph, {
      storage: { provider_id: "shared", key_prefix: "gwf" },
      max_keys_per_tag: 2,
    }, storage);
    try {
      await connected(router);
      await fullIndexScenario(graph, router);
    } finally {
      await router.close();
      await graph.close();
      await redis.stop();
    }
  },
});

Deno.test({
  name: "entity cache on Redis: an entry over max_entry_bytes is not stored",
  ignore: REDIS_SERVER === null,
  async fn() {
    const redis = await startRedis();
    const graph = startGraph();
    const storage = {
      storage_providers: { redis: [{ id: "shared", urls: [redis.url], command_timeout: "1s" }] },
    };
    // An entity entry is `<expires>:0:{"stars":N}` (~28 bytes); the root one is longer.
    const router = await startRouter(graph, {
      storage: { provider_id: "shared", key_prefix: "gwb" },
      max_entry_bytes: 40,
    }, storage);
    try {
      await connected(router);
      await router.post(ONE, { id: "1" });
      graph.seen.length = 0;
      await router.post(ONE, { id: "1" });
      assert.deepEqual(asked(graph), ["products"], "the root entry was too large to keep");
      assert.equal(await redisCli(redis, "EXISTS", "gwb:#tag:products:product-1"), "0");
    } finally {
      await router.close();
      await graph.close();
      await redis.stop();
    }
  },
});

Deno.test({
  name:
    "entity cache on a Redis Cluster: entries in several slots, shared by two replicas; invalidation by entity, type, subgraph and tag reaches every master",
  ignore: REDIS_SERVER === null,
  async fn() {
    const cluster = await startRedisCluster();
    const graph = startGraph();
    const storage = {
      storage_providers: {
        redis: [{ id: "c", urls: cluster.urls, cluster_enabled: true, command_timeout: "2s" }],
      },
    };
    const cache = { storage: { provider_id: "c", key_prefix: "gwc" } };
    const [a, b] = await Promise.all([
      startRouter(graph, cache, storage),
      startRouter(graph, cache, storage),
    ]);
    try {
      await connected(a, b);
      await tagScenario(graph, a, b);
      const ids = Array.from({ length: 12 }, (_, i) => String(i + 10));
      const cold = await a.post(MANY, { ids });
      graph.seen.length = 0;
      assert.deepEqual(await b.post(MANY, { ids }), cold);
      assert.deepEqual(asked(graph), [], "replica b served what replica a stored");
      // Keys are not hash-tagged: they spread over the masters' slots.
      const sizes = await Promise.all(
        cluster.ports.map(async (port) => Number(await cli(port, "DBSIZE"))),
      );
      assert.ok(sizes.filter((size) => size > 0).length >= 2, `keys per master: ${sizes}`);
      assert.equal(
        await count(
          await b.invalidate([
            { kind: "entity", subgraph: "reviews", type: "Product", key: { id: "10" } },
          ]),
        ),
        1,
      );
      await a.post(MANY, { ids });
      assert.deepEqual(asked(graph), ["reviews:10"]);
      graph.seen.length = 0;
      assert.equal(
        await count(await a.invalidate([{ kind: "type", subgraph: "reviews", type: "Product" }])),
        12 + 3, // these and products 1, 2, 3 of the tag scenario
      );
      assert.equal(
        await count(await b.invalidate([{ kind: "subgraph", subgraph: "products" }])),
        3, // the root entries of product(id: 1), products([1, 2, 3]) and products(ids)
      );
      await b.post(MANY, { ids });
      assert.deepEqual(asked(graph), ["products", `reviews:${ids.join(",")}`]);
      graph.seen.length = 0;
      assert.equal(
        await count(
          await b.invalidate([
            { kind: "cache_tag", subgraphs: ["reviews"], cache_tag: "catalog" },
          ]),
        ),
        12,
      );
    } finally {
      await a.close();
      await b.close();
      await graph.close();
      await cluster.stop();
    }
  },
});

Deno.test("invalidation endpoint: its refusals are the router's errors (codes, statuses, body, request id)", async () => {
  const graph = startGraph();
  const router = await startRouter(graph);
  const refused = async (response: Response, status: number, code: string) => {
    assert.equal(response.status, status);
    assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
    const body = await response.json();
    assert.equal(body.errors.length, 1);
    assert.equal(body.errors[0].extensions.code, code);
    assert.equal(typeof body.errors[0].extensions.request_id, "string");
    return { headers: response.headers, message: body.errors[0].message as string };
  };
  const post = (body: string, authorization = KEY) =>
    router.handle(
      new Request("http://router/invalidation", {
        method: "POST",
        headers: { authorization, "content-type": "application/json" },
        body,
      }),
    );
  try {
    const wrong = await refused(
      await post('[{"kind":"subgraph","subgraph":"reviews"}]', "nope"),
      401,
      "UNAUTHENTICATED",
    );
    assert.match(wrong.headers.get("www-authenticate") ?? "", /^Bearer/);
    const missing = await refused(
      await router.handle(new Request("http://router/invalidation", { method: "POST" })),
      401,
      "UNAUTHENTICATED",
    );
    assert.match(missing.message, /Authorization/);
    const bad = await refused(
      await router.invalidate([{ kind: "cache_tag", subgraphs: "reviews", cache_tag: "t" }]),
      400,
      "BAD_REQUEST",
    );
    assert.match(bad.message, /"subgraphs"/);
    assert.match((await refused(await post("{"), 400, "BAD_REQUEST")).message, /not JSON/);
    const get = await refused(
      await router.handle(new Request("http://router/invalidation", { method: "GET" })),
      405,
      "METHOD_NOT_ALLOWED",
    );
    assert.equal(get.headers.get("allow"), "POST");
    const large = await refused(
      await post(
        JSON.stringify([{ kind: "cache_tag", subgraphs: ["a"], cache_tag: "x" }]).padEnd(70_000),
      ),
      413,
      "PAYLOAD_TOO_LARGE",
    );
    assert.match(large.message, /65536 bytes/);
    // Success keeps Apollo Router's shape.
    const ok = await post('[{"kind":"cache_tag","subgraphs":["reviews"],"cache_tag":"x"}]');
    assert.equal(ok.status, 202);
    assert.deepEqual(await ok.json(), { count: 0 });
  } finally {
    await router.close();
    await graph.close();
  }
});

/** Waits until the routers' Redis answers (the client connects in the background). */
async function connected(...routers: Router[]): Promise<void> {
  for (let i = 0; i < 200; i++) {
    let all = true;
    for (const router of routers) {
      const response = await router.invalidate([{ kind: "subgraph", subgraph: "none" }]);
      await response.body?.cancel();
      all &&= response.status === 202;
    }
    if (all) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("Redis did not connect");
}

function redisCli(redis: RedisServer, ...args: string[]): Promise<string> {
  return cli(redis.port, ...args);
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("redis-cli", {
    args: ["-p", String(port), ...args],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout).trim();
}
