/**
 * The telemetry of a router process, from its config: the registry (when the
 * Prometheus listener or the playground's live view needs it), the
 * Prometheus listener, the access log switch, and `gw_router_info`.
 * The I/O edge of `lib/telemetry` (`startRouter` calls it).
 *
 * @module
 */
import denoJson from "../../deno.json" with { type: "json" };
import type { Config } from "../config/mod.ts";
import { parseListenAddr } from "../config/mod.ts";
import { listenError, RouterError } from "../errors.ts";
import type { Logger } from "../log/mod.ts";
import { createLiveHistory, type LiveHistory } from "./live_view.ts";
import type { MetricSources } from "./metrics.ts";
import { type MetricsServer, serveMetrics } from "./metrics_server.ts";
import type { OtlpExporterOptions } from "./otel.ts";
import { parseHeaderList } from "./otlp_headers.ts";
import type { OtlpMetricsExport, OtlpMetricsExportOptions } from "./otlp_metrics_exporter.ts";
import { createTelemetry, type Telemetry } from "./telemetry.ts";
import { type TimerHandle, unrefTimer } from "../timers.ts";
import type { Tracer } from "./tracing.ts";

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
  /** The environment (`OTEL_*` variables). */
  readonly env: Readonly<Record<string, string | undefined>>;
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

/** How often the Router page's history samples the registry, ms. */
const LIVE_SAMPLE_MS = 2_000;

/** The package version, for `gw_router_info`. */
const VERSION: string = denoJson.version;

/**
 * Starts the telemetry of a router process.
 * @param options Config, logger, live sources, access log switch.
 * @returns The telemetry and its controls.
 * @throws {RouterError} `CONFIG_INVALID` when the Prometheus `listen_addr` is malformed.
 */
export async function startTelemetry(options: StartTelemetryOptions): Promise<StartedTelemetry> {
  const { config } = options;
  const prometheus = config.telemetry.metrics.prometheus;
  const wantsRegistry = prometheus.enabled || config.playground.enabled ||
    config.telemetry.metrics.otlp.enabled;
  // Checked before anything starts: a refused config leaves no exporter or timer behind.
  const address = parseListenAddr(prometheus.listen_addr);
  if (prometheus.enabled && address === undefined) {
    throw new RouterError(
      "CONFIG_INVALID",
      `Cannot read "telemetry.metrics.prometheus.listen_addr": expected "host:port", got "${prometheus.listen_addr}"`,
      { details: { path: "telemetry.metrics.prometheus.listen_addr" } },
    );
  }
  // prom-client and the OpenTelemetry SDK are loaded only when configured: a
  // router without them keeps their code and objects out of its heap.
  const metrics = wantsRegistry
    ? (await import("./metrics.ts")).createRouterMetrics({ sources: options.sources })
    : null;
  const tracer = await startTracer(config, options.env, options.log());
  const liveHistory: LiveHistory | null = metrics === null || !config.playground.enabled
    ? null
    : createLiveHistory({ read: () => metrics.registry.getMetricsAsJSON(), now: Date.now });
  const telemetry = createTelemetry({
    metrics,
    log: options.log,
    accessLogs: options.accessLogs,
    tracer,
    liveHistory,
  });
  // The Router page shows the last minutes even when it was just opened.
  let sampler: TimerHandle | undefined;
  if (liveHistory !== null) {
    const id = setInterval(() => void liveHistory.sample(), LIVE_SAMPLE_MS);
    unrefTimer(id);
    sampler = id;
  }
  const otlpMetrics = metrics === null ? null : await startMetricsExport(
    config,
    { env: options.env, log: options.log, read: () => metrics.registry.getMetricsAsJSON() },
  );
  let server: MetricsServer | null = null;
  return {
    telemetry,
    url: () => server?.url ?? null,
    listen(log) {
      if (!prometheus.enabled || metrics === null || address === undefined) return;
      try {
        server = serveMetrics(metrics, {
          ...address,
          path: prometheus.path,
          reusePort: options.reusePort,
        });
      } catch (error) {
        throw listenError(error, {
          key: "telemetry.metrics.prometheus.listen_addr",
          address: prometheus.listen_addr,
        });
      }
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
      clearInterval(sampler);
      const running = server;
      server = null;
      // A collector that is away at shutdown loses the last batch, as any
      // failed export does: the router's own shutdown still succeeds.
      const lost = (what: string) => (error: unknown) =>
        options.log().warn(`The last ${what} could not be exported at shutdown`, {
          error: String(error),
        });
      await Promise.all([
        running?.shutdown(),
        tracer?.shutdown().catch(lost("spans")),
        otlpMetrics?.shutdown().catch(lost("metrics")),
      ]);
    },
  };
}

