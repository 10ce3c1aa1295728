/**
 * Tracing contract of the telemetry: a request span with children for the
 * stages and the subgraph fetches. Implemented with the OpenTelemetry JS SDK
 * in `otel.ts`; the rest of the router sees only these two interfaces.
 *
 * @module
 */
import type { FetchHook } from "../engine/mod.ts";

/** A request's span. */
export interface RequestSpan {
  /** A child span for a subgraph fetch; its `headers` carry the W3C trace context. */
  fetch(subgraph: string): FetchHook;
  /** A child span for a stage that ran between two `performance.now()` values. */
  stage(
    name: string,
    startMs: number,
    endMs: number,
    attributes?: Readonly<Record<string, string | number | boolean>>,
  ): void;
  /** Adds attributes to the request span (RPC method, MCP tool). */
  attributes(attributes: Readonly<Record<string, string | number | boolean>>): void;
  /** The operation became known (`graphql.operation.name` / `.type`). */
  operation(info: { readonly name: string | null; readonly type: string | null }): void;
  /** The response status is known: ends the span. */
  end(status: number): void;
}

/** Starts request spans (sampled by the configured sampler, parent-based). */
export interface Tracer {
  /**
   * Starts the span of a request (continuing an incoming `traceparent`);
   * null when the request is not sampled.
   */
  startRequest(
    request: Request,
    info: { readonly route: string; readonly requestId: string },
  ): RequestSpan | null;
  /** Flushes and stops the exporters. */
  shutdown(): Promise<void>;
}
