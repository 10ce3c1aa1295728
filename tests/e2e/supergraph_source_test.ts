/**
 * The supergraph from a registry (`supergraph_source`, docs/supergraph-source.md):
 * local fake registries speaking each protocol — a plain URL with `ETag`, the
 * Hive CDN's artifact with `X-Hive-CDN-Key`, Apollo Uplink's `routerConfig`
 * (its first endpoint down: failover) — serve a real router. A change is
 * picked up within a poll; a failing registry or a broken schema leaves the
 * last good one serving; a restart with the registry down serves the
 * last-known-good from `supergraph_path`; with neither, readiness is 503 until
 * a schema comes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function supergraph(url: string, sdl: string): string {
  const composed = composeSupergraph([{ name: "greetings", url, sdl: `${LINK}\n${sdl}` }]);
  if (!composed.ok) throw new Error("does not compose");
  return composed.supergraphSdl;
}

type Protocol = "url" | "hive_cdn" | "apollo_uplink";

/** A fake registry: serves `sdl` by `protocol`; `fail` answers 500; requests are recorded. */
function fakeRegistry(protocol: Protocol) {
  const state = { sdl: "", version: 0, fail: false, requests: [] as Request[] };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    state.requests.push(request.clone());
    if (state.fail) return new Response("registry down", { status: 500 });
    const etag = `"v${state.version}"`;
    if (protocol === "apollo_uplink") {
      const body = await request.json();
      if (body.variables.apiKey !== "service:key" || body.variables.graph_ref !== "g@prod") {
        return Response.json({
          data: {
            routerConfig: {
              __typename: "FetchError",
              code: "AUTHENTICATION_FAILED",
              message: "bad key",
            },
          },
        });
      }
      if (body.variables.ifAfterId === String(state.version)) {
        return Response.json({
          data: { routerConfig: { __typename: "Unchanged", id: String(state.version) } },
        });
      }
      return Response.json({
        data: {
          routerConfig: {
            __typename: "RouterConfigResult",
            id: String(state.version),
            supergraphSdl: state.sdl,
            minDelaySeconds: 0,
          },
        },
      });
    }
    if (protocol === "hive_cdn") {
      if (new URL(request.url).pathname !== "/artifacts/v1/target/supergraph") {
        return new Response("not found", { status: 404 });
      }
      if (request.headers.get("x-hive-cdn-key") !== "cdn-key") {
        return new Response("forbidden", { status: 403 });
      }
    } else if (request.headers.get("authorization") !== "Bearer registry-token") {
      return new Response("unauthorized", { status: 401 });
    }
    if (request.headers.get("if-none-match") === etag) return new Response(null, { status: 304 });
    return new Response(state.sdl, { headers: { etag } });
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  return {
    state,
    base,
    publish(sdl: string) {
      state.sdl = sdl;
      state.version++;
    },
    close: () => server.shutdown(),
  };
}

/** A port nothing listens on (an Uplink endpoint that is down). */
function deadPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  return port;
}

function sourceConfig(protocol: Protocol, base: string): string {
  const common = "poll_interval: 1s, timeout: 2s";
  if (protocol === "url") {
    return `{ kind: url, url: "${base}/supergraph.graphql", headers: ["Authorization: Bearer registry-token"], ${common} }`;
  }
  if (protocol === "hive_cdn") {
    return `{ kind: hive_cdn, endpoint: "${base}/artifacts/v1/target", key: cdn-key, ${common} }`;
  }
  return `{ kind: apollo_uplink, endpoints: ["http://127.0.0.1:${deadPort()}/", "${base}/"], ${common} }`;
}

async function workspace(protocol: Protocol, base: string): Promise<string> {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(join(dir, "ops"));
  await Deno.writeTextFile(
    join(dir, "config.yaml"),
    `listen_addr: 127.0.0.1:0
supergraph_path: kept/supergraph.graphql
operations_dir: ops
mcp: { enabled: false }
supergraph_source: ${sourceConfig(protocol, base)}
telemetry: { metrics: { prometheus: { enabled: true, listen_addr: "127.0.0.1:0" } } }
`,
  );
  return dir;
}

