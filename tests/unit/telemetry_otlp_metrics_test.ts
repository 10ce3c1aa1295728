/**
 * Issue 16: the metrics registry exported as OTLP. The conversion of
 * prom-client's snapshot is checked on its own and through the official
 * serializer, decoded with the opentelemetry-proto definitions; the exporter's
 * guards (no throw into the router, timeout, last export on shutdown) with an
 * injected `fetch`.
 */
import assert from "node:assert/strict";
import { ProtobufMetricsSerializer } from "@opentelemetry/otlp-transformer";
import root from "@opentelemetry/otlp-proto-0.57/build/src/generated/root.js";
import { AggregationTemporality, DataPointType } from "@opentelemetry/sdk-metrics";
import { Counter, Gauge, Histogram, Registry, Summary } from "prom-client";
import { parseConfig } from "../../lib/config/mod.ts";
import { startOtlpMetricsExport, toResourceMetrics } from "../../lib/telemetry/mod.ts";
import { metricsExporter } from "../../lib/telemetry/start.ts";

// deno-lint-ignore no-explicit-any
const proto = (root as any).opentelemetry.proto;
const OPTIONS = { resource: { "service.name": "gw-router" }, startMs: 1_000, nowMs: 61_250 };

function sampleRegistry(): Registry {
  const registry = new Registry();
  const counter = new Counter({
    name: "gw_router_operations_total",
    help: "Operations.",
    labelNames: ["operation_type", "outcome"],
    registers: [registry],
  });
  counter.inc({ operation_type: "query", outcome: "success" }, 3);
  counter.inc({ operation_type: "mutation", outcome: "error" });
  new Gauge({ name: "gw_router_cache_entries", help: "Entries.", registers: [registry] }).set(7);
  const histogram = new Histogram({
    name: "http_server_request_duration_seconds",
    help: "Durations.",
    labelNames: ["http_request_method"],
    buckets: [0.1, 1],
    registers: [registry],
  });
  for (const seconds of [0.05, 0.5, 0.5, 3]) {
    histogram.observe({ http_request_method: "POST" }, seconds);
  }
  histogram.observe({ http_request_method: "GET" }, 0.05);
  new Summary({ name: "some_summary", help: "A summary.", registers: [registry] }).observe(1);
  return registry;
}

Deno.test("issue 16: a counter becomes a cumulative monotonic Sum with the same name, labels and value", async () => {
  const [scope] =
    toResourceMetrics(await sampleRegistry().getMetricsAsJSON(), OPTIONS).scopeMetrics;
  const metric = scope?.metrics.find((m) => m.descriptor.name === "gw_router_operations_total");
  assert.ok(metric && metric.dataPointType === DataPointType.SUM);
  assert.equal(metric.isMonotonic, true);
  assert.equal(metric.aggregationTemporality, AggregationTemporality.CUMULATIVE);
  assert.deepEqual(
    metric.dataPoints.map((p) => [p.attributes, p.value]),
    [
      [{ operation_type: "query", outcome: "success" }, 3],
      [{ operation_type: "mutation", outcome: "error" }, 1],
    ],
  );
  assert.deepEqual(metric.dataPoints[0]?.startTime, [1, 0]);
  assert.deepEqual(metric.dataPoints[0]?.endTime, [61, 250_000_000]);
});

Deno.test("issue 16: a gauge becomes a Gauge; a summary (no OTLP equivalent) is left out", async () => {
  const [scope] =
    toResourceMetrics(await sampleRegistry().getMetricsAsJSON(), OPTIONS).scopeMetrics;
  const gauge = scope?.metrics.find((m) => m.descriptor.name === "gw_router_cache_entries");
  assert.ok(gauge && gauge.dataPointType === DataPointType.GAUGE);
  assert.equal(gauge.dataPoints[0]?.value, 7);
  assert.equal(scope?.metrics.some((m) => m.descriptor.name === "some_summary"), false);
});

Deno.test("issue 16: a histogram's cumulative `le` buckets become per-bucket counts over the finite bounds, one point per label set without `le`", async () => {
  const [scope] =
    toResourceMetrics(await sampleRegistry().getMetricsAsJSON(), OPTIONS).scopeMetrics;
  const metric = scope?.metrics.find((m) =>
    m.descriptor.name === "http_server_request_duration_seconds"
  );
  assert.ok(metric && metric.dataPointType === DataPointType.HISTOGRAM);
  assert.equal(metric.aggregationTemporality, AggregationTemporality.CUMULATIVE);
  assert.equal(metric.descriptor.unit, "s");
  const post = metric.dataPoints.find((p) => p.attributes.http_request_method === "POST");
  assert.deepEqual(post?.attributes, { http_request_method: "POST" });
  assert.deepEqual(post?.value.buckets, { boundaries: [0.1, 1], counts: [1, 2, 1] });
  assert.equal(post?.value.count, 4);
  assert.equal(post?.value.sum, 4.05);
  const get = metric.dataPoints.find((p) => p.attributes.http_request_method === "GET");
  assert.deepEqual(get?.value.buckets, { boundaries: [0.1, 1], counts: [1, 0, 0] });
});

