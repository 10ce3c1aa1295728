/**
 * A `fetch` whose streamed response body ends when the request's signal aborts.
 *
 * Deno 2.9.6 ends the body of an aborted fetch only for the first abort among
 * concurrent streaming responses: the others keep reading (and keep their
 * connection open) after their signals abort, so a client that "leaves" by
 * aborting never leaves. This wrapper errors the body with the abort reason
 * and cancels the underlying read, which does close the connection. Tests
 * whose clients leave by aborting one of several open streams (connect-es
 * subscribers) pass it as the transport's `fetch`.
 *
 * @module
 */

/**
 * `fetch`, with the response body ended by the request's signal.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { abortableFetch } from "./_abortable_fetch.ts";
 * const server = Deno.serve({ port: 0, onListen: () => {} }, () =>
 *   new Response(new ReadableStream({ start: (c) => c.enqueue(new Uint8Array([1])) })));
 * const controller = new AbortController();
 * const response = await abortableFetch(`http://localhost:${server.addr.port}/`, {
 *   signal: controller.signal,
 * });
 * const reader = response.body!.getReader();
 * await reader.read();
 * controller.abort();
 * await assert.rejects(reader.read());
 * await server.shutdown();
 * ```
 * @param input What `fetch` takes.
 * @param init What `fetch` takes.
 * @returns The response.
 */
export async function abortableFetch(
  input: string | URL | Request,
  init?: RequestInit,
): Promise<Response> {
  const response = await fetch(input, init);
  const signal = init?.signal;
  if (!signal || response.body === null) return response;
  const reader = response.body.getReader();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const leave = () => {
    try {
      controller.error(signal.reason);
    } catch {
      // already closed
    }
    reader.cancel(signal.reason).catch(() => {});
  };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    async pull(c) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          signal.removeEventListener("abort", leave);
          c.close();
        } else c.enqueue(value);
      } catch (error) {
        signal.removeEventListener("abort", leave);
        c.error(error);
      }
    },
    cancel(reason) {
      signal.removeEventListener("abort", leave);
      return reader.cancel(reason);
    },
  });
  if (signal.aborted) leave();
  else signal.addEventListener("abort", leave, { once: true });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