/**
 * The OTLP exporters of a config: `telemetry.tracing.exporters`, or, when that
 * is empty, the standard `OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT` and `_HEADERS`.
 *
 * @example The environment fills in when the config has no exporter
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig } from "../config/mod.ts";
 * import { tracingExporters } from "./start.ts";
 * const exporters = tracingExporters(parseConfig({}), {
 *   OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
 *   OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=k1",
 * });
 * assert.equal(exporters[0]?.url, "http://collector:4318/v1/traces");
 * assert.deepEqual(exporters[0]?.headers, { "x-api-key": "k1" });
 * ```
 * @param config The config.
 * @param env The environment.
 * @returns The exporters.
 */
export function tracingExporters(
  config: Config,
  env: Readonly<Record<string, string | undefined>>,
): OtlpExporterOptions[] {
  const tracing = config.telemetry.tracing;
  if (tracing.exporters.length > 0) {
    return tracing.exporters.map((e) => ({
      url: e.endpoint,
      headers: parseHeaderList(e.headers),
      batchTimeoutMs: e.batch_timeout_ms,
      exportTimeoutMs: e.export_timeout_ms,
    }));
  }
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ||
    (base ? `${base.replace(/\/+$/, "")}/v1/traces` : "");
  if (url === "") return [];
  const headers = env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS ?? "";
  return [{
    url,
    headers: parseHeaderList(headers.split(",")),
    batchTimeoutMs: Number(env.OTEL_BSP_SCHEDULE_DELAY) || 5_000,
    exportTimeoutMs: Number(env.OTEL_EXPORTER_OTLP_TIMEOUT) || 10_000,
  }];
}

/**
 * The OTLP metrics URL and headers of a config: `telemetry.metrics.otlp`, the
 * endpoint falling back on `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, then
 * `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/metrics`; the headers on
 * `OTEL_EXPORTER_OTLP_(METRICS_)HEADERS` when the config lists none.
 *
 * @example The environment fills in when the config has no endpoint
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig } from "../config/mod.ts";
 * import { metricsExporter } from "./start.ts";
 * const config = parseConfig({ telemetry: { metrics: { otlp: { enabled: true } } } });
 * const exporter = metricsExporter(config, {
 *   OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
 *   OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=k1",
 * });
 * assert.equal(exporter?.url, "http://collector:4318/v1/metrics");
 * assert.deepEqual(exporter?.headers, { "x-api-key": "k1" });
 * ```
 * @param config The config.
 * @param env The environment.
 * @returns The URL and headers, or null when there is no endpoint.
 */
export function metricsExporter(
  config: Config,
  env: Readonly<Record<string, string | undefined>>,
): { url: string; headers: Record<string, string> } | null {
  const otlp = config.telemetry.metrics.otlp;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url = otlp.endpoint || env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ||
    (base ? `${base.replace(/\/+$/, "")}/v1/metrics` : "");
  if (url === "") return null;
  const headers = otlp.headers.length > 0
    ? otlp.headers
    : (env.OTEL_EXPORTER_OTLP_METRICS_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS ?? "").split(",");
  return { url, headers: parseHeaderList(headers) };
}

async function startMetricsExport(
  config: Config,
  io: {
    env: Readonly<Record<string, string | undefined>>;
    log: () => Logger;
    read: OtlpMetricsExportOptions["read"];
  },
): Promise<OtlpMetricsExport | null> {
  const otlp = config.telemetry.metrics.otlp;
  if (!otlp.enabled) return null;
  const exporter = metricsExporter(config, io.env);
  if (exporter === null) {
    io.log().warn(
      "telemetry.metrics.otlp.enabled is true but no endpoint is configured (telemetry.metrics.otlp.endpoint or OTEL_EXPORTER_OTLP_ENDPOINT): OTLP metrics are off",
    );
    return null;
  }
  const { startOtlpMetricsExport } = await import("./otlp_metrics_exporter.ts");
  return startOtlpMetricsExport({
    ...exporter,
    read: io.read,
    intervalMs: otlp.interval_ms,
    timeoutMs: otlp.export_timeout_ms,
    resource: {
      "service.name": io.env.OTEL_SERVICE_NAME || config.telemetry.tracing.service_name,
      "service.version": VERSION,
      // Each worker isolate has its own registry: its series are its own.
      "service.instance.id": crypto.randomUUID(),
    },
    onError: (error) =>
      io.log().warn("OTLP metrics export failed", {
        url: exporter.url,
        error: error instanceof Error ? error.message : String(error),
      }),
  });
}

async function startTracer(
  config: Config,
  env: Readonly<Record<string, string | undefined>>,
  log: Logger,
): Promise<Tracer | null> {
  const tracing = config.telemetry.tracing;
  if (!tracing.enabled) return null;
  const exporters = tracingExporters(config, env);
  if (exporters.length === 0) {
    log.warn(
      "telemetry.tracing.enabled is true but no exporter is configured (telemetry.tracing.exporters or OTEL_EXPORTER_OTLP_ENDPOINT): tracing is off",
    );
    return null;
  }
  const { createOtelTracer } = await import("./otel.ts");
  return createOtelTracer({
    serviceName: env.OTEL_SERVICE_NAME || tracing.service_name,
    serviceVersion: VERSION,
    samplingRate: tracing.sampling_rate,
    exporters,
  });
}
