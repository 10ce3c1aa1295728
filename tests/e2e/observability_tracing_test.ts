/**
 * Issue 16: OpenTelemetry traces. An OTLP/HTTP receiver in the test decodes
 * the router's exports with the OpenTelemetry project's generated protobuf
 * definitions (npm `@opentelemetry/otlp-transformer@0.57.2`, generated from
 * opentelemetry-proto) and checks the trace tree, the propagated
 * `traceparent`/`baggage`, and the sampler.
 */
import assert from "node:assert/strict";
import root from "@opentelemetry/otlp-proto-0.57/build/src/generated/root.js";
import {
  connect,
  graphql,
  mcp,
  mcpSession,
  type ObservabilityFixture,
  startObservabilityFixture,
} from "./_observability_fixture.ts";

/** A decoded span (ids in hex). */
interface ExportedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP SpanKind: 2 server, 3 client, 1 internal. */
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
}

interface Receiver {
  readonly url: string;
  readonly spans: ExportedSpan[];
  /** Content types of the export requests. */
  readonly contentTypes: string[];
  close(): Promise<void>;
}

// deno-lint-ignore no-explicit-any
const proto = (root as any).opentelemetry.proto;

function hex(bytes: Uint8Array | undefined): string {
  return bytes ? [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("") : "";
}

function attributeValue(value: Record<string, unknown>): unknown {
  for (const key of ["stringValue", "boolValue", "intValue", "doubleValue"]) {
    if (value[key] !== undefined && value[key] !== null) return value[key];
  }
  return null;
}

function startReceiver(): Receiver {
  const spans: ExportedSpan[] = [];
  const contentTypes: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      contentTypes.push(request.headers.get("content-type") ?? "");
      const body = new Uint8Array(await request.arrayBuffer());
      const decoded = proto.collector.trace.v1.ExportTraceServiceRequest.decode(body);
      for (const resourceSpans of decoded.resourceSpans) {
        for (const scopeSpans of resourceSpans.scopeSpans) {
          for (const span of scopeSpans.spans) {
            const attributes: Record<string, unknown> = {};
            for (const a of span.attributes) attributes[a.key] = attributeValue(a.value);
            spans.push({
              traceId: hex(span.traceId),
              spanId: hex(span.spanId),
              parentSpanId: hex(span.parentSpanId),
              name: span.name,
              kind: span.kind,
              attributes,
            });
          }
        }
      }
      return new Response(
        proto.collector.trace.v1.ExportTraceServiceResponse.encode({}).finish(),
        { headers: { "content-type": "application/x-protobuf" } },
      );
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1/traces`,
    spans,
    contentTypes,
    close: () => server.shutdown(),
  };
}

/** Runs `body` with a receiver and a router exporting to it; the router is closed (spans flushed) before `check`. */
async function withTracing(
  samplingRate: number,
  body: (fixture: ObservabilityFixture) => Promise<void>,
  check: (receiver: Receiver, fixture: ObservabilityFixture) => void,
): Promise<void> {
  const receiver = startReceiver();
  try {
    const fixture = await startObservabilityFixture({
      telemetry: {
        metrics: { prometheus: { enabled: true, listen_addr: "127.0.0.1:0" } },
        tracing: {
          enabled: true,
          sampling_rate: samplingRate,
          exporters: [{ endpoint: receiver.url, batch_timeout: "50ms" }],
        },
      },
    });
    try {
      await body(fixture);
    } finally {
      await fixture.close(); // flushes the batch processor
    }
    check(receiver, fixture);
  } finally {
    await receiver.close();
  }
}

function traceparentOf(
  headers: Headers | undefined,
): { traceId: string; parentId: string; flags: string } {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(
    headers?.get("traceparent") ?? "",
  );
  assert.ok(match, `a W3C traceparent, got ${headers?.get("traceparent")}`);
  return { traceId: match[1] ?? "", parentId: match[2] ?? "", flags: match[3] ?? "" };
}

Deno.test("issue 16: one trace per request; parse/validate, plan and subgraph spans are children of the request span", async () => {
  await withTracing(1, async (fixture) => {
    await graphql(fixture, { query: "query GetHello { hello }" }, { "x-request-id": "trace-1" });
    await graphql(fixture, { query: "query GetHello { hello }" }, { "x-request-id": "trace-2" });
  }, (receiver, fixture) => {
    assert.deepEqual([...new Set(receiver.contentTypes)], ["application/x-protobuf"]);
    const servers = receiver.spans.filter((s) => s.kind === 2);
    assert.deepEqual(servers.map((s) => s.attributes["gw.request_id"]).sort(), [
      "trace-1",
      "trace-2",
    ]);
    assert.equal(new Set(servers.map((s) => s.traceId)).size, 2, "a trace per request");
    for (const server of servers) {
      assert.equal(server.name, "POST /graphql");
      assert.equal(server.parentSpanId, "");
      assert.equal(server.attributes["graphql.operation.name"], "GetHello");
      assert.equal(server.attributes["graphql.operation.type"], "query");
      assert.equal(String(server.attributes["http.response.status_code"]), "200");
      const children = receiver.spans.filter((s) => s.parentSpanId === server.spanId);
      assert.deepEqual(children.map((s) => s.name).sort(), [
        "POST shop",
        "graphql.parse_validate",
        "plan",
      ]);
      for (const child of children) assert.equal(child.traceId, server.traceId);
      const fetch = children.find((s) => s.name === "POST shop");
      assert.equal(fetch?.kind, 3);
      assert.equal(fetch?.attributes["gw.subgraph.name"], "shop");
      // Every span of the trace hangs off the request span.
      assert.equal(receiver.spans.filter((s) => s.traceId === server.traceId).length, 4);
    }
    // The subgraph saw the fetch span's context: same trace id, the client span as parent.
    const fetchSpans = receiver.spans.filter((s) => s.name === "POST shop");
    const seen = fixture.shopHeaders.map((h) => traceparentOf(h));
    assert.deepEqual(
      seen.map((t) => `${t.traceId}/${t.parentId}/${t.flags}`).sort(),
      fetchSpans.map((s) => `${s.traceId}/${s.spanId}/01`).sort(),
    );
  });
});

Deno.test("issue 16: an incoming traceparent is continued and baggage reaches the subgraph", async () => {
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  const parent = "00f067aa0ba902b7";
  await withTracing(0, async (fixture) => {
    // sampling_rate 0 samples no new trace, but a sampled parent is followed (parent-based).
    await graphql(fixture, { query: "{ hello }" }, {
      traceparent: `00-${traceId}-${parent}-01`,
      baggage: "tenant=t1",
    });
  }, (receiver, fixture) => {
    const server = receiver.spans.find((s) => s.kind === 2);
    assert.equal(server?.traceId, traceId);
    assert.equal(server?.parentSpanId, parent);
    const sent = traceparentOf(fixture.shopHeaders[0]);
    assert.equal(sent.traceId, traceId);
    assert.equal(fixture.shopHeaders[0]?.get("baggage"), "tenant=t1");
  });
});

Deno.test("issue 16: the sampler is respected: rate 0 exports nothing; an unsampled parent is passed on, not recorded", async () => {
  const traceId = "0af7651916cd43dd8448eb211c80319c";
  await withTracing(0, async (fixture) => {
    await graphql(fixture, { query: "{ hello }" });
  }, (receiver, fixture) => {
    assert.equal(receiver.spans.length, 0);
    // An unsampled request without a caller's context sends no trace context either.
    assert.equal(fixture.shopHeaders[0]?.get("traceparent"), null);
  });
  await withTracing(1, async (fixture) => {
    await graphql(fixture, { query: "{ hello }" }, {
      traceparent: `00-${traceId}-b7ad6b7169203331-00`,
    });
  }, (receiver, fixture) => {
    assert.equal(receiver.spans.length, 0, "a parent that is not sampled is followed");
    const sent = traceparentOf(fixture.shopHeaders[0]);
    assert.equal(sent.traceId, traceId);
    assert.equal(sent.flags, "00");
  });
});

Deno.test("issue 16: Connect and MCP calls get request spans with their method and tool, and subgraph children", async () => {
  await withTracing(1, async (fixture) => {
    await connect(fixture, "GetHello");
    const session = await mcpSession(fixture);
    await mcp(fixture, {
      id: 2,
      method: "tools/call",
      params: { name: "execute_operation_get_hello", arguments: {} },
    }, session);
  }, (receiver) => {
    const servers = receiver.spans.filter((s) => s.kind === 2);
    const rpc = servers.find((s) => s.attributes["rpc.method"] === "GetHello");
    assert.equal(rpc?.attributes["rpc.system"], "connect_rpc");
    assert.equal(rpc?.name, "POST /service.v1.GraphService/{method}");
    const tool = servers.find((s) =>
      s.attributes["gen_ai.tool.name"] === "execute_operation_get_hello"
    );
    assert.equal(tool?.attributes["mcp.method.name"], "tools/call");
    for (const server of [rpc, tool]) {
      const fetch = receiver.spans.find((s) =>
        s.parentSpanId === server?.spanId && s.name === "POST shop"
      );
      assert.equal(fetch?.traceId, server?.traceId);
    }
  });
});
