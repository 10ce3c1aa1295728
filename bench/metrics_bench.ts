/**
 * Hot-path cost of the metrics registry, per request: the work one GraphQL
 * request does (active requests up/down, the server duration histogram, the
 * operation counter, one subgraph duration histogram), with prom-client and
 * with the OpenTelemetry metrics SDK. Issue 16 chose the library from this.
 *
 * Run: `deno bench -A bench/metrics_bench.ts`
 */
import { metrics as otelMetrics } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { Counter, Gauge, Histogram, Registry } from "prom-client";

let _sink: unknown;
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const registry = new Registry();
const promActive = new Gauge({ name: "active", help: "a", labelNames: [], registers: [registry] });
const promServer = new Histogram({
  name: "server_seconds",
  help: "s",
  labelNames: ["http_request_method", "http_route", "http_response_status_code"],
  buckets: BUCKETS,
  registers: [registry],
});
const promOps = new Counter({
  name: "ops_total",
  help: "o",
  labelNames: ["operation_name", "operation_type", "outcome", "client_name", "client_version"],
  registers: [registry],
});
const promClient = new Histogram({
  name: "client_seconds",
  help: "c",
  labelNames: ["subgraph", "http_response_status_code"],
  buckets: BUCKETS,
  registers: [registry],
});
// Children bound once per label set (what the router does for its fixed sets).
const promServerChild = promServer.labels("POST", "/graphql", "200");

/** A pull reader (what the Prometheus exporter is): without a reader the SDK records nothing. */
class PullReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}
const reader = new PullReader();
const provider = new MeterProvider({ readers: [reader] });
otelMetrics.setGlobalMeterProvider(provider);
const meter = provider.getMeter("bench");
const otelActive = meter.createUpDownCounter("active");
const otelServer = meter.createHistogram("server", {
  unit: "s",
  advice: { explicitBucketBoundaries: BUCKETS },
});
const otelOps = meter.createCounter("ops");
const otelClient = meter.createHistogram("client", {
  unit: "s",
  advice: { explicitBucketBoundaries: BUCKETS },
});
const serverAttrs = {
  "http.request.method": "POST",
  "http.route": "/graphql",
  "http.response.status_code": 200,
};

let i = 0;
Deno.bench("prom-client: one request's series", { group: "metrics", baseline: true }, () => {
  const d = (i++ % 100) / 1000;
  promActive.inc();
  promServerChild.observe(d);
  promOps.inc({
    operation_name: "GetUser",
    operation_type: "query",
    outcome: "success",
    client_name: "web",
    client_version: "1.0",
  });
  promClient.observe({ subgraph: "users", http_response_status_code: "200" }, d);
  promActive.dec();
});

Deno.bench("OTel metrics SDK: one request's series", { group: "metrics" }, () => {
  const d = (i++ % 100) / 1000;
  otelActive.add(1);
  otelServer.record(d, serverAttrs);
  otelOps.add(1, {
    operation_name: "GetUser",
    operation_type: "query",
    outcome: "success",
    client_name: "web",
    client_version: "1.0",
  });
  otelClient.record(d, { subgraph: "users", "http.response.status_code": 200 });
  otelActive.add(-1);
});

Deno.bench("prom-client: exposition (4 series families)", { group: "scrape" }, async () => {
  _sink = await registry.metrics();
});

Deno.bench("OTel metrics SDK: collect (4 series families)", { group: "scrape" }, async () => {
  _sink = await reader.collect();
});
