import assert from "node:assert/strict";
import { exportJWK, generateKeyPair } from "jose";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { createHandler } from "../../lib/http/mod.ts";
import { silentLogger } from "../../lib/log/mod.ts";
import { buildState, type RouterState } from "../../lib/state/mod.ts";
import {
  createRouterMetrics,
  createTelemetry,
  type RouterMetrics,
} from "../../lib/telemetry/mod.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';
const composed = composeSupergraph([
  {
    name: "flaky",
    url: "http://flaky.invalid/graphql",
    sdl: `${LINK}\ntype Query { hello: String }`,
  },
]);
if (!composed.ok) throw new Error("test supergraph does not compose");

async function setup(
  config: Record<string, unknown>,
  fetch: (request: Request) => Promise<Response>,
  jwksFetch?: typeof globalThis.fetch,
): Promise<
  { handle: (r: Request) => Promise<Response>; metrics: RouterMetrics; state: RouterState }
> {
  let state: RouterState | null = null;
  const metrics = createRouterMetrics({
    sources: {
      admission: () => state?.engine.admission ?? null,
      caches: () => state && { parse: state.engine.prepared, plan: state.engine.plans },
      memory: () => state?.engine.memory ?? null,
    },
  });
  const telemetry = createTelemetry({ metrics, log: () => silentLogger, accessLogs: () => false });
  state = await buildState({
    config: parseConfig(config),
    log: silentLogger,
    supergraphSdl: composed.ok ? composed.supergraphSdl : "",
    operationFiles: [],
    traceKeyPem: null,
    telemetry,
    fetch,
    ...(jwksFetch ? { jwksFetch } : {}),
  });
  const built = state;
  return { handle: createHandler(() => built), metrics, state: built };
}

function post(query: string): Request {
  return new Request("http://router.test/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query }),
  });
}

/** The value of one series in a Prometheus text exposition, or undefined. */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith(series + " ")) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

Deno.test("issue 16: each subgraph retry is counted in gw_router_subgraph_retries_total", async () => {
  const statuses = [503, 503, 200];
  const { handle, metrics } = await setup(
    {
      traffic_shaping: {
        all: { retry: { enabled: true, max_attempts: 3, interval: "1ms", max_duration: "2ms" } },
      },
    },
    () =>
      Promise.resolve(
        (statuses.shift() ?? 200) === 200
          ? Response.json({ data: { hello: "world" } })
          : new Response("unavailable", { status: 503 }),
      ),
  );
  await (await handle(post("{ hello }"))).body?.cancel();
  const text = await metrics.text();
  assert.equal(sample(text, 'gw_router_subgraph_retries_total{subgraph="flaky"}'), 2);
  assert.equal(
    sample(text, 'gw_router_subgraph_fetches_total{subgraph="flaky",outcome="success"}'),
    1,
  );
});

Deno.test("issue 16: a request refused by the open circuit breaker is counted as outcome circuit_open, once", async () => {
  let sent = 0;
  const { handle, metrics } = await setup(
    {
      traffic_shaping: {
        all: {
          // One fetch per request (retries are on by default since issue 34).
          retry: { enabled: false },
          circuit_breaker: {
            enabled: true,
            request_threshold: 2,
            error_threshold_percentage: 50,
            sleep_window: "1m",
          },
        },
      },
    },
    () => {
      sent++;
      return Promise.resolve(new Response("unavailable", { status: 503 }));
    },
  );
  for (let i = 0; i < 3; i++) await (await handle(post("{ hello }"))).body?.cancel();
  const text = await metrics.text();
  assert.equal(sent, 2, "the third request was not sent");
  assert.equal(
    sample(text, 'gw_router_subgraph_fetches_total{subgraph="flaky",outcome="http_error"}'),
    2,
  );
  assert.equal(
    sample(text, 'gw_router_subgraph_fetches_total{subgraph="flaky",outcome="circuit_open"}'),
    1,
  );
  assert.equal(
    sample(text, 'gw_router_subgraph_fetches_total{subgraph="flaky",outcome="network_error"}'),
    undefined,
  );
});

