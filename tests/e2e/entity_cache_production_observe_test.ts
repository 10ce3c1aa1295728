/**
 * Issue 42 as operators observe it: a router process on
 * `config.production.yaml`'s settings (dev mode off, access logs, Prometheus
 * metrics, tracing) with the entity cache on Redis when `redis-server` is
 * installed (else in memory) and ART admitted by a signed token, as the
 * production file says to turn it on. Misses, a partial hit and hits each show
 * in the request's access log line, in `/metrics` (lookups by outcome, entries
 * and bytes stored, invalidations by subgraph and type) and in the ART trace
 * (`entity_cache: "hit"` with `load_skipped`, `"partial"`).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { stringify } from "yaml";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { serveSubgraph } from "../../demo/subgraph.ts";
import { runCli, spawnServe } from "./_cli.ts";
import { productionSettings, withProfile } from "./_production_profile.ts";
import { REDIS_SERVER, startRedis } from "./_redis.ts";

const FED =
  `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])\n`;
const KEY = "o".repeat(32);

Deno.test("entity cache on the production profile: access log, metrics and ART trace show hits, partial hits and misses", async () => {
  const reviewsAsked: unknown[][] = [];
  const products = serveSubgraph("products", {
    typeDefs: FED + `type Query { products(ids: [ID!]!): [Product!]! }
      type Product @key(fields: "id") { id: ID! }`,
    resolvers: {
      Query: { products: (_: unknown, { ids }: { ids: string[] }) => ids.map((id) => ({ id })) },
    },
  }, { cacheControl: () => "max-age=300" });
  const reviews = serveSubgraph("reviews", {
    typeDefs: FED + `type Product @key(fields: "id") { id: ID! stars: Int! }`,
    resolvers: {
      Product: { __resolveReference: (p: { id: string }) => ({ ...p, stars: Number(p.id) }) },
    },
  }, {
    cacheControl: () => "max-age=60",
    onRequest: (body) =>
      reviewsAsked.push(
        ((body.variables ?? {}) as { representations?: unknown[] }).representations ?? [],
      ),
  });
  const composed = composeSupergraph([
    { name: "products", url: products.url, sdl: products.sdl },
    { name: "reviews", url: reviews.url, sdl: reviews.sdl },
  ]);
  assert.ok(composed.ok);
  const redis = REDIS_SERVER === null ? null : await startRedis();
  const dir = await Deno.makeTempDir({ prefix: "gw_entity_cache_observe_" });
  const router = await (async () => {
    await Deno.writeTextFile(join(dir, "supergraph.graphql"), composed.supergraphSdl);
    await Deno.mkdir(join(dir, "operations"));
    const generated = await runCli(["trace-token", "--generate-key", "--out", dir]);
    assert.equal(generated.code, 0, generated.stderr);
    assert.equal(productionSettings().dev_mode, false);
    await Deno.writeTextFile(
      join(dir, "config.yaml"),
      stringify(withProfile({
        listen_addr: "127.0.0.1:0",
        supergraph_path: "supergraph.graphql",
        operations_dir: "operations",
        mcp: { enabled: false },
        engine: {
          enable_request_tracing: true,
          request_tracing_public_key_file: join(dir, "trace_public.pem"),
        },
        ...(redis === null ? {} : {
          storage_providers: { redis: [{ id: "shared", urls: [redis.url] }] },
        }),
        entity_cache: {
          enabled: true,
          ...(redis === null ? {} : { storage: { provider_id: "shared" } }),
          invalidation: { enabled: true, shared_key: KEY },
        },
      })),
    );
    return spawnServe(join(dir, "config.yaml"));
  })();
  try {
    const minted = await runCli(["trace-token", "--key", join(dir, "trace_private.pem")]);
    assert.equal(minted.code, 0, minted.stderr);
    const token = minted.stdout.trim();
    const url = JSON.parse(await router.waitFor((l) => l.includes("GW Router listening"))).url;
    const metricsUrl = JSON.parse(
      await router.waitFor((l) => l.includes("Prometheus metrics listening")),
    ).url;
    if (redis !== null) await router.waitFor((l) => l.includes("Redis connected"));
    const post = async (name: string, ids: string[], headers: Record<string, string> = {}) => {
      const response = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({
          query: `query ${name}($ids: [ID!]!) { products(ids: $ids) { id stars } }`,
          variables: { ids },
        }),
      });
      assert.equal(response.status, 200);
      const body = await response.json();
      assert.equal(body.errors, undefined, JSON.stringify(body.errors));
      assert.deepEqual(body.data.products, ids.map((id) => ({ id, stars: Number(id) })));
      // Let the entries written after the answer land.
      await new Promise((resolve) => setTimeout(resolve, 50));
      return body;
    };
    const logged = async (name: string) =>
      JSON.parse(await router.waitFor((l) => l.includes(`"operation_name":"${name}"`)));
    const counts = (line: Record<string, unknown>) => [
      line.entity_cache_hits,
      line.entity_cache_partial_hits,
      line.entity_cache_misses,
      line.subgraph_fetches,
    ];

    await post("Cold", ["1", "2"]);
    assert.deepEqual(counts(await logged("Cold")), [0, 0, 2, 2], "hits, partial, misses, fetches");
    await post("Warm", ["1", "2"]);
    assert.deepEqual(counts(await logged("Warm")), [2, 0, 0, 0]);
    await post("Partial", ["2", "3"]);
    assert.deepEqual(counts(await logged("Partial")), [0, 1, 1, 2]);
    assert.deepEqual(reviewsAsked.at(-1), [{ __typename: "Product", id: "3" }]);

    // ART, admitted by a signed token (dev mode is off): which loads the cache answered.
    const trace = { "x-gw-trace": "true", "x-gw-token": token };
    const hit = JSON.stringify(await post("Warm", ["1", "2"], trace));
    assert.equal((hit.match(/"load_skipped":true,"entity_cache":"hit"/g) ?? []).length, 2, hit);
    const partial = JSON.stringify(await post("Partial", ["2", "3", "4"], trace));
    assert.match(partial, /"load_skipped":false,"entity_cache":"partial"/);
    // Without the token, no trace (and the answer is the same).
    assert.doesNotMatch(JSON.stringify(await post("Warm", ["1", "2"])), /entity_cache/);

    const invalidate = async (body: unknown) => {
      const response = await fetch(`${url}/invalidation`, {
        method: "POST",
        headers: { authorization: KEY },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, 202);
      return (await response.json()).count;
    };
    assert.equal(await invalidate([{ kind: "type", subgraph: "reviews", type: "Product" }]), 4);
    assert.equal(await invalidate([{ kind: "subgraph", subgraph: "products" }]), 3);

    const metrics = await (await fetch(metricsUrl)).text();
    const value = (name: string, labels: string) =>
      Number(new RegExp(`^${name}\\{${labels}\\} (\\d+)`, "m").exec(metrics)?.[1] ?? NaN);
    const lookups = (subgraph: string, type: string, outcome: string) =>
      value(
        "gw_router_entity_cache_lookups_total",
        `subgraph="${subgraph}",type="${type}",outcome="${outcome}"`,
      );
    // Root fetches: Cold, Partial and the second Partial missed; the three Warm hit.
    assert.deepEqual(
      ["hit", "partial", "miss"].map((o) => lookups("products", "Query", o)),
      [3, NaN, 3],
    );
    assert.deepEqual(
      ["hit", "partial", "miss"].map((o) => lookups("reviews", "Product", o)),
      [3, 2, 1],
    );
    assert.equal(
      value("gw_router_entity_cache_stored_total", 'subgraph="reviews",type="Product"'),
      4,
    );
    const bytes = value(
      "gw_router_entity_cache_stored_bytes_total",
      'subgraph="reviews",type="Product"',
    );
    assert.ok(bytes > 4 * '{"stars":1}'.length && bytes < 4 * 200, String(bytes));
    assert.equal(
      value(
        "gw_router_entity_cache_invalidated_total",
        'subgraph="reviews",type="Product",kind="type"',
      ),
      4,
    );
    assert.equal(
      value(
        "gw_router_entity_cache_invalidated_total",
        'subgraph="products",type="",kind="subgraph"',
      ),
      3,
    );
  } finally {
    await router.close();
    await Promise.all([products.close(), reviews.close()]);
    await redis?.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
