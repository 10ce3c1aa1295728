/**
 * The Prometheus listener: `GET <path>` answers the text exposition of the
 * registry on a listener of its own (`telemetry.metrics.prometheus`), so the
 * metrics never share a port, CORS or auth with client traffic.
 *
 * @module
 */
import type { RouterMetrics } from "./metrics.ts";

/** Prometheus text exposition format 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * The metrics handler: `GET`/`HEAD` on `path` → the exposition, other paths → 404.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createRouterMetrics } from "./metrics.ts";
 * import { metricsHandler } from "./metrics_server.ts";
 * const handle = metricsHandler(createRouterMetrics(), "/metrics");
 * const response = await handle(new Request("http://m/metrics"));
 * assert.match(await response.text(), /# TYPE http_server_request_duration_seconds histogram/);
 * assert.equal((await handle(new Request("http://m/other"))).status, 404);
 * ```
 * @param metrics The registry.
 * @param path The exposition path.
 * @returns The handler.
 */
export function metricsHandler(
  metrics: RouterMetrics,
  path: string,
): (request: Request) => Promise<Response> {
  return async (request) => {
    if (new URL(request.url).pathname !== path) {
      return new Response("Not found\n", { status: 404 });
    }
    if (request.method !== "GET" && request.method !== "HEAD") {
      return new Response("Method not allowed\n", { status: 405, headers: { allow: "GET, HEAD" } });
    }
    const text = await metrics.text();
    return new Response(request.method === "HEAD" ? null : text, {
      headers: { "content-type": PROMETHEUS_CONTENT_TYPE, "cache-control": "no-store" },
    });
  };
}

/** A running metrics listener. */
export interface MetricsServer {
  /** `http://host:port<path>`. */
  readonly url: string;
  /** Stops listening. */
  shutdown(): Promise<void>;
}

/**
 * Serves the registry on its own listener.
 * @param metrics The registry.
 * @param options Host, port (0 = a free one), path, `SO_REUSEPORT`.
 * @returns The running listener.
 */
export function serveMetrics(
  metrics: RouterMetrics,
  options: {
    readonly hostname: string;
    readonly port: number;
    readonly path: string;
    /** Bind with `SO_REUSEPORT`. @default {false} */
    readonly reusePort?: boolean;
  },
): MetricsServer {
  const server = Deno.serve(
    {
      hostname: options.hostname,
      port: options.port,
      onListen: () => {},
      ...(options.reusePort ? { reusePort: true } : {}),
    },
    metricsHandler(metrics, options.path),
  );
  const host = options.hostname.includes(":") ? `[${options.hostname}]` : options.hostname;
  return {
    url: `http://${host}:${server.addr.port}${options.path}`,
    shutdown: () => server.shutdown(),
  };
}
