/**
 * Issue 42, the entity cache through the router's HTTP handler over real
 * subgraphs (in-process, on loopback), in memory and on a real redis-server:
 * warm answers equal cold ones and ask nothing; partial hits ask only for the
 * missing representations; private answers are served only to their identity;
 * TTL expiry (a controlled clock); no-store; the client's Cache-Control;
 * invalidation by subgraph, type and entity over the endpoint (a wrong key
 * refused); two replicas share entries and one invalidation clears both;
 * Redis down → answers still correct.
 */
import assert from "node:assert/strict";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { createHandler } from "../../lib/http/mod.ts";
import { createLogger } from "../../lib/log/mod.ts";
import { buildState, type RouterState } from "../../lib/state/mod.ts";
import { createStores } from "../../lib/store/mod.ts";
import { serveSubgraph } from "../../demo/subgraph.ts";
import { REDIS_SERVER, startRedis } from "./_redis.ts";

const FED =
  `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])\n`;
const KEY = "k".repeat(32);

interface Graph {
  /** Requests each subgraph received (body variables). */
  readonly seen: { subgraph: string; query: string; variables: Record<string, unknown> }[];
  /** Cache-Control each subgraph answers with. */
  readonly cacheControl: Map<string, string | null>;
  readonly sdl: string;
  close(): Promise<void>;
}

function startGraph(): Graph {
  const seen: Graph["seen"] = [];
  const cacheControl = new Map<string, string | null>([["products", null], ["reviews", null]]);
  const names = ["one", "two", "three", "four"];
  const options = (subgraph: string) => ({
    onRequest: (body: { query: string; variables?: unknown }) =>
      seen.push({
        subgraph,
        query: body.query,
        variables: (body.variables ?? {}) as Record<string, unknown>,
      }),
    cacheControl: () => cacheControl.get(subgraph) ?? null,
  });
  const products = serveSubgraph("products", {
    typeDefs: FED + `type Query { products(ids: [ID!]!): [Product!]! }
      type Mutation { touch(id: ID!): Product! }
      type Product @key(fields: "id") { id: ID! name: String! }`,
    resolvers: {
      Mutation: {
        touch: (_: unknown, { id }: { id: string }) => ({ id, name: names[Number(id) - 1] }),
      },
      Query: {
        products: (_: unknown, { ids }: { ids: string[] }) =>
          ids.map((id) => ({ id, name: id === "0" ? null : names[Number(id) - 1] ?? "?" })),
      },
      Product: { __resolveReference: (p: { id: string }) => ({ ...p, name: names[0] }) },
    },
  }, options("products"));
  const reviews = serveSubgraph("reviews", {
    typeDefs: FED + `type Product @key(fields: "id") { id: ID! stars: Int! viewer: String }`,
    resolvers: {
      Product: {
        __resolveReference: (p: { id: string }) => p,
        stars: (p: { id: string }) => Number(p.id) + 2,
        viewer: (_: unknown, __: unknown, ctx: { headers: Headers }) => ctx.headers.get("x-user"),
      },
    },
  }, options("reviews"));
  const composed = composeSupergraph([
    { name: "products", url: products.url, sdl: products.sdl },
    { name: "reviews", url: reviews.url, sdl: reviews.sdl },
  ]);
  assert.ok(composed.ok);
  return {
    seen,
    cacheControl,
    sdl: composed.supergraphSdl,
    async close() {
      await Promise.all([products.close(), reviews.close()]);
    },
  };
}

interface Router {
  post(query: string, variables?: unknown, headers?: Record<string, string>): Promise<Response>;
  invalidate(body: unknown, key?: string): Promise<Response>;
  close(): Promise<void>;
}

