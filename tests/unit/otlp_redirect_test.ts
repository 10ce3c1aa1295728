/** A collector that redirects to another server, which records what it gets. */
function redirecting() {
  const received: string[] = [];
  const elsewhere = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (request) => {
    received.push(request.headers.get("x-api-key") ?? "");
    return new Response(null, { status: 200 });
  });
  const collector = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () =>
      new Response(null, {
        status: 307,
        headers: { location: `http://localhost:${elsewhere.addr.port}/v1/collect` },
      }),
  );
  return {
    received,
    url: `http://127.0.0.1:${collector.addr.port}/v1/collect`,
    async close() {
      await collector.shutdown();
      await elsewhere.shutdown();
    },
  };
}

/**
 * OTLP exports carry the configured headers (often an API key): a collector's
 * redirect is not followed, so they never reach the host it names. Real sockets.
 */
import assert from "node:assert/strict";
import { createOtlpHttpExporter } from "../../lib/telemetry/otlp_exporter.ts";
import { startOtlpMetricsExport } from "../../lib/telemetry/otlp_metrics_exporter.ts";

Deno.test("OTLP trace export: a 307 from the collector fails the batch; the host it names receives nothing", async () => {
  const server = redirecting();
  try {
    const exporter = createOtlpHttpExporter({
      url: server.url,
      headers: { "x-api-key": "collector-secret" },
      timeoutMs: 5_000,
    });
    const result = await new Promise<{ code: number; error?: Error }>((resolve) =>
      exporter.export([], resolve)
    );
    assert.notEqual(result.code, 0, "the batch failed");
    assert.match(String(result.error?.message), /HTTP 307/);
    assert.deepEqual(server.received, []);
    await exporter.shutdown();
  } finally {
    await server.close();
  }
});

Deno.test("OTLP metrics export: a 307 from the collector is a failed export; the host it names receives nothing", async () => {
  const server = redirecting();
  const errors: unknown[] = [];
  try {
    const exporter = startOtlpMetricsExport({
      read: () => Promise.resolve([]),
      url: server.url,
      headers: { "x-api-key": "collector-secret" },
      intervalMs: 60_000,
      timeoutMs: 5_000,
      resource: {},
      onError: (error) => errors.push(error),
    });
    await exporter.shutdown();
    assert.match(String(errors[0]), /HTTP 307/);
    assert.deepEqual(server.received, []);
  } finally {
    await server.close();
  }
});
