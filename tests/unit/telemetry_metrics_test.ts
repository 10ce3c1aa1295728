import assert from "node:assert/strict";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { createHandler } from "../../lib/http/mod.ts";
import { silentLogger } from "../../lib/log/mod.ts";
import { buildState, type RouterState } from "../../lib/state/mod.ts";
import {
  createBoundedLabel,
  createRouterMetrics,
  createTelemetry,
  metricsHandler,
  type RouterMetrics,
} from "../../lib/telemetry/mod.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';
const composed = composeSupergraph([
  {
    name: "greetings",
    url: "http://greetings.invalid/graphql",
    sdl: `${LINK}\ntype Query { hello: String! partial: String }`,
  },
  {
    name: "broken",
    url: "http://broken.invalid/graphql",
    sdl: `${LINK}\ntype Query { down: String }`,
  },
]);
if (!composed.ok) throw new Error("test supergraph does not compose");

async function setup(): Promise<
  { handle: (r: Request) => Promise<Response>; metrics: RouterMetrics }
> {
  let state: RouterState | null = null;
  const metrics = createRouterMetrics({
    sources: {
      admission: () => state?.engine.admission ?? null,
      caches: () => state && { parse: state.engine.prepared, plan: state.engine.plans },
    },
    maxLabelValues: 3,
  });
  const telemetry = createTelemetry({ metrics, log: () => silentLogger, accessLogs: () => false });
  state = await buildState({
    config: parseConfig({}),
    log: silentLogger,
    supergraphSdl: composed.ok ? composed.supergraphSdl : "",
    operationFiles: [],
    traceKeyPem: null,
    telemetry,
    fetch: async (request) => {
      if (request.url.startsWith("http://broken.invalid")) {
        return new Response("unavailable", { status: 503 });
      }
      const { query } = await request.json();
      return String(query).includes("partial")
        ? Response.json({ data: { partial: null }, errors: [{ message: "nope" }] })
        : Response.json({ data: { hello: "world" } });
    },
  });
  return { handle: createHandler(() => state), metrics };
}

function post(query: string, headers: Record<string, string> = {}): Request {
  return new Request("http://router.test/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ query }),
  });
}

async function send(handle: (r: Request) => Promise<Response>, request: Request): Promise<void> {
  await (await handle(request)).body?.cancel();
}

/** The value of one series in a Prometheus text exposition, or undefined. */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith(series + " ")) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

Deno.test("issue 16: operations are counted by name, type and outcome; GraphQL errors apart from HTTP status", async () => {
  const { handle, metrics } = await setup();
  const web = { "graphql-client-name": "web", "graphql-client-version": "1.2" };
  await send(handle, post("query Hello { hello }", web));
  await send(handle, post("query Hello { hello }", web));
  await send(handle, post("{ partial }"));
  await send(handle, post("{ nope }"));
  const text = await metrics.text();
  assert.equal(
    sample(
      text,
      'gw_router_operations_total{operation_name="Hello",operation_type="query",outcome="success",client_name="web",client_version="1.2"}',
    ),
    2,
  );
  assert.equal(
    sample(
      text,
      'gw_router_operations_total{operation_name="unknown",operation_type="query",outcome="graphql_error",client_name="unknown",client_version="unknown"}',
    ),
    1,
  );
  assert.equal(
    sample(
      text,
      'gw_router_operations_total{operation_name="unknown",operation_type="unknown",outcome="request_error",client_name="unknown",client_version="unknown"}',
    ),
    1,
  );
  assert.equal(sample(text, 'gw_router_graphql_errors_total{code="GRAPHQL_VALIDATION_FAILED"}'), 1);
  // The partial response was an HTTP 200: the GraphQL error is counted apart.
  assert.equal(
    sample(
      text,
      'http_server_request_duration_seconds_count{http_request_method="POST",http_route="/graphql",http_response_status_code="200"}',
    ),
    4,
  );
  assert.equal(sample(text, 'http_server_active_requests{http_request_method="POST"}'), 0);
});