Deno.test("issue 16: the converted snapshot serializes with the official serializer and decodes with opentelemetry-proto", async () => {
  const resourceMetrics = toResourceMetrics(await sampleRegistry().getMetricsAsJSON(), OPTIONS);
  const body = ProtobufMetricsSerializer.serializeRequest(resourceMetrics);
  assert.ok(body);
  const decoded = proto.collector.metrics.v1.ExportMetricsServiceRequest.decode(body);
  const [resource] = decoded.resourceMetrics;
  assert.equal(resource.resource.attributes[0].value.stringValue, "gw-router");
  const metrics = resource.scopeMetrics[0].metrics;
  const counter = metrics.find((m: { name: string }) => m.name === "gw_router_operations_total");
  assert.equal(counter.sum.isMonotonic, true);
  assert.equal(counter.sum.aggregationTemporality, 2); // CUMULATIVE
  assert.equal(counter.sum.dataPoints[0].asDouble, 3);
  const histogram = metrics.find((m: { name: string }) =>
    m.name === "http_server_request_duration_seconds"
  );
  const point = histogram.histogram.dataPoints[0];
  assert.deepEqual(point.explicitBounds, [0.1, 1]);
  assert.deepEqual(point.bucketCounts.map(Number), [1, 2, 1]);
  assert.equal(Number(point.count), 4);
});

function recordingFetch(answer: () => Promise<Response>) {
  const calls: { url: string; init: RequestInit }[] = [];
  return {
    calls,
    fetch: (url: string, init: RequestInit) => {
      calls.push({ url, init });
      return answer();
    },
  };
}

Deno.test("issue 16: a network error of the OTLP metrics export goes to onError and never rejects", async () => {
  const errors: unknown[] = [];
  const sender = recordingFetch(() => Promise.reject(new TypeError("connection refused")));
  const exporter = startOtlpMetricsExport({
    read: () => sampleRegistry().getMetricsAsJSON(),
    url: "http://collector.test/v1/metrics",
    headers: { "x-api-key": "k1" },
    intervalMs: 3_600_000,
    timeoutMs: 1_234,
    resource: {},
    onError: (error) => errors.push(error),
    fetch: sender.fetch,
  });
  await exporter.exportNow(); // resolves, does not reject
  await exporter.shutdown();
  assert.equal(errors.length, 2);
  assert.match(String(errors[0]), /connection refused/);
  const [call] = sender.calls;
  assert.equal(call?.url, "http://collector.test/v1/metrics");
  assert.equal(call?.init.method, "POST");
  const headers = new Headers(call?.init.headers);
  assert.equal(headers.get("x-api-key"), "k1");
  assert.equal(headers.get("content-type"), "application/x-protobuf");
  assert.ok(call?.init.signal instanceof AbortSignal, "the export is bounded by a timeout");
});

Deno.test("issue 16: a registry read that throws goes to onError, not into the router", async () => {
  const errors: unknown[] = [];
  const sender = recordingFetch(() => Promise.resolve(new Response(null)));
  const exporter = startOtlpMetricsExport({
    read: () => Promise.reject(new Error("collect failed")),
    url: "http://collector.test/v1/metrics",
    headers: {},
    intervalMs: 3_600_000,
    timeoutMs: 1_000,
    resource: {},
    onError: (error) => errors.push(error),
    fetch: sender.fetch,
  });
  await exporter.shutdown();
  assert.match(String(errors[0]), /collect failed/);
  assert.equal(sender.calls.length, 0);
});

Deno.test("issue 16: a hung collector is cut off by the export timeout", async () => {
  const errors: unknown[] = [];
  const exporter = startOtlpMetricsExport({
    read: () => Promise.resolve([]),
    url: "http://collector.test/v1/metrics",
    headers: {},
    intervalMs: 3_600_000,
    timeoutMs: 20,
    resource: {},
    onError: (error) => errors.push(error),
    fetch: (_url, init) =>
      new Promise((_resolve, reject) =>
        init.signal?.addEventListener("abort", () => reject(init.signal?.reason))
      ),
  });
  await exporter.shutdown();
  assert.equal((errors[0] as Error).name, "TimeoutError");
});

Deno.test("issue 16: shutdown sends one last snapshot, and only once", async () => {
  const sender = recordingFetch(() => Promise.resolve(new Response(null)));
  const exporter = startOtlpMetricsExport({
    read: () => sampleRegistry().getMetricsAsJSON(),
    url: "http://collector.test/v1/metrics",
    headers: {},
    intervalMs: 3_600_000,
    timeoutMs: 1_000,
    resource: {},
    onError: (error) => assert.fail(String(error)),
    fetch: sender.fetch,
  });
  await exporter.shutdown();
  await exporter.shutdown();
  assert.equal(sender.calls.length, 1);
  const body = sender.calls[0]?.init.body as Uint8Array;
  const decoded = proto.collector.metrics.v1.ExportMetricsServiceRequest.decode(body);
  assert.ok(decoded.resourceMetrics[0].scopeMetrics[0].metrics.length > 0);
});

Deno.test("issue 16: the OTLP metrics endpoint: the config's wins, then OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, then OTEL_EXPORTER_OTLP_ENDPOINT + /v1/metrics; none: no exporter", () => {
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://generic:4318",
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://metrics:4318/custom",
    OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=generic",
    OTEL_EXPORTER_OTLP_METRICS_HEADERS: "x-api-key=metrics",
  };
  const configured = parseConfig({
    telemetry: {
      metrics: {
        otlp: { enabled: true, endpoint: "http://config:4318/v1/metrics", headers: ["a=b"] },
      },
    },
  });
  assert.deepEqual(metricsExporter(configured, env), {
    url: "http://config:4318/v1/metrics",
    headers: { a: "b" },
  });
  const bare = parseConfig({ telemetry: { metrics: { otlp: { enabled: true } } } });
  assert.deepEqual(metricsExporter(bare, env), {
    url: "http://metrics:4318/custom",
    headers: { "x-api-key": "metrics" },
  });
  assert.equal(
    metricsExporter(bare, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://generic:4318" })?.url,
    "http://generic:4318/v1/metrics",
  );
  assert.equal(metricsExporter(bare, {}), null);
});
