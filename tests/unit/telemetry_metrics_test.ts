import assert from "node:assert/strict";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { createHandler } from "../../lib/http/mod.ts";
import { silentLogger } from "../../lib/log/mod.ts";
import { buildState, type RouterState } from "../../lib/state/mod.ts";
import {
  createBoundedLabel,
  createRouterMetrics,
  createTelemetry,
  DURATION_BUCKETS,
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
  // Issue 33: the adaptive limit by default (min_concurrency 8, starting at 2 × that).
  assert.equal(sample(text, "gw_router_admission_limit"), 16);
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

/** The sample lines of one metric family (no HELP/TYPE), in exposition order. */
function series(text: string, name: string): string[] {
  return text.split("\n").filter((line) =>
    line.startsWith(`${name}_`) || line.startsWith(`${name}{`)
  );
}

Deno.test("issue 16: the fast path exposes exactly what prom-client's own instruments record", async () => {
  const metrics = createRouterMetrics({ maxLabelValues: 2 });
  // The reference: prom-client instruments fed the same recordings, label values bounded by hand.
  const reference = new Registry();
  const registers = [reference];
  const server = new Histogram({
    name: "http_server_request_duration_seconds",
    help: "h",
    labelNames: ["http_request_method", "http_route", "http_response_status_code"],
    buckets: [...DURATION_BUCKETS],
    registers,
  });
  const client = new Histogram({
    name: "http_client_request_duration_seconds",
    help: "h",
    labelNames: ["subgraph", "http_response_status_code"],
    buckets: [...DURATION_BUCKETS],
    registers,
  });
  const fetches = new Counter({
    name: "gw_router_subgraph_fetches_total",
    help: "h",
    labelNames: ["subgraph", "outcome"],
    registers,
  });
  const operations = new Counter({
    name: "gw_router_operations_total",
    help: "h",
    labelNames: ["operation_name", "operation_type", "outcome", "client_name", "client_version"],
    registers,
  });
  const errors = new Counter({
    name: "gw_router_graphql_errors_total",
    help: "h",
    labelNames: ["code"],
    registers,
  });
  const active = new Gauge({
    name: "http_server_active_requests",
    help: "h",
    labelNames: ["http_request_method"],
    registers,
  });
  // Values on bucket bounds, between them, past the last one, and zero.
  const seconds = [0, 0.005, 0.0051, 0.3, 1, 9.99, 10, 11, 0.075, 2.5];
  const requests = [
    ["POST", "/graphql", 200],
    ["GET", "/graphql", 200],
    ["POST", "/graphql", 400],
    ["BREW", "unmatched", 404],
  ] as const;
  for (const [i, value] of seconds.entries()) {
    for (const [j, [method, route, status]] of requests.entries()) {
      if ((i + j) % 3 === 0) continue; // not every series every time
      metrics.requestStarted(method);
      const m = method === "BREW" ? "_OTHER" : method;
      active.inc({ http_request_method: m });
      metrics.requestFinished({ method, route, status, seconds: value * (j + 1) });
      active.dec({ http_request_method: m });
      server.observe({
        http_request_method: m,
        http_route: route,
        http_response_status_code: String(status),
      }, value * (j + 1));
    }
    const status = i % 4 === 3 ? null : i % 2 === 0 ? 200 : 503;
    const outcome = status === null ? "timeout" : status === 200 ? "success" : "http_error";
    const subgraph = i % 3 === 0 ? "reviews" : "products";
    metrics.subgraphFetch({ subgraph, seconds: value, status, outcome });
    client.observe(
      { subgraph, http_response_status_code: status === null ? "" : String(status) },
      value,
    );
    fetches.inc({ subgraph, outcome });
    // Three operation names and client names against a bound of two: the third is "other".
    const name = `Op${i % 3}`;
    const clientName = `client-${i % 3}`;
    metrics.operation({
      name,
      type: "query",
      outcome: i % 2 === 0 ? "success" : "graphql_error",
      errorCodes: i % 2 === 0 ? [] : ["BAD", `CODE_${i}`],
      clientName,
      clientVersion: i % 2 === 0 ? "1.0" : null,
    });
    operations.inc({
      operation_name: i % 3 === 2 ? "other" : name,
      operation_type: "query",
      outcome: i % 2 === 0 ? "success" : "graphql_error",
      client_name: i % 3 === 2 ? "other" : clientName,
      client_version: i % 2 === 0 ? "1.0" : "unknown",
    });
    if (i % 2 === 1) {
      errors.inc({ code: "BAD" });
      errors.inc({ code: i === 1 ? "CODE_1" : "other" });
    }
  }
  const actual = await metrics.text();
  const expected = await reference.metrics();
  for (
    const name of [
      "http_server_active_requests",
      "http_server_request_duration_seconds",
      "http_client_request_duration_seconds",
      "gw_router_subgraph_fetches_total",
      "gw_router_operations_total",
      "gw_router_graphql_errors_total",
    ]
  ) {
    const lines = series(expected, name);
    assert.ok(lines.length > 0, name);
    assert.deepEqual(series(actual, name), lines, name);
  }
  // And in figures: POST /graphql 200 saw 0.005 (on a bound), 0.0051, 1, 9.99, 11 (past the
  // last bound) and 0.075.
  const labels = 'http_request_method="POST",http_route="/graphql",http_response_status_code="200"';
  const bucket = (le: string) =>
    sample(actual, `http_server_request_duration_seconds_bucket{le="${le}",${labels}}`);
  assert.deepEqual(
    ["0.005", "0.01", "0.075", "0.5", "1", "7.5", "10", "+Inf"].map(bucket),
    [1, 2, 3, 3, 4, 4, 5, 6],
  );
  assert.equal(sample(actual, `http_server_request_duration_seconds_count{${labels}}`), 6);
  const sum = sample(actual, `http_server_request_duration_seconds_sum{${labels}}`) ?? NaN;
  assert.ok(Math.abs(sum - 22.0751) < 1e-9, `sum ${sum}`);
  assert.equal(sample(actual, 'http_server_active_requests{http_request_method="_OTHER"}'), 0);
  // The JSON snapshot (the live view, OTLP export) is prom-client's too.
  const json = await metrics.registry.getMetricsAsJSON();
  const mine = json.find((m) => m.name === "http_client_request_duration_seconds");
  const theirs = (await reference.getMetricsAsJSON()).find((m) => m.name === mine?.name);
  assert.deepEqual({ ...mine, help: "h" }, theirs);
});

Deno.test("issue 16: a scrape moves counts into the registry once: scrapes and JSON reads never double count", async () => {
  const metrics = createRouterMetrics();
  const hit = 'gw_router_cache_hits_total{cache="plan"}';
  const fetched = 'gw_router_subgraph_fetches_total{subgraph="a",outcome="success"}';
  const record = (n: number) => {
    for (let i = 0; i < n; i++) {
      metrics.cache("plan", true);
      metrics.subgraphFetch({ subgraph: "a", seconds: 0.01, status: 200, outcome: "success" });
    }
  };
  record(2);
  assert.equal(sample(await metrics.text(), hit), 2);
  assert.equal(sample(await metrics.text(), hit), 2);
  record(3);
  await metrics.registry.getMetricsAsJSON();
  const text = await metrics.text();
  assert.equal(sample(text, hit), 5);
  assert.equal(sample(text, fetched), 5);
  assert.equal(
    sample(
      text,
      'http_client_request_duration_seconds_count{subgraph="a",http_response_status_code="200"}',
    ),
    5,
  );
  // Nothing recorded, nothing exposed: a series appears with its first recording.
  assert.equal(text.includes('cache="parse"'), false);
});

Deno.test("issue 16: counters read at scrape mirror the totals kept elsewhere: scraped twice, never doubled", async () => {
  let opened = 2;
  const metrics = createRouterMetrics({
    sources: {
      admission: () => null,
      caches: () => null,
      connections: () => ({
        open: 1,
        headerReadTimeouts: 3,
        keepAliveTimeouts: 0,
        refused: 1,
        tlsHandshakeFailures: 4,
      }),
      subscriptions: () => ({
        active: 1,
        upstreams: 1,
        eventsIn: 5,
        eventsOut: 7,
        upstreamsOpened: opened,
      }),
    },
  });
  for (const expected of [2, 2, 6]) {
    opened = expected;
    const text = await metrics.text();
    assert.equal(sample(text, "gw_router_subscription_upstreams_opened_total"), expected);
    assert.equal(sample(text, 'gw_router_subscription_events_total{direction="out"}'), 7);
    assert.equal(
      sample(text, 'gw_router_client_connections_closed_total{limit="header_read_timeout"}'),
      3,
    );
    assert.equal(sample(text, "gw_router_tls_handshake_failures_total"), 4);
    assert.equal(sample(text, "gw_router_client_connections"), 1);
  }
});

Deno.test("issue 16: a bounded label stays bounded when raw values are remembered", () => {
  const label = createBoundedLabel(2);
  const long = "x".repeat(64);
  // Many raw values cleaning to one label take one slot.
  for (let i = 0; i < 1000; i++) assert.equal(label.value(`${long}${i}`), long);
  assert.equal(label.value('a"b'), "a_b");
  assert.equal(label.value("a\nb"), "a_b");
  assert.equal(label.size, 2);
  for (let i = 0; i < 1000; i++) assert.equal(label.value(`new-${i}`), "other");
  assert.equal(label.size, 2);
  assert.equal(label.value(`${long}5`), long);
  assert.equal(label.value(""), "unknown");
});
