/**
 * Periodic OTLP/HTTP (protobuf) export of the metrics registry on `fetch`:
 * every interval, a snapshot of the registry is converted
 * ({@linkcode toResourceMetrics}), serialized by the OpenTelemetry project's
 * `ProtobufMetricsSerializer` and POSTed. A failed export is reported to
 * `onError` and never thrown; the next one sends the cumulative values again.
 *
 * @module
 */
import { ProtobufMetricsSerializer } from "@opentelemetry/otlp-transformer";
import { type PromMetric, toResourceMetrics } from "./otlp_metrics.ts";
import { unrefTimer } from "../timers.ts";

/** Options for {@linkcode startOtlpMetricsExport}. */
export interface OtlpMetricsExportOptions {
  /** Reads the registry (`registry.getMetricsAsJSON()`). */
  readonly read: () => Promise<readonly PromMetric[]>;
  /** The metrics URL (`http://collector:4318/v1/metrics`). */
  readonly url: string;
  /** Extra request headers (API keys). */
  readonly headers: Readonly<Record<string, string>>;
  /** Time between exports, ms. */
  readonly intervalMs: number;
  /** Longest wait for one export, ms. */
  readonly timeoutMs: number;
  /** Resource attributes (`service.name`, `service.version`). */
  readonly resource: Readonly<Record<string, string>>;
  /** Called with the cause of a failed export. */
  readonly onError: (error: unknown) => void;
  /**
   * Sends the request.
   * @default {globalThis.fetch}
   */
  readonly fetch?: (url: string, init: RequestInit) => Promise<Response>;
  /**
   * The clock, epoch ms.
   * @default {Date.now}
   */
  readonly now?: () => number;
}

/** A running export. */
export interface OtlpMetricsExport {
  /** Exports one snapshot now (resolves when answered; never rejects). */
  exportNow(): Promise<void>;
  /** Stops the timer, then sends a last snapshot. */
  shutdown(): Promise<void>;
}

/**
 * Starts exporting (the first export one interval from now; the timer does
 * not keep the process alive).
 *
 * @example A refused export is reported, not thrown
 * ```ts
 * import assert from "node:assert/strict";
 * import { startOtlpMetricsExport } from "./otlp_metrics_exporter.ts";
 * const errors: unknown[] = [];
 * const exporter = startOtlpMetricsExport({
 *   read: () => Promise.resolve([]),
 *   url: "http://collector.invalid/v1/metrics",
 *   headers: {},
 *   intervalMs: 60_000,
 *   timeoutMs: 1_000,
 *   resource: {},
 *   onError: (error) => errors.push(error),
 *   fetch: () => Promise.resolve(new Response("no", { status: 503 })),
 * });
 * await exporter.shutdown();
 * assert.match(String(errors[0]), /HTTP 503/);
 * ```
 * @param options Registry reader, destination, interval.
 * @returns The running export.
 */
export function startOtlpMetricsExport(options: OtlpMetricsExportOptions): OtlpMetricsExport {
  const send = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const startMs = now();
  let stopped = false;

  async function exportOnce(): Promise<void> {
    try {
      const snapshot = toResourceMetrics(await options.read(), {
        resource: options.resource,
        startMs,
        nowMs: now(),
      });
      const body = ProtobufMetricsSerializer.serializeRequest(snapshot);
      if (body === undefined) throw new Error("The metrics could not be serialized");
      const response = await send(options.url, {
        method: "POST",
        headers: { ...options.headers, "content-type": "application/x-protobuf" },
        body: new Uint8Array(body),
        signal: AbortSignal.timeout(options.timeoutMs),
        // Not followed: a redirect would carry the headers (API keys) to another host.
        redirect: "manual",
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`OTLP metrics export answered HTTP ${response.status}`);
    } catch (error) {
      options.onError(error);
    }
  }

  // One export at a time: a slow collector does not pile up requests.
  let running: Promise<void> = Promise.resolve();
  const exportNow = (): Promise<void> => {
    running = running.then(exportOnce);
    return running;
  };
  const timer = setInterval(() => {
    if (!stopped) void exportNow();
  }, options.intervalMs);
  unrefTimer(timer);

  return {
    exportNow,
    async shutdown() {
      if (stopped) return running;
      stopped = true;
      clearInterval(timer);
      await exportNow();
    },
  };
}