async function startRouter(
  graph: Graph,
  entityCache: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  observe: { readonly lines?: string[]; readonly fallbacks?: string[] } = {},
): Promise<Router & { state: RouterState }> {
  const config = parseConfig({
    supergraph_path: "unused.graphql",
    mcp: { enabled: false },
    headers: { all: { request: [{ op: "propagate", named: "x-user" }] } },
    entity_cache: {
      enabled: true,
      private_id: "header:x-user",
      invalidation: { enabled: true, shared_key: KEY },
      ...entityCache,
    },
    ...extra,
  });
  const log = createLogger({ level: "info", write: (line) => observe.lines?.push(line) });
  const stores = createStores(config, {
    log,
    events: { fallback: (feature) => observe.fallbacks?.push(feature) },
  });
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
    state,
    post: (query, variables = {}, headers = {}) =>
      handle(
        new Request("http://router/graphql", {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify({ query, variables }),
        }),
      ),
    invalidate: (body, key = KEY) =>
      handle(
        new Request("http://router/invalidation", {
          method: "POST",
          headers: { authorization: key, "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
      ),
    async close() {
      state.keySources.close();
      await stores.close();
    },
  };
}

const QUERY = "query($ids: [ID!]!) { products(ids: $ids) { id name stars } }";

/** Waits for the entries written after an answer (writes are not awaited by requests). */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 30));
}

async function answer(response: Response): Promise<unknown> {
  assert.equal(response.status, 200);
  return await response.json();
}

function representations(graph: Graph): unknown[] {
  return graph.seen.filter((r) => r.subgraph === "reviews").flatMap((r) =>
    r.variables.representations as unknown[]
  );
}

Deno.test("entity cache: warm answers equal cold ones, ask nothing, and carry the smallest TTL", async () => {
  const graph = startGraph();
  graph.cacheControl.set("products", "max-age=120");
  graph.cacheControl.set("reviews", "max-age=30");
  const router = await startRouter(graph, {});
  try {
    const cold = await router.post(QUERY, { ids: ["1", "2"] });
    assert.equal(cold.headers.get("cache-control"), "max-age=30, public");
    const coldBody = await answer(cold);
    assert.equal(graph.seen.length, 2);
    await settle();
    const warm = await router.post(QUERY, { ids: ["1", "2"] });
    assert.deepEqual(await answer(warm), coldBody);
    assert.equal(graph.seen.length, 2, "a warm answer asks no subgraph");
    assert.match(warm.headers.get("cache-control") ?? "", /^max-age=(29|30), public$/);
  } finally {
    await router.close();
    await graph.close();
  }
});

Deno.test("entity cache: a partial hit asks only for the missing representations and keeps order and nulls", async () => {
  const graph = startGraph();
  const router = await startRouter(graph, {});
  try {
    await answer(await router.post(QUERY, { ids: ["1", "3"] }));
    await settle();
    graph.seen.length = 0;
    const body = await answer(await router.post(QUERY, { ids: ["2", "3", "1", "4"] }));
    assert.deepEqual(body, {
      data: {
        products: [
          { id: "2", name: "two", stars: 4 },
          { id: "3", name: "three", stars: 5 },
          { id: "1", name: "one", stars: 3 },
          { id: "4", name: "four", stars: 6 },
        ],
      },
    });
    assert.deepEqual(representations(graph), [
      { __typename: "Product", id: "2" },
      { __typename: "Product", id: "4" },
    ]);
  } finally {
    await router.close();
    await graph.close();
  }
});

