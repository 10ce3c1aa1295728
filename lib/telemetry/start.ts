/**
 * The telemetry of a router process, from its config: the registry (when the
 * Prometheus listener or the playground's live view needs it), the
 * Prometheus listener, the access log switch, and `gw_router_info`.
 * The I/O edge of `lib/telemetry` (`startRouter` calls it).
 *
 * @module
 */
import denoJson from "../../deno.json" with { type: "json" };
import type { Config } from "../config/types.ts";
import { parseListenAddr } from "../config/mod.ts";
import { RouterError } from "../errors.ts";
import type { Logger } from "../log/mod.ts";
import { createRouterMetrics, type MetricSources } from "./metrics.ts";
import { type MetricsServer, serveMetrics } from "./metrics_server.ts";
import { createTelemetry, type Telemetry } from "./telemetry.ts";

/** Options for {@linkcode startTelemetry}. */
export interface StartTelemetryOptions {
  /** The config at start (the listener is not moved by reloads). */
  readonly config: Config;
  /** The current logger. */
  readonly log: () => Logger;
  /** Live values of the current state (admission, cache sizes). */
  readonly sources: MetricSources;
  /** The current `access_logs.enabled`. */
  readonly accessLogs: () => boolean;
  /**
   * Bind with `SO_REUSEPORT` (a restarted worker thread binds while the old
   * one drains). With workers > 1 the supervisor turns the listener off: each
   * isolate has its own registry, and a scrape would reach a random one.
   */
  readonly reusePort: boolean;
}

/** The running telemetry of a router process. */
export interface StartedTelemetry {
  /** What the state and the handler use. */
  readonly telemetry: Telemetry;
  /** The URL of the Prometheus exposition, or null when not listening. */
  url(): string | null;
  /** Binds the Prometheus listener (when enabled) and logs where. */
  listen(log: Logger): void;
  /** A state was built for this config and supergraph (`gw_router_info`). */
  serving(config: Config, supergraphSdl: string): Promise<void>;
  /** Stops the listener and flushes the exporters. */
  shutdown(): Promise<void>;
}

async function shortHash(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest).subarray(0, 8)].map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

/** The package version, for `gw_router_info`. */
const VERSION: string = denoJson.version;

/**
 * Starts the telemetry of a router process.
 * @param options Config, logger, live sources, access log switch.
 * @returns The telemetry and its controls.
 * @throws {RouterError} `CONFIG_INVALID` when the Prometheus `listen_addr` is malformed.
 */
export function startTelemetry(options: StartTelemetryOptions): StartedTelemetry {
  const { config } = options;
  const prometheus = config.telemetry.metrics.prometheus;
  const wantsRegistry = prometheus.enabled || config.playground.enabled;
  const metrics = wantsRegistry ? createRouterMetrics({ sources: options.sources }) : null;
  const telemetry = createTelemetry({
    metrics,
    log: options.log,
    accessLogs: options.accessLogs,
  });
  const address = parseListenAddr(prometheus.listen_addr);
  if (prometheus.enabled && address === undefined) {
    throw new RouterError(
      "CONFIG_INVALID",
      `Cannot read "telemetry.metrics.prometheus.listen_addr": expected "host:port", got "${prometheus.listen_addr}"`,
      { details: { path: "telemetry.metrics.prometheus.listen_addr" } },
    );
  }
  let server: MetricsServer | null = null;
  return {
    telemetry,
    url: () => server?.url ?? null,
    listen(log) {
      if (!prometheus.enabled || metrics === null || address === undefined) return;
      server = serveMetrics(metrics, {
        ...address,
        path: prometheus.path,
        reusePort: options.reusePort,
      });
      log.info("Prometheus metrics listening", { url: server.url });
    },
    async serving(next, supergraphSdl) {
      if (metrics === null) return;
      const [configHash, supergraphHash] = await Promise.all([
        shortHash(JSON.stringify(next)),
        shortHash(supergraphSdl),
      ]);
      metrics.setInfo({ configHash, supergraphHash, version: VERSION });
    },
    async shutdown() {
      const running = server;
      server = null;
      await running?.shutdown();
    },
  };
}
