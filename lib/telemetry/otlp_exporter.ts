/**
 * An OTLP/HTTP (protobuf) span exporter on `fetch`, serialized by the
 * OpenTelemetry project's own `ProtobufTraceSerializer`. Not the npm
 * `@opentelemetry/exporter-trace-otlp-proto`: that one sends through
 * `node:http` and brings Node's global typings into the type check.
 *
 * @module
 */
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";

/** ExportResultCode of `@opentelemetry/core`: SUCCESS. */
const SUCCESS = 0;
/** ExportResultCode of `@opentelemetry/core`: FAILED. */
const FAILED = 1;

/** Options for {@linkcode createOtlpHttpExporter}. */
export interface OtlpHttpExporterOptions {
  /** The traces URL (`http://collector:4318/v1/traces`). */
  readonly url: string;
  /** Extra request headers (API keys). */
  readonly headers: Readonly<Record<string, string>>;
  /** Longest wait for one export, ms. */
  readonly timeoutMs: number;
  /**
   * Sends the request.
   * @default {globalThis.fetch}
   */
  readonly fetch?: (url: string, init: RequestInit) => Promise<Response>;
}

/**
 * Creates the exporter (one POST per batch; a non-2xx answer or a network
 * error fails that batch, which the batch processor then drops).
 * @param options URL, headers, timeout.
 * @returns The exporter.
 */
export function createOtlpHttpExporter(options: OtlpHttpExporterOptions): SpanExporter {
  const send = options.fetch ?? fetch;
  const pending = new Set<Promise<void>>();
  let stopped = false;
  return {
    export(spans: ReadableSpan[], done) {
      if (stopped) {
        done({ code: FAILED, error: new Error("The OTLP exporter is shut down") });
        return;
      }
      const body = ProtobufTraceSerializer.serializeRequest(spans);
      if (body === undefined) {
        done({ code: FAILED, error: new Error("The spans could not be serialized") });
        return;
      }
      const sent = send(options.url, {
        method: "POST",
        headers: { ...options.headers, "content-type": "application/x-protobuf" },
        body: new Uint8Array(body),
        signal: AbortSignal.timeout(options.timeoutMs),
        // Not followed: a redirect would carry the headers (API keys) to another host.
        redirect: "manual",
      }).then(async (response) => {
        await response.body?.cancel();
        done(
          response.ok
            ? { code: SUCCESS }
            : { code: FAILED, error: new Error(`OTLP export answered HTTP ${response.status}`) },
        );
      }, (error) => done({ code: FAILED, error }));
      pending.add(sent);
      sent.finally(() => pending.delete(sent));
    },
    async shutdown() {
      stopped = true;
      await Promise.all(pending);
    },
    async forceFlush() {
      await Promise.all(pending);
    },
  };
}