Deno.test("entity cache: a private answer is served again to its identity, never to another", async () => {
  const graph = startGraph();
  graph.cacheControl.set("reviews", "private, max-age=60");
  const router = await startRouter(graph, {});
  const query = "query($ids: [ID!]!) { products(ids: $ids) { id viewer } }";
  try {
    const ann = await router.post(query, { ids: ["1"] }, { "x-user": "ann" });
    assert.equal(ann.headers.get("cache-control"), "max-age=60, private");
    assert.deepEqual(await answer(ann), { data: { products: [{ id: "1", viewer: "ann" }] } });
    await settle();
    graph.seen.length = 0;
    const again = await router.post(query, { ids: ["1"] }, { "x-user": "ann" });
    assert.deepEqual(await answer(again), { data: { products: [{ id: "1", viewer: "ann" }] } });
    assert.equal(representations(graph).length, 0, "served to ann from the cache");
    const bob = await router.post(query, { ids: ["1"] }, { "x-user": "bob" });
    assert.deepEqual(await answer(bob), { data: { products: [{ id: "1", viewer: "bob" }] } });
    assert.equal(representations(graph).length, 1, "bob's asked the subgraph");
    // Anonymous: nothing private is stored or served.
    await answer(await router.post(query, { ids: ["1"] }));
    await settle();
    await answer(await router.post(query, { ids: ["1"] }));
    assert.equal(representations(graph).length, 3);
  } finally {
    await router.close();
    await graph.close();
  }
});

Deno.test("entity cache: no-store is not cached; the client answer says no-store", async () => {
  const graph = startGraph();
  graph.cacheControl.set("reviews", "no-store");
  const router = await startRouter(graph, {});
  try {
    const first = await router.post(QUERY, { ids: ["1"] });
    assert.equal(first.headers.get("cache-control"), "no-store");
    await answer(first);
    await settle();
    await answer(await router.post(QUERY, { ids: ["1"] }));
    assert.equal(representations(graph).length, 2);
  } finally {
    await router.close();
    await graph.close();
  }
});

Deno.test("entity cache: entries expire after their TTL (a controlled clock)", async () => {
  const graph = startGraph();
  graph.cacheControl.set("reviews", "max-age=5");
  const router = await startRouter(graph, {});
  const realNow = Date.now;
  let offset = 0;
  Date.now = () => realNow() + offset;
  try {
    await answer(await router.post(QUERY, { ids: ["1"] }));
    await settle();
    offset = 4_000;
    await answer(await router.post(QUERY, { ids: ["1"] }));
    assert.equal(representations(graph).length, 1, "still fresh at 4 s");
    offset = 5_001;
    await answer(await router.post(QUERY, { ids: ["1"] }));
    assert.equal(representations(graph).length, 2, "expired at 5 s");
  } finally {
    Date.now = realNow;
    await router.close();
    await graph.close();
  }
});

Deno.test("entity cache: an answer with errors is not cached and the client answer says no-store", async () => {
  const graph = startGraph();
  const router = await startRouter(graph, {});
  try {
    // Product 0's name resolves to null for a non-null field: the subgraph answers an error.
    const query = "query($ids: [ID!]!) { products(ids: $ids) { id name } }";
    const first = await router.post(query, { ids: ["0"] });
    assert.equal(first.headers.get("cache-control"), "no-store");
    assert.ok(((await answer(first)) as { errors?: unknown[] }).errors?.length);
    await settle();
    await answer(await router.post(query, { ids: ["0"] }));
    assert.equal(graph.seen.filter((r) => r.subgraph === "products").length, 2);
  } finally {
    await router.close();
    await graph.close();
  }
});

