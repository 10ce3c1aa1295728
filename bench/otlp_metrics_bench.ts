/**
 * Cost of one OTLP metrics export, off the request path (once per
 * `telemetry.metrics.otlp.interval`): reading the router's registry with 50
 * operation names × 3 outcomes, 4 routes and 3 subgraphs recorded, converting
 * it ({@linkcode toResourceMetrics}) and serializing it to protobuf.
 *
 * Run: `deno bench -A bench/otlp_metrics_bench.ts`
 */
import { ProtobufMetricsSerializer } from "@opentelemetry/otlp-transformer";
import { createRouterMetrics, toResourceMetrics } from "../lib/telemetry/mod.ts";

let _sink: unknown;
const metrics = createRouterMetrics();
const outcomes = ["success", "graphql_error", "request_error"] as const;
for (let i = 0; i < 50; i += 1) {
  for (const outcome of outcomes) {
    metrics.operation({
      name: `Operation${i}`,
      type: "query",
      outcome,
      errorCodes: outcome === "success" ? [] : ["DOWNSTREAM_SERVICE_ERROR"],
      clientName: "web",
      clientVersion: "1.0",
    });
  }
}
for (const route of ["/graphql", "/mcp", "/connect", "unmatched"]) {
  metrics.requestStarted("POST");
  metrics.requestFinished({ method: "POST", route, status: 200, seconds: 0.01 });
}
for (const subgraph of ["accounts", "products", "reviews"]) {
  metrics.subgraphFetch({ subgraph, seconds: 0.005, status: 200, outcome: "success" });
}
const OPTIONS = { resource: { "service.name": "gw-router" }, startMs: 0, nowMs: 15_000 };
const snapshot = await metrics.registry.getMetricsAsJSON();

Deno.bench("OTLP metrics: read the registry", { group: "otlp", baseline: true }, async () => {
  _sink = await metrics.registry.getMetricsAsJSON();
});
Deno.bench("OTLP metrics: convert a snapshot", { group: "otlp" }, () => {
  _sink = toResourceMetrics(snapshot, OPTIONS);
});
Deno.bench("OTLP metrics: read + convert + serialize (one export)", { group: "otlp" }, async () => {
  const read = await metrics.registry.getMetricsAsJSON();
  _sink = ProtobufMetricsSerializer.serializeRequest(toResourceMetrics(read, OPTIONS));
});
const bytes = ProtobufMetricsSerializer.serializeRequest(toResourceMetrics(snapshot, OPTIONS));
console.log(`one export body: ${bytes?.byteLength} bytes`);
