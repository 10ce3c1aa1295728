/**
 * Issue 42 as operators run it: a router process on `config.production.yaml`'s
 * settings (dev mode off, access logs, Prometheus metrics, tracing) with the
 * entity cache on. A warm answer asks no subgraph, carries its Cache-Control,
 * the access log counts the cache's hits and misses, and the metrics show
 * lookups, stored entries and invalidations by subgraph, type and kind (a
 * `@cacheTag` tag among them).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { stringify } from "yaml";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { serveSubgraph } from "../../demo/subgraph.ts";
import { spawnServe } from "./_cli.ts";
import { productionSettings, withProfile } from "./_production_profile.ts";

const FED =
  `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])\n`;
const KEY = "s".repeat(32);
const TAGGED = `extend schema
  @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@composeDirective"])
  @link(url: "https://gw-router.dev/cache/v0.1", import: ["@cacheTag"])
  @composeDirective(name: "@cacheTag")
directive @cacheTag(format: String!) repeatable on FIELD_DEFINITION | OBJECT
`;

Deno.test("entity cache on the production profile: warm answers, access log counts, metrics", async () => {
  let reviewRequests = 0;
  const products = serveSubgraph("products", {
    typeDefs: TAGGED + `type Query { products(ids: [ID!]!): [Product!]! }
      type Product @key(fields: "id") @cacheTag(format: "product-{$key.id}") {
        id: ID!
        name: String!
      }`,
    resolvers: {
      Query: {
        products: (_: unknown, { ids }: { ids: string[] }) =>
          ids.map((id) => ({ id, name: `p${id}` })),
      },
    },
  }, { cacheControl: () => "max-age=300" });
  const reviews = serveSubgraph("reviews", {
    typeDefs: FED + `type Product @key(fields: "id") { id: ID! stars: Int! }`,
    resolvers: { Product: { __resolveReference: (p: { id: string }) => ({ ...p, stars: 5 }) } },
  }, { cacheControl: () => "max-age=60", onRequest: () => reviewRequests++ });
  const composed = composeSupergraph([
    { name: "products", url: products.url, sdl: products.sdl },
    { name: "reviews", url: reviews.url, sdl: reviews.sdl },
  ]);
  assert.ok(composed.ok);
  const dir = await Deno.makeTempDir({ prefix: "gw_entity_cache_" });
  await Deno.writeTextFile(join(dir, "supergraph.graphql"), composed.supergraphSdl);
  await Deno.mkdir(join(dir, "operations"));
  assert.equal(productionSettings().dev_mode, false);
  await Deno.writeTextFile(
    join(dir, "config.yaml"),
    stringify(withProfile({
      listen_addr: "127.0.0.1:0",
      supergraph_path: "supergraph.graphql",
      operations_dir: "operations",
      mcp: { enabled: false },
      entity_cache: { enabled: true, invalidation: { enabled: true, shared_key: KEY } },
    })),
  );
  const router = spawnServe(join(dir, "config.yaml"));
  try {
    const url = JSON.parse(await router.waitFor((l) => l.includes("GW Router listening"))).url;
    const metricsUrl = JSON.parse(
      await router.waitFor((l) => l.includes("Prometheus metrics listening")),
    ).url;
    const query = '{ products(ids: ["1", "2"]) { id name stars } }';
    const post = () =>
      fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query }),
      });
    const cold = await post();
    assert.equal(cold.headers.get("cache-control"), "max-age=60, public");
    const coldBody = await cold.json();
    await new Promise((r) => setTimeout(r, 50));
    const warm = await post();
    assert.deepEqual(await warm.json(), coldBody);
    assert.equal(reviewRequests, 1, "the warm answer asked no subgraph");
    const logged = await router.waitFor((l) => l.includes('"entity_cache_hits":2'));
    const line = JSON.parse(logged);
    assert.equal(line.subgraph_fetches, 0);
    assert.equal(line.entity_cache_misses, 0);
    const invalidate = async (body: unknown) => {
      const response = await fetch(`${url}/invalidation`, {
        method: "POST",
        headers: { authorization: KEY },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, 202);
      return await response.json();
    };
    assert.deepEqual(
      await invalidate([{ kind: "cache_tag", subgraphs: ["reviews"], cache_tag: "product-1" }]),
      { count: 1 },
    );
    assert.deepEqual(await invalidate([{ kind: "type", subgraph: "reviews", type: "Product" }]), {
      count: 1,
    });
    const metrics = await (await fetch(metricsUrl)).text();
    assert.match(
      metrics,
      /gw_router_entity_cache_lookups_total\{subgraph="reviews",type="Product",outcome="hit"\} 1/,
    );
    assert.match(
      metrics,
      /gw_router_entity_cache_lookups_total\{subgraph="products",type="Query",outcome="miss"\} 1/,
    );
    assert.match(
      metrics,
      /gw_router_entity_cache_stored_total\{subgraph="reviews",type="Product"\} 2/,
    );
    assert.match(
      metrics,
      /gw_router_entity_cache_invalidated_total\{subgraph="reviews",type="Product",kind="type"\} 1/,
    );
    assert.match(
      metrics,
      /gw_router_entity_cache_invalidated_total\{subgraph="reviews",type="",kind="cache_tag"\} 1/,
    );
  } finally {
    await router.close();
    await Promise.all([products.close(), reviews.close()]);
    await Deno.remove(dir, { recursive: true });
  }
});
