/**
 * The {@linkcode Tracer} on the OpenTelemetry JS SDK: a provider of its own
 * (nothing registered globally, so routers in one process keep their own
 * config), a parent-based ratio sampler, W3C Trace Context + Baggage, and
 * one batch processor per OTLP/HTTP (protobuf) exporter.
 *
 * Deno's built-in OpenTelemetry (`OTEL_DENO=true`) was the first choice and
 * is not used: it is configured only from the environment when the process
 * starts (one endpoint, no `exporters[]` with headers, no sampling ratio from
 * the config, nothing changeable per router), and it instruments every
 * `fetch` and `Deno.serve` of the process (JWKS, the metrics listener).
 *
 * @module
 */
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from "@opentelemetry/api";
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { FetchHook } from "../engine/mod.ts";
import { createOtlpHttpExporter } from "./otlp_exporter.ts";

export { parseHeaderList } from "./otlp_headers.ts";
import type { RequestSpan, Tracer } from "./tracing.ts";

/** One OTLP/HTTP exporter. */
export interface OtlpExporterOptions {
  /** The traces URL (`…/v1/traces`). */
  readonly url: string;
  /** Request headers. */
  readonly headers: Readonly<Record<string, string>>;
  /** Longest wait before a batch is sent, ms. */
  readonly batchTimeoutMs: number;
  /** Longest wait for one export, ms. */
  readonly exportTimeoutMs: number;
  /**
   * Sends the export (benchmarks count instead of sending).
   * @default {globalThis.fetch}
   */
  readonly fetch?: (url: string, init: RequestInit) => Promise<Response>;
}

/** Options for {@linkcode createOtelTracer}. */
export interface OtelTracerOptions {
  /** `service.name`. */
  readonly serviceName: string;
  /** `service.version`. */
  readonly serviceVersion: string;
  /** Fraction of new (parentless) traces sampled. */
  readonly samplingRate: number;
  /** Where spans go. */
  readonly exporters: readonly OtlpExporterOptions[];
  /**
   * Draws the sampling decision of a new trace.
   * @default {Math.random}
   */
  readonly random?: () => number;
}

const HEADERS_GETTER: TextMapGetter<Headers> = {
  keys: (carrier) => [...carrier.keys()],
  get: (carrier, key) => carrier.get(key) ?? undefined,
};

const PROPAGATOR = new CompositePropagator({
  propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
});

/** The trace context headers of a context, as name/value pairs. */
function contextHeaders(context: Context): [string, string][] {
  const pairs: [string, string][] = [];
  PROPAGATOR.inject(context, pairs, { set: (carrier, key, value) => carrier.push([key, value]) });
  return pairs;
}

/**
 * Creates the tracer.
 * @param options Service, sampler and exporters.
 * @returns The tracer.
 */
export function createOtelTracer(options: OtelTracerOptions): Tracer {
  const spanProcessors = options.exporters.map((e) =>
    new BatchSpanProcessor({
      exporter: createOtlpHttpExporter({
        url: e.url,
        headers: e.headers,
        timeoutMs: e.exportTimeoutMs,
        ...(e.fetch ? { fetch: e.fetch } : {}),
      }),
      scheduledDelayMillis: e.batchTimeoutMs,
      exportTimeoutMillis: e.exportTimeoutMs,
    })
  );
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      "service.name": options.serviceName,
      "service.version": options.serviceVersion,
    }),
    // New traces are drawn in `startRequest` before the SDK is asked (an unsampled
    // request then costs nothing); a caller's context decides for its trace.
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors,
  });
  const tracer = provider.getTracer("gw-router", options.serviceVersion);
  const random = options.random ?? Math.random;

  function requestSpan(span: Span, context: Context): RequestSpan {
    return {
      fetch(subgraph) {
        const child = tracer.startSpan(`POST ${subgraph}`, {
          kind: SpanKind.CLIENT,
          attributes: { "http.request.method": "POST", "gw.subgraph.name": subgraph },
        }, context);
        return fetchHook(child, trace.setSpan(context, child));
      },
      stage(name, startMs, endMs, attributes) {
        tracer.startSpan(
          name,
          { startTime: startMs, ...(attributes ? { attributes } : {}) },
          context,
        )
          .end(endMs);
      },
      attributes(attributes) {
        span.setAttributes(attributes);
      },
      operation({ name, type }) {
        const attributes: Attributes = {};
        if (name !== null) attributes["graphql.operation.name"] = name;
        if (type !== null) attributes["graphql.operation.type"] = type;
        span.setAttributes(attributes);
      },
      end(status) {
        span.setAttribute("http.response.status_code", status);
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      },
    };
  }

  return {
    startRequest(request, { route, requestId }) {
      const continued = request.headers.has("traceparent");
      if (!continued && random() >= options.samplingRate) return null;
      const parent = PROPAGATOR.extract(ROOT_CONTEXT, request.headers, HEADERS_GETTER);
      const span = tracer.startSpan(`${request.method} ${route}`, {
        kind: SpanKind.SERVER,
        attributes: {
          "http.request.method": request.method,
          "http.route": route,
          "gw.request_id": requestId,
        },
      }, parent);
      const context = trace.setSpan(parent, span);
      if (span.isRecording()) return requestSpan(span, context);
      // Not sampled: no spans, but a caller's trace context still reaches the subgraphs.
      return continued ? passthrough(contextHeaders(context)) : null;
    },
    async shutdown() {
      await provider.shutdown();
    },
  };
}

function fetchHook(span: Span, context: Context): FetchHook {
  return {
    headers: contextHeaders(context),
    end(status, error, shared) {
      if (status !== null) span.setAttribute("http.response.status_code", status);
      if (shared) span.setAttribute("gw.fetch.shared", true);
      if (error !== null && error !== undefined) {
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({ code: SpanStatusCode.ERROR });
      } else if (status !== null && status >= 400) {
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
  };
}

/** An unsampled request span that only forwards the caller's trace context. */
function passthrough(headers: [string, string][]): RequestSpan {
  const hook: FetchHook = { headers, end() {} };
  return {
    fetch: () => hook,
    stage() {},
    attributes() {},
    operation() {},
    end() {},
  };
}
