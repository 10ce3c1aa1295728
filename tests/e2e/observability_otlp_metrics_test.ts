/**
 * Issue 16: the metrics registry pushed over OTLP/HTTP. An OTLP receiver in
 * the test decodes the router's exports with the OpenTelemetry project's
 * generated protobuf definitions (npm `@opentelemetry/otlp-transformer@0.57.2`,
 * generated from opentelemetry-proto) and checks the series the Prometheus
 * exposition shows: the request-duration histogram and a `gw_router_*` counter.
 */
import assert from "node:assert/strict";
import root from "@opentelemetry/otlp-proto-0.57/build/src/generated/root.js";
import { graphql, startObservabilityFixture } from "./_observability_fixture.ts";

// deno-lint-ignore no-explicit-any
const proto = (root as any).opentelemetry.proto;

/** A decoded OTLP metric (the fields the tests read). */
interface DecodedMetric {
  readonly name: string;
  readonly unit: string;
  // deno-lint-ignore no-explicit-any
  readonly sum?: any;
  // deno-lint-ignore no-explicit-any
  readonly histogram?: any;
  // deno-lint-ignore no-explicit-any
  readonly gauge?: any;
}

interface Receiver {
  readonly url: string;
  /** Every export request: headers and decoded metrics. */
  readonly exports: {
    headers: Headers;
    resource: Record<string, unknown>;
    metrics: DecodedMetric[];
  }[];
  close(): Promise<void>;
}

function attributesOf(list: { key: string; value: Record<string, unknown> }[]) {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list) {
    out[key] = value.stringValue ?? value.intValue ?? value.doubleValue ?? value.boolValue;
  }
  return out;
}

function startReceiver(): Receiver {
  const exports: Receiver["exports"] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const body = new Uint8Array(await request.arrayBuffer());
      const decoded = proto.collector.metrics.v1.ExportMetricsServiceRequest.decode(body);
      for (const resourceMetrics of decoded.resourceMetrics) {
        exports.push({
          headers: request.headers,
          resource: attributesOf(resourceMetrics.resource.attributes),
          metrics: resourceMetrics.scopeMetrics.flatMap((s: { metrics: DecodedMetric[] }) =>
            s.metrics
          ),
        });
      }
      return new Response(
        proto.collector.metrics.v1.ExportMetricsServiceResponse.encode({}).finish(),
        { headers: { "content-type": "application/x-protobuf" } },
      );
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1/metrics`,
    exports,
    close: () => server.shutdown(),
  };
}

Deno.test("issue 16: the registry is exported over OTLP/HTTP protobuf: the request-duration histogram and gw_router_operations_total with their values", async () => {
  const receiver = startReceiver();
  try {
    const fixture = await startObservabilityFixture({
      telemetry: {
        metrics: {
          otlp: {
            enabled: true,
            endpoint: receiver.url,
            headers: ["x-api-key=otlp-key"],
            // The periodic export runs during the test; the last one is sent on shutdown.
            interval: "50ms",
          },
        },
      },
    });
    try {
      for (let i = 0; i < 3; i += 1) {
        const { status } = await graphql(fixture, { query: "query GetHello { hello }" });
        assert.equal(status, 200);
      }
    } finally {
      await fixture.close(); // stops the timer and sends the last snapshot
    }
    const last = receiver.exports.at(-1);
    assert.ok(last, "at least one export reached the receiver");
    assert.equal(last.headers.get("content-type"), "application/x-protobuf");
    assert.equal(last.headers.get("x-api-key"), "otlp-key");
    assert.equal(last.resource["service.name"], "gw-router");

    const operations = last.metrics.find((m) => m.name === "gw_router_operations_total");
    assert.ok(operations?.sum, "gw_router_operations_total is a Sum");
    assert.equal(operations.sum.isMonotonic, true);
    assert.equal(operations.sum.aggregationTemporality, 2); // CUMULATIVE
    const hello = operations.sum.dataPoints.filter(
      (p: { attributes: { key: string; value: Record<string, unknown> }[] }) => {
        const attributes = attributesOf(p.attributes);
        return attributes.operation_name === "GetHello" && attributes.outcome === "success";
      },
    );
    assert.equal(hello.reduce((n: number, p: { asDouble: number }) => n + p.asDouble, 0), 3);

    const duration = last.metrics.find((m) => m.name === "http_server_request_duration_seconds");
    assert.ok(duration?.histogram, "http.server.request.duration is a Histogram");
    assert.equal(duration.unit, "s");
    assert.equal(duration.histogram.aggregationTemporality, 2);
    const graphqlPoints = duration.histogram.dataPoints.filter(
      (p: { attributes: { key: string; value: Record<string, unknown> }[] }) =>
        attributesOf(p.attributes).http_route === "/graphql",
    );
    const count = graphqlPoints.reduce(
      (n: number, p: { count: unknown }) => n + Number(p.count),
      0,
    );
    assert.equal(count, 3);
    for (const point of graphqlPoints) {
      assert.equal(point.bucketCounts.length, point.explicitBounds.length + 1);
      assert.equal(
        point.bucketCounts.reduce((n: number, c: unknown) => n + Number(c), 0),
        Number(point.count),
      );
    }
  } finally {
    await receiver.close();
  }
});
