/**
 * Observing a response body without holding it: the one way a wrapper (access
 * log, metrics, tracing) learns a body's size and when it ended. The body
 * passes through untouched, chunk by chunk as the facet produces it
 * (multipart, `@defer`, SSE, Connect streams, any body), with the client's
 * back-pressure and its cancel carried to the source, so a client that leaves
 * frees its subscription at once. Nothing is buffered, nothing read ahead.
 *
 * @module
 */
import { knownBodySize } from "./access_log.ts";

/** How an observed body ended. */
export type BodyEnd = "complete" | "canceled";

/** What {@linkcode observeBody} reports once, when the body ended. */
export interface ObservedBody {
  /** The bytes that went to the client (counted as they flowed). */
  readonly bytes: number;
  /** `complete`: the last byte went out; `canceled`: the client left, or the source failed. */
  readonly end: BodyEnd;
}

/**
 * Returns a response that sends `response`'s body as it is produced and calls
 * `onEnd` once when it ended. A body whose size the facet left on the response
 * (`withBodySize`) or a response without a body is reported at once and
 * returned as it is (no stream is made: a byte body stays one).
 *
 * @example A stream is passed through as it comes, and counted
 * ```ts
 * import assert from "node:assert/strict";
 * import { observeBody } from "./observe_body.ts";
 * const source = new TransformStream<Uint8Array, Uint8Array>();
 * const push = source.writable.getWriter();
 * const ends: unknown[] = [];
 * const observed = observeBody(
 *   new Response(source.readable, { headers: { "content-type": "multipart/mixed" } }),
 *   (end) => ends.push(end),
 * );
 * const reader = observed.body!.getReader();
 * void push.write(new Uint8Array(3)); // the source is still open
 * assert.equal((await reader.read()).value?.byteLength, 3);
 * void push.close();
 * assert.equal((await reader.read()).done, true);
 * assert.deepEqual(ends, [{ bytes: 3, end: "complete" }]);
 * assert.equal(observed.headers.get("content-type"), "multipart/mixed");
 * ```
 * @param response The response as the facet built it.
 * @param onEnd Called once, when the body ended (completed or canceled).
 * @returns The response to send.
 */
export function observeBody(
  response: Response,
  onEnd: (observed: ObservedBody) => void,
): Response {
  const known = knownBodySize(response);
  if (known !== null) {
    onEnd({ bytes: known, end: "complete" });
    return response;
  }
  const body = response.body;
  if (body === null) {
    onEnd({ bytes: 0, end: "complete" });
    return response;
  }
  let bytes = 0;
  let ended = false;
  const end = (how: BodyEnd) => {
    if (ended) return;
    ended = true;
    onEnd({ bytes, end: how });
  };
  // pipeThrough carries the client's cancel back to the source (preventCancel
  // is false) and its back-pressure: the readable side queues nothing.
  const counted = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
      flush: () => end("complete"),
      cancel: () => end("canceled"),
    }),
  );
  return new Response(counted, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