Deno.test("issue 16: JWKS fetches are counted by outcome in gw_router_jwks_refreshes_total", async () => {
  const { publicKey } = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256" };
  let up = false;
  const { metrics, state } = await setup(
    { authentication: { jwt: { jwks: [{ url: "http://keys.invalid/jwks.json" }] } } },
    () => Promise.resolve(Response.json({ data: {} })),
    () =>
      Promise.resolve(
        up ? Response.json({ keys: [jwk] }) : new Response("down", { status: 500 }),
      ),
  );
  try {
    const [source] = state.keySources.sources;
    assert.ok(source, "the state started its key source");
    await source.refresh(); // the start's fetch (a failure) is in flight, or this one is
    up = true;
    assert.equal(await source.refresh(), true);
    const text = await metrics.text();
    assert.ok((sample(text, 'gw_router_jwks_refreshes_total{outcome="failure"}') ?? 0) >= 1);
    assert.equal(sample(text, 'gw_router_jwks_refreshes_total{outcome="success"}'), 1);
  } finally {
    state.keySources.close();
  }
});

Deno.test("issue 16: a request refused by a full admission queue is counted with reason queue_full", async () => {
  const entered = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const { handle, metrics } = await setup(
    {
      engine: { max_concurrent_operations: 1 },
      traffic_shaping: { router: { max_queue_size: 1 } },
    },
    async () => {
      entered.resolve();
      await release.promise;
      return Response.json({ data: { hello: "world" } });
    },
  );
  const first = handle(post("{ hello }"));
  await entered.promise;
  const second = handle(post("{ hello }")); // waits in the queue
  const third = await handle(post("{ hello }"));
  assert.equal(third.status, 503);
  await third.body?.cancel();
  release.resolve();
  for (const response of await Promise.all([first, second])) await response.body?.cancel();
  const text = await metrics.text();
  assert.equal(sample(text, 'gw_router_admission_rejected_total{reason="queue_full"}'), 1);
});

Deno.test("issue 16: the parse and plan caches are exported in bytes (their bound), read at scrape", async () => {
  const { handle, metrics, state } = await setup(
    {},
    () => Promise.resolve(Response.json({ data: { hello: "world" } })),
  );
  await (await handle(post("{ hello }"))).body?.cancel();
  const text = await metrics.text();
  const plan = sample(text, 'gw_router_cache_bytes{cache="plan"}');
  assert.ok(plan !== undefined && plan > 0);
  assert.equal(plan, state.engine.plans.bytes);
  assert.equal(sample(text, 'gw_router_cache_bytes{cache="parse"}'), state.engine.prepared.bytes);
  assert.equal(sample(text, 'gw_router_cache_entries{cache="plan"}'), 1);
});

Deno.test("issue 16: subgraph bytes held by an in-flight operation show in gw_router_in_flight_bytes", async () => {
  const head = new TextEncoder().encode('{"data":{"hello":"');
  const read = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const { handle, metrics } = await setup({}, () =>
    Promise.resolve(
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(head);
          },
          // Called once the first chunk has been read.
          async pull(controller) {
            read.resolve();
            await release.promise;
            controller.enqueue(new TextEncoder().encode('world"}}'));
            controller.close();
          },
        }),
        { headers: { "content-type": "application/json" } },
      ),
    ));
  const pending = handle(post("{ hello }"));
  await read.promise;
  // Give the reader a turn to charge the first chunk.
  await new Promise((resolve) => setTimeout(resolve, 0));
  const during = sample(await metrics.text(), "gw_router_in_flight_bytes");
  release.resolve();
  await (await pending).body?.cancel();
  assert.ok(during !== undefined && during >= head.length, `held ${during}`);
  assert.equal(sample(await metrics.text(), "gw_router_in_flight_bytes"), 0);
});

Deno.test("issue 16: the MCP denial level label is bounded: an unknown level counts as 'other'", async () => {
  const metrics = createRouterMetrics();
  metrics.mcpDenied("tool");
  metrics.mcpDenied("<script>");
  const text = await metrics.text();
  assert.equal(sample(text, 'gw_router_mcp_denied_total{level="tool"}'), 1);
  assert.equal(sample(text, 'gw_router_mcp_denied_total{level="other"}'), 1);
  // The value itself, never as a label ("subscription" metric names contain "script").
  assert.ok(!text.includes("<script>"));
});