async function ask(router: RunningRouter, query: string): Promise<unknown> {
  const response = await fetch(`${router.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query }),
    signal: AbortSignal.timeout(10_000),
  });
  return await response.json();
}

async function until(what: string, check: () => Promise<boolean>, ms = 6_000): Promise<number> {
  const start = performance.now();
  while (!(await check())) {
    assert.ok(performance.now() - start < ms, `${what}: not within ${ms} ms`);
    await sleep(100);
  }
  return performance.now() - start;
}

const ENV = { APOLLO_KEY: "service:key", APOLLO_GRAPH_REF: "g@prod" };

for (const protocol of ["url", "hive_cdn", "apollo_uplink"] as const) {
  Deno.test(`supergraph_source ${protocol}: a change within a poll; a failing or broken registry keeps the last good; a restart serves it`, async () => {
    const subgraph = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      async (request) => {
        const { query } = await request.json();
        return Response.json({
          data: {
            ...(query.includes("hello") ? { hello: "world" } : {}),
            ...(query.includes("bye") ? { bye: "ciao" } : {}),
          },
        });
      },
    );
    const subgraphUrl = `http://127.0.0.1:${subgraph.addr.port}/graphql`;
    const v1 = supergraph(subgraphUrl, "type Query { hello: String }");
    const v2 = supergraph(subgraphUrl, "type Query { hello: String bye: String }");
    const registry = fakeRegistry(protocol);
    registry.publish(v1);
    const dir = await workspace(protocol, registry.base);
    const configPath = join(dir, "config.yaml");
    const kept = join(dir, "kept", "supergraph.graphql");
    let router = await startRouter({ configPath, env: ENV });
    try {
      assert.deepEqual(await ask(router, "{ hello }"), { data: { hello: "world" } });
      const before = await ask(router, "{ bye }") as { errors?: unknown[] };
      assert.ok(before.errors, "bye is not in v1");
      // The registry was asked as its protocol says.
      const first = registry.state.requests[0]!;
      if (protocol === "url") {
        assert.equal(first.headers.get("authorization"), "Bearer registry-token");
      }
      if (protocol === "hive_cdn") assert.equal(first.headers.get("x-hive-cdn-key"), "cdn-key");

      registry.publish(v2);
      const took = await until("v2 served", async () => {
        const answer = await ask(router, "{ bye }") as { data?: { bye?: string } };
        return answer.data?.bye === "ciao";
      });
      assert.ok(took < 3_000, `picked up after ${took} ms (poll 1 s)`);
      assert.equal(await Deno.readTextFile(kept), v2);
      // The next poll asks "if not v2": answered 304 / Unchanged, no schema sent again.
      const seen = registry.state.requests.length;
      await until("the next poll", () => Promise.resolve(registry.state.requests.length > seen));
      const conditional = registry.state.requests.at(-1)!;
      if (protocol !== "apollo_uplink") {
        assert.equal(conditional.headers.get("if-none-match"), `"v${registry.state.version}"`);
      }

      // A broken schema: refused, v2 keeps serving (and the kept file stays v2).
      registry.publish("type Query {");
      const polls = registry.state.requests.length;
      await until(
        "a poll of the broken one",
        () => Promise.resolve(registry.state.requests.length > polls + 1),
      );
      assert.deepEqual(await ask(router, "{ bye }"), { data: { bye: "ciao" } });
      assert.equal(await Deno.readTextFile(kept), v2);

      // A failing registry: v2 keeps serving; the failures are counted.
      registry.state.fail = true;
      const failing = registry.state.requests.length;
      await until(
        "a failed poll",
        () => Promise.resolve(registry.state.requests.length > failing + 1),
      );
      assert.deepEqual(await ask(router, "{ bye }"), { data: { bye: "ciao" } });
      const metrics = await (await fetch(`${router.metricsUrl}`)).text();
      assert.match(
        metrics,
        new RegExp(`gw_router_supergraph_age_seconds\\{source="${protocol}"\\} \\d`),
      );
      assert.match(
        metrics,
        new RegExp(`gw_router_supergraph_poll_failures\\{source="${protocol}"\\} [1-9]`),
      );

      // A restart with the registry gone: the last good one serves.
      await router.shutdown();
      await registry.close();
      router = await startRouter({ configPath, env: ENV });
      assert.deepEqual(await ask(router, "{ bye }"), { data: { bye: "ciao" } });
      const ready = await fetch(`${router.url}/health/ready`);
      await ready.body?.cancel();
      assert.equal(ready.status, 200);
    } finally {
      await router.shutdown();
      await registry.close().catch(() => {});
      await subgraph.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("supergraph_source: no registry and nothing kept — readiness 503 until the first schema comes", async () => {
  const subgraph = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => Response.json({ data: { hello: "world" } }),
  );
  const registry = fakeRegistry("url");
  registry.state.fail = true;
  const dir = await workspace("url", registry.base);
  const router = await startRouter({ configPath: join(dir, "config.yaml") });
  try {
    const starting = await fetch(`${router.url}/health/ready`);
    await starting.body?.cancel();
    assert.equal(starting.status, 503);
    const refused = await fetch(`${router.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ hello }" }),
    });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get("retry-after"), "1");
    assert.deepEqual(await refused.json(), {
      errors: [{ message: "Router is starting", extensions: { code: "STARTING" } }],
    });
    registry.publish(
      supergraph(`http://127.0.0.1:${subgraph.addr.port}/graphql`, "type Query { hello: String }"),
    );
    registry.state.fail = false;
    await until("ready", async () => {
      const response = await fetch(`${router.url}/health/ready`);
      await response.body?.cancel();
      return response.status === 200;
    });
    assert.deepEqual(await ask(router, "{ hello }"), { data: { hello: "world" } });
  } finally {
    await router.shutdown();
    await registry.close();
    await subgraph.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("supergraph_source: apollo_uplink without a key or graph ref is refused naming the key", async () => {
  const dir = await workspace("apollo_uplink", "http://127.0.0.1:1");
  try {
    await assert.rejects(
      startRouter({ configPath: join(dir, "config.yaml"), env: { APOLLO_GRAPH_REF: "g@prod" } }),
      /"supergraph_source\.key".*APOLLO_KEY/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
