/**
 * Issue 39: no response wrapper reads a body. With every observer on (access
 * logs, metrics, tracing, as `config.production.yaml` has them), a body the
 * facet streams reaches the client chunk by chunk while its source is still
 * open, whatever its content type or status, and a client that leaves cancels
 * the source at once. The facets are replaced by streams that never end on
 * their own, so a wrapper that buffers (`arrayBuffer()`, `text()`, a clone
 * read ahead) makes these tests fail at their deadline instead of hanging.
 */
import assert from "node:assert/strict";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { createHandler, type Facets } from "../../lib/http/mod.ts";
import { createLogger, silentLogger } from "../../lib/log/mod.ts";
import { buildState, type RouterState } from "../../lib/state/mod.ts";
import { createRouterMetrics, createTelemetry } from "../../lib/telemetry/mod.ts";
import { createOtelTracer } from "../../lib/telemetry/otel.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';
const composed = composeSupergraph([
  { name: "a", url: "http://a.invalid/graphql", sdl: `${LINK}\ntype Query { hello: String }` },
]);
if (!composed.ok) throw new Error("test supergraph does not compose");

/** How long a chunk that is already there may take to reach the client. */
const DEADLINE_MS = 2_000;

/** A body that sends one chunk and stays open until canceled. */
interface OpenStream {
  readonly stream: ReadableStream<Uint8Array>;
  /** Resolves with the cancel reason when the client side canceled the body. */
  readonly canceled: Promise<unknown>;
}

function openStream(first: Uint8Array): OpenStream {
  let resolve!: (reason: unknown) => void;
  const canceled = new Promise<unknown>((r) => resolve = r);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(first);
    },
    cancel(reason) {
      resolve(reason ?? "canceled");
    },
  });
  return { stream, canceled };
}

function within<T>(what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: not within ${DEADLINE_MS} ms (a wrapper holds the body)`)),
      DEADLINE_MS,
    );
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function setup(
  facet: (request: Request) => Promise<Response>,
): Promise<
  { handle: (r: Request) => Promise<Response>; lines: string[]; close: () => Promise<void> }
> {
  const lines: string[] = [];
  let state: RouterState | null = null;
  const metrics = createRouterMetrics({
    sources: {
      admission: () => state?.engine.admission ?? null,
      caches: () => state && { parse: state.engine.prepared, plan: state.engine.plans },
      memory: () => state?.engine.memory ?? null,
    },
  });
  const tracer = createOtelTracer({
    serviceName: "gw-router-test",
    serviceVersion: "0",
    samplingRate: 1,
    // Spans are counted, not sent: an exporter that answers at once.
    exporters: [{
      url: "http://otlp.invalid/v1/traces",
      headers: {},
      batchTimeoutMs: 60_000,
      exportTimeoutMs: 1_000,
      fetch: () => Promise.resolve(new Response(null, { status: 200 })),
    }],
  });
  const log = createLogger({ write: (line) => lines.push(line) });
  const telemetry = createTelemetry({
    metrics,
    tracer,
    log: () => log,
    accessLogs: () => true,
  });
  state = await buildState({
    config: parseConfig({ dev_mode: false, access_logs: { enabled: true } }),
    log: silentLogger,
    supergraphSdl: composed.ok ? composed.supergraphSdl : "",
    operationFiles: [],
    traceKeyPem: null,
    telemetry,
    fetch: () => Promise.reject(new Error("no subgraph in this test")),
  });
  const built = state;
  const facets: Partial<Facets> = { graphql: facet, connect: facet, mcp: facet };
  return {
    handle: createHandler(() => built, { facets }),
    lines,
    close: () => tracer.shutdown(),
  };
}

const STREAMED: readonly { readonly contentType: string; readonly status: number }[] = [
  { contentType: 'multipart/mixed;subscriptionSpec="1.0";boundary=graphql', status: 200 },
  { contentType: 'multipart/mixed; boundary="-"', status: 200 },
  { contentType: "application/connect+json", status: 200 },
  { contentType: "text/event-stream", status: 200 },
  { contentType: "application/json", status: 200 },
  { contentType: "application/octet-stream", status: 200 },
  // A stream that fails mid-way still goes out as it comes (Connect errors a stream with 200).
  { contentType: "application/json", status: 400 },
];

for (const path of ["/graphql", "/service.v1.GraphService/Watch", "/mcp"]) {
  for (const { contentType, status } of STREAMED) {
    Deno.test(`issue 39: ${path} streams a ${status} ${contentType} body through every observer, and a client leaving cancels it`, async () => {
      const first = new TextEncoder().encode("--graphql\r\n{}\r\n");
      const open = openStream(first);
      const { handle, lines, close } = await setup(() =>
        Promise.resolve(
          new Response(open.stream, { status, headers: { "content-type": contentType } }),
        )
      );
      try {
        const response = await within(
          "the response head",
          handle(
            new Request(`http://router.test${path}`, {
              method: "POST",
              headers: { "content-type": "application/json", "connect-protocol-version": "1" },
              body: "{}",
            }),
          ),
        );
        assert.equal(response.status, status);
        assert.equal(response.headers.get("content-type"), contentType);
        const reader = response.body!.getReader();
        const chunk = await within("the first chunk", reader.read());
        assert.deepEqual(chunk.value, first);
        // Not logged yet: the body has not ended.
        assert.equal(lines.filter((line) => line.includes('"msg":"request"')).length, 0);
        await reader.cancel("client left");
        await within("the source's cancel", open.canceled);
        const logged = lines.filter((line) => line.includes('"msg":"request"'));
        assert.equal(logged.length, 1, "one access log line when the body ended");
        assert.equal(JSON.parse(logged[0]!).bytes_out, first.byteLength);
      } finally {
        await open.stream.cancel().catch(() => {});
        await close();
      }
    });
  }
}

Deno.test("issue 39: a body that completes is logged once with the bytes that went out", async () => {
  const { handle, lines, close } = await setup(() =>
    Promise.resolve(
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new Uint8Array(5));
            controller.enqueue(new Uint8Array(7));
            controller.close();
          },
        }),
        { headers: { "content-type": "multipart/mixed; boundary=-" } },
      ),
    )
  );
  try {
    const response = await handle(
      new Request("http://router.test/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      }),
    );
    assert.equal((await response.arrayBuffer()).byteLength, 12);
    const logged = lines.filter((line) => line.includes('"msg":"request"'));
    assert.equal(logged.length, 1);
    assert.equal(JSON.parse(logged[0]!).bytes_out, 12);
  } finally {
    await close();
  }
});
