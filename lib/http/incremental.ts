/**
 * Incremental answers (`@defer`) on the GraphQL endpoint: the parts of an
 * {@linkcode IncrementalResult} as `multipart/mixed; deferSpec=20220824` or as
 * GraphQL-over-SSE `next` events, pulled one part at a time and bounded
 * together by `engine.max_response_bytes`.
 *
 * @module
 */
import type { GraphQLFormattedError } from "graphql";
import {
  type ExecutionResult,
  type IncrementalResult,
  responseTooLarge,
  resultJson,
} from "../engine/mod.ts";
import { RouterError } from "../errors.ts";
import { utf8Length } from "../limited_body.ts";
import { withRequestId } from "../request/mod.ts";
import { TRACED_RESPONSE_HEADERS } from "../trace/mod.ts";
import { DEFER_SPEC } from "./_media.ts";
import { multipartBody, multipartContentType } from "./multipart.ts";

/**
 * An incremental answer as `multipart/mixed; boundary="-"; deferSpec=20220824`: the primary
 * part, then each deferred part as it completes (the trace, when on, in the last one). The
 * parts together are bounded by `engine.max_response_bytes`: past it, a last part says so.
 * With `transport: "sse"` each part is a GraphQL-over-SSE `next` event, then `complete`.
 * @param outcome The primary part and the deferred parts still to come.
 * @param options Transport, request id, byte bound, the trace's last step.
 * @returns The streamed response.
 */
export function incrementalResponse(
  outcome: IncrementalResult,
  options: {
    /** Multipart parts, or SSE `next` events then `complete` (GraphQL over SSE). */
    readonly transport: "multipart" | "sse";
    readonly requestId: string | null;
    readonly limit: number;
    readonly finish: (last: ExecutionResult) => ExecutionResult;
    readonly traced: boolean;
  },
): Response {
  const { requestId, limit } = options;
  let bytes = 0;
  const text = (payload: object): string => {
    const json = resultJson(payload as ExecutionResult);
    bytes += utf8Length(json);
    if (bytes > limit) throw responseTooLarge(limit);
    return json;
  };
  const withIds = <T extends { errors?: GraphQLFormattedError[] }>(payload: T): T =>
    requestId !== null && payload.errors !== undefined
      ? { ...payload, errors: withRequestId(payload.errors, requestId) }
      : payload;
  async function* parts(): AsyncGenerator<string> {
    const { initial, subsequent } = outcome;
    if (!initial.hasNext) {
      yield text(options.finish(withIds(initial)));
      return;
    }
    yield text(withIds(initial));
    for await (const part of subsequent) {
      const incremental = part.incremental?.map((entry) => withIds({ ...entry }));
      const payload = { ...part, ...(incremental ? { incremental } : {}) };
      yield text(part.hasNext ? payload : options.finish(payload as ExecutionResult));
    }
  }
  const sse = options.transport === "sse";
  const headers = new Headers({
    "content-type": sse
      ? "text/event-stream; charset=utf-8"
      : multipartContentType("-", { deferSpec: DEFER_SPEC }),
    "cache-control": "no-cache",
  });
  if (options.traced) {
    for (const [name, value] of Object.entries(TRACED_RESPONSE_HEADERS)) headers.set(name, value);
  }
  const onError = (error: unknown): string => {
    const known = error instanceof RouterError
      ? error
      : new RouterError("INTERNAL", "Internal server error");
    const errors = [{ message: known.message, extensions: { code: known.code } }];
    return JSON.stringify({ hasNext: false, errors: withIds({ errors }).errors });
  };
  const body = sse ? sseBody(parts(), onError) : multipartBody(parts(), { onError });
  return new Response(body, { status: 200, headers });
}

const SSE_ENCODER = new TextEncoder();

/**
 * Parts as GraphQL-over-SSE events (distinct connections mode): each a `next` event, then
 * `complete`; an error after the head is a last `next` event that says so. Pulled one part at a
 * time, like the multipart body.
 */
function sseBody(
  parts: AsyncGenerator<string>,
  onError: (error: unknown) => string,
): ReadableStream<Uint8Array> {
  const event = (json: string) => SSE_ENCODER.encode(`event: next\ndata: ${json}\n\n`);
  const complete = SSE_ENCODER.encode("event: complete\ndata:\n\n");
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next: IteratorResult<string>;
      try {
        next = await parts.next();
      } catch (error) {
        controller.enqueue(event(onError(error)));
        next = { done: true, value: undefined };
      }
      if (next.done) {
        controller.enqueue(complete);
        controller.close();
      } else controller.enqueue(event(next.value));
    },
    async cancel() {
      await parts.return(undefined);
    },
  }, { highWaterMark: 0 });
}