Deno.test("entity cache invalidation: by entity, type and subgraph; a wrong key is refused", async () => {
  const graph = startGraph();
  const router = await startRouter(graph, {});
  const warm = async () => {
    await answer(await router.post(QUERY, { ids: ["1", "2"] }));
    await settle();
    graph.seen.length = 0;
  };
  try {
    await warm();
    // Every refusal's code, status and body: entity_cache_tags_test.ts.
    const wrong = await router.invalidate([{ kind: "subgraph", subgraph: "reviews" }], "nope");
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    const bad = await router.invalidate([{ kind: "entity", subgraph: "reviews", type: "Product" }]);
    assert.equal(bad.status, 400);
    await bad.body?.cancel();
    // A key nested past the depth limit is a 400 before its canonical JSON (recursive) is built.
    const depth = 20_000;
    const deep = await router.invalidate(
      JSON.parse(
        `[{"kind":"entity","subgraph":"reviews","type":"Product","key":{"id":${"[".repeat(depth)}${
          "]".repeat(depth)
        }}}]`,
      ),
    );
    assert.equal(deep.status, 400);
    assert.match((await deep.json()).errors[0].message, /nesting depth of the invalidation's JSON/);
    const one = await router.invalidate([
      { kind: "entity", subgraph: "reviews", type: "Product", key: { id: "2" } },
    ]);
    assert.deepEqual(await one.json(), { count: 1 });
    await answer(await router.post(QUERY, { ids: ["1", "2"] }));
    assert.deepEqual(representations(graph), [{ __typename: "Product", id: "2" }]);
    await settle();
    const type = await router.invalidate([{ kind: "type", subgraph: "reviews", type: "Product" }]);
    assert.deepEqual(await type.json(), { count: 2 });
    const root = await router.invalidate([{ kind: "subgraph", subgraph: "products" }]);
    assert.deepEqual(await root.json(), { count: 1 });
    graph.seen.length = 0;
    await answer(await router.post(QUERY, { ids: ["1", "2"] }));
    assert.deepEqual(graph.seen.map((r) => r.subgraph), ["products", "reviews"]);
  } finally {
    await router.close();
    await graph.close();
  }
});

Deno.test({
  name:
    "entity cache on Redis: two replicas share entries, one invalidation clears both, Redis down still answers",
  ignore: REDIS_SERVER === null,
  async fn() {
    const redis = await startRedis();
    const graph = startGraph();
    const storage = {
      storage_providers: {
        redis: [{ id: "shared", urls: [redis.url], command_timeout: "200ms" }],
      },
    };
    const lines: string[] = [];
    const fallbacks: string[] = [];
    const [a, b] = await Promise.all([
      startRouter(graph, { storage: { provider_id: "shared" } }, storage, { lines, fallbacks }),
      startRouter(graph, { storage: { provider_id: "shared" } }, storage),
    ]);
    try {
      // Connected (the client connects in the background).
      for (let i = 0; i < 100 && !(await redisReady(a, b)); i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      const cold = await answer(await a.post(QUERY, { ids: ["1", "2"] }));
      await settle();
      graph.seen.length = 0;
      assert.deepEqual(await answer(await b.post(QUERY, { ids: ["1", "2"] })), cold);
      assert.equal(graph.seen.length, 0, "replica b served what replica a stored");
      const one = await b.invalidate([
        { kind: "entity", subgraph: "reviews", type: "Product", key: { id: "1" } },
      ]);
      assert.deepEqual(await one.json(), { count: 1 });
      const gone = await a.invalidate([{ kind: "type", subgraph: "reviews", type: "Product" }]);
      assert.deepEqual(await gone.json(), { count: 1 });
      await answer(await b.post(QUERY, { ids: ["1", "2"] }));
      assert.equal(representations(graph).length, 2, "replica b's entries are gone too");
      await redis.stop();
      graph.seen.length = 0;
      assert.deepEqual(await answer(await a.post(QUERY, { ids: ["1", "2"] })), cold);
      assert.deepEqual(await answer(await b.post(QUERY, { ids: ["1", "2"] })), cold);
      assert.equal(graph.seen.length, 4, "with Redis down every fetch goes to the subgraphs");
      // Logged once (replica a), each lookup that could not ask Redis counted.
      const unavailable = (l: string) =>
        l.includes("Redis unavailable") && l.includes("entity cache");
      assert.equal(lines.filter(unavailable).length, 1);
      assert.ok(fallbacks.filter((f) => f === "entity_cache").length >= 2, String(fallbacks));
      const down = await a.invalidate([{ kind: "subgraph", subgraph: "reviews" }]);
      assert.equal(down.status, 503);
      const error = (await down.json()).errors[0];
      assert.equal(error.extensions.code, "STORE_UNAVAILABLE");
      assert.equal(error.extensions.count, 0);
    } finally {
      await a.close();
      await b.close();
      await graph.close();
      await redis.stop().catch(() => {});
    }
  },
});

async function redisReady(...routers: Router[]): Promise<boolean> {
  for (const router of routers) {
    const response = await router.invalidate([{ kind: "subgraph", subgraph: "none" }]);
    await response.body?.cancel();
    if (response.status !== 202) return false;
  }
  return true;
}

Deno.test("entity cache: the request trace (ART) marks fetches served from the cache", async () => {
  const graph = startGraph();
  const router = await startRouter(graph, {}, { dev_mode: true });
  try {
    await answer(await router.post(QUERY, { ids: ["1"] }));
    await settle();
    const traced = await router.post(QUERY, { ids: ["1", "2"] }, { "x-gw-trace": "true" });
    const text = JSON.stringify(await answer(traced));
    // The root fetch (other ids) was sent; product 1's stars came from the cache, 2's were asked.
    assert.match(text, /"load_skipped":true,"entity_cache":"hit"/);
    assert.match(text, /"load_skipped":false,"entity_cache":"partial"/);
  } finally {
    await router.close();
    await graph.close();
  }
});

Deno.test("entity cache: a state with entity_cache off does not use the process's store; an unknown subgraph name is warned about", async () => {
  const graph = startGraph();
  const on = parseConfig({
    supergraph_path: "unused.graphql",
    mcp: { enabled: false },
    entity_cache: { enabled: true, subgraphs: { reveiws: { enabled: false } } },
  });
  const lines: string[] = [];
  const log = createLogger({ level: "warn", write: (line) => lines.push(line) });
  const stores = createStores(on, { log });
  const inputs = { log, supergraphSdl: graph.sdl, operationFiles: [], traceKeyPem: null, stores };
  try {
    const first = await buildState({ ...inputs, config: on });
    assert.notEqual(first.engine.entityCache, null);
    first.keySources.close();
    const warned = lines.map((l) => JSON.parse(l)).find((l) =>
      /entity_cache\.subgraphs/.test(l.msg)
    );
    assert.equal(warned?.subgraph, "reveiws");
    // A reload that turns the cache off: the store is kept (a restart drops it), unused.
    const off = parseConfig({ supergraph_path: "unused.graphql", mcp: { enabled: false } });
    const reloaded = await buildState({ ...inputs, config: off });
    assert.equal(reloaded.engine.entityCache, null);
    reloaded.keySources.close();
  } finally {
    await stores.close();
    await graph.close();
  }
});

Deno.test("entity cache: a request merging in place never writes into entries other requests share", async () => {
  // products → reviews (Product.topReview, a nested object of the cached entity) → authors
  // (Review.author, merged into that nested object).
  let authorsUp = true;
  const products = serveSubgraph("products", {
    typeDefs: FED + `type Query { products(ids: [ID!]!): [Product!]! }
      type Product @key(fields: "id") { id: ID! }`,
    resolvers: {
      Query: { products: (_: unknown, { ids }: { ids: string[] }) => ids.map((id) => ({ id })) },
    },
  });
  const reviews = serveSubgraph("reviews", {
    typeDefs: FED + `type Product @key(fields: "id") { id: ID! topReview: Review! }
      type Review @key(fields: "id") { id: ID! }`,
    resolvers: { Product: { topReview: (p: { id: string }) => ({ id: `r${p.id}` }) } },
  });
  const authors = serveSubgraph("authors", {
    typeDefs: FED + `type Review @key(fields: "id") { id: ID! author: String }`,
    resolvers: {
      Review: {
        __resolveReference: (r: { id: string }) => r,
        author: (r: { id: string }) => `author of ${r.id}`,
      },
    },
  }, { cacheControl: () => "no-store" });
  const composed = composeSupergraph([products, reviews, authors].map((s) => ({
    name: s.name,
    url: s.url,
    sdl: s.sdl,
  })));
  assert.ok(composed.ok);
  const config = parseConfig({
    supergraph_path: "unused.graphql",
    mcp: { enabled: false },
    entity_cache: { enabled: true },
  });
  const inPlaceConfig = { ...config, engine: { ...config.engine, enable_single_flight: false } };
  const log = createLogger({ level: "error", write: () => {} });
  const stores = createStores(config, { log });
  const inputs = {
    log,
    supergraphSdl: composed.supergraphSdl,
    operationFiles: [],
    traceKeyPem: null,
    stores,
  };
  const shared = await buildState({ ...inputs, config });
  const inPlace = await buildState({ ...inputs, config: inPlaceConfig });
  const query = '{ products(ids: ["1"]) { id topReview { id author } } }';
  const post = async (state: RouterState) =>
    await (await createHandler(() => state)(
      new Request("http://router/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query }),
      }),
    )).json();
  try {
    await post(shared); // stores Product 1's topReview
    await settle();
    await post(shared); // parses the entry once, for shared runs
    assert.deepEqual(await post(inPlace), {
      data: { products: [{ id: "1", topReview: { id: "r1", author: "author of r1" } }] },
    });
    // Unreachable: nothing of its own is merged, so only a written-to entry could fill `author`.
    await authors.close();
    authorsUp = false;
    const after = await post(shared) as {
      data: { products: { topReview: { author: unknown } }[] };
    };
    assert.equal(
      after.data.products[0]!.topReview.author,
      null,
      "no author left by another request",
    );
  } finally {
    shared.keySources.close();
    inPlace.keySources.close();
    await stores.close();
    await Promise.all([products.close(), reviews.close(), authorsUp ? authors.close() : null]);
  }
});

Deno.test("entity cache: its Cache-Control replaces what a response header rule propagated (the rule sees no cached part)", async () => {
  const graph = startGraph();
  graph.cacheControl.set("products", "max-age=300");
  graph.cacheControl.set("reviews", "max-age=20");
  const router = await startRouter(graph, {}, {
    headers: {
      all: {
        request: [{ op: "propagate", named: "x-user" }],
        response: [{ op: "propagate", named: "cache-control" }],
      },
    },
  });
  try {
    await answer(await router.post(QUERY, { ids: ["1"] }));
    await settle();
    // The root fetch's entry goes: products is asked again (max-age=300), the reviews entity
    // comes from the cache (20 s left). The rule alone would say max-age=300.
    const gone = await router.invalidate([{ kind: "subgraph", subgraph: "products" }]);
    assert.deepEqual(await gone.json(), { count: 1 });
    const warm = await router.post(QUERY, { ids: ["1"] });
    await answer(warm);
    assert.match(warm.headers.get("cache-control") ?? "", /^max-age=(19|20), public$/);
  } finally {
    await router.close();
    await graph.close();
  }
});

Deno.test("entity cache: nothing of a mutation is looked up or stored, and its answer says no-store", async () => {
  const graph = startGraph();
  graph.cacheControl.set("products", "max-age=60");
  graph.cacheControl.set("reviews", "max-age=60");
  const router = await startRouter(graph, {});
  const mutation = 'mutation { touch(id: "1") { id name stars } }';
  try {
    const first = await router.post(mutation);
    assert.equal(first.headers.get("cache-control"), "no-store");
    assert.deepEqual(await answer(first), { data: { touch: { id: "1", name: "one", stars: 3 } } });
    await settle();
    await answer(await router.post(mutation));
    assert.equal(representations(graph).length, 2, "the mutation's entity fetch was not cached");
    // Nor did it fill the cache for queries.
    await answer(await router.post(QUERY, { ids: ["1"] }));
    assert.equal(representations(graph).length, 3);
  } finally {
    await router.close();
    await graph.close();
  }
});