Deno.test("issue 16: subgraph fetches are counted by subgraph and outcome, with the client duration histogram", async () => {
  const { handle, metrics } = await setup();
  await send(handle, post("{ hello }"));
  await send(handle, post("{ down }"));
  const text = await metrics.text();
  assert.equal(
    sample(text, 'gw_router_subgraph_fetches_total{subgraph="greetings",outcome="success"}'),
    1,
  );
  assert.equal(
    sample(text, 'gw_router_subgraph_fetches_total{subgraph="broken",outcome="http_error"}'),
    1,
  );
  assert.equal(
    sample(
      text,
      'http_client_request_duration_seconds_count{subgraph="broken",http_response_status_code="503"}',
    ),
    1,
  );
});

Deno.test("issue 16: parse and plan cache hits and misses are counted; cache sizes are read at scrape", async () => {
  const { handle, metrics } = await setup();
  await send(handle, post("{ hello }"));
  await send(handle, post("{ hello }"));
  const text = await metrics.text();
  assert.equal(sample(text, 'gw_router_cache_misses_total{cache="parse"}'), 1);
  assert.equal(sample(text, 'gw_router_cache_hits_total{cache="parse"}'), 1);
  assert.equal(sample(text, 'gw_router_cache_misses_total{cache="plan"}'), 1);
  assert.equal(sample(text, 'gw_router_cache_hits_total{cache="plan"}'), 1);
  assert.equal(sample(text, 'gw_router_cache_entries{cache="plan"}'), 1);
  assert.equal(sample(text, "gw_router_admission_in_flight"), 0);
  assert.equal(sample(text, "gw_router_admission_queued"), 0);
});

Deno.test("issue 16: client-chosen operation and client names stop at the label bound (then 'other')", async () => {
  const { handle, metrics } = await setup();
  for (let i = 0; i < 6; i++) {
    await send(handle, post(`query Op${i} { hello }`, { "graphql-client-name": `client-${i}` }));
  }
  const text = await metrics.text();
  const names = new Set(
    [...text.matchAll(/gw_router_operations_total\{operation_name="([^"]+)"/g)].map((m) => m[1]),
  );
  assert.deepEqual([...names].sort(), ["Op0", "Op1", "Op2", "other"]);
  const clients = new Set([...text.matchAll(/client_name="([^"]+)"/g)].map((m) => m[1]));
  assert.deepEqual([...clients].sort(), ["client-0", "client-1", "client-2", "other"]);
});

Deno.test("issue 16: a label value is cut to 64 characters and cleaned of quotes and newlines", () => {
  const label = createBoundedLabel(10);
  assert.equal(label.value("x".repeat(100)).length, 64);
  assert.equal(label.value('a"b\nc'), "a_b_c");
});

Deno.test("issue 16: the request path is never a label: unknown paths share the route 'unmatched'", async () => {
  const { handle, metrics } = await setup();
  await send(handle, new Request("http://router.test/a-secret-token-in-a-path"));
  const text = await metrics.text();
  assert.equal(text.includes("a-secret-token"), false);
  assert.equal(
    sample(
      text,
      'http_server_request_duration_seconds_count{http_request_method="GET",http_route="unmatched",http_response_status_code="404"}',
    ),
    1,
  );
});

Deno.test("issue 16: the metrics handler serves the Prometheus text format on its path only", async () => {
  const handle = metricsHandler(createRouterMetrics(), "/metrics");
  const ok = await handle(new Request("http://m/metrics"));
  assert.equal(ok.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  assert.match(await ok.text(), /^# HELP /m);
  const post = await handle(new Request("http://m/metrics", { method: "POST" }));
  await post.body?.cancel();
  assert.equal(post.status, 405);
});

Deno.test("issue 16: a Connect method that does not exist is counted as 'unknown', never by its path", async () => {
  const { handle, metrics } = await setup();
  await send(
    handle,
    new Request("http://router.test/service.v1.GraphService/Made-Up-By-A-Client", {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1" },
      body: "{}",
    }),
  );
  const text = await metrics.text();
  assert.equal(text.includes("Made-Up-By-A-Client"), false);
  assert.equal(
    sample(text, 'gw_router_connect_requests_total{method="unknown",code="unimplemented"}'),
    1,
  );
});
