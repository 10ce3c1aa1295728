/**
 * Run by `connect_stream_test.ts` in its own process with `--expose-gc`:
 * streams results through `connectStreamResponse` while the stream stays open
 * (no deadline, no end), reads them all, and prints how many of the results
 * already sent are still reachable after a full collection. A sent result must
 * be garbage at once: a stream that keeps what it sent grows with its length.
 * Usage: `deno run -A --v8-flags=--expose-gc tests/unit/_connect_stream_probe.ts`.
 *
 * @module
 */
import { connectStreamResponse } from "../../lib/connect/stream_response.ts";
import type { MethodModel } from "../../lib/connect/model.ts";

const SENT = 200;
const method = {
  response: { name: "R", fullName: "R", description: null, nested: [], fields: [] },
} as unknown as MethodModel;
const alive: WeakRef<object>[] = [];
let produced = 0;
const results: AsyncIterable<{ data: Record<string, unknown> }> = {
  [Symbol.asyncIterator]: () => ({
    next() {
      // The stream stays open once these are sent: the next result never comes.
      if (produced === SENT) return new Promise(() => {});
      produced++;
      const data = { payload: new Array(256).fill(produced) };
      alive.push(new WeakRef(data));
      return Promise.resolve({ done: false, value: { data } });
    },
  }),
};
const controller = new AbortController();
const response = connectStreamResponse(results, { method, signal: controller.signal });
const reader = response.body!.getReader();
let bytes = 0;
while (produced < SENT) bytes += (await reader.read()).value?.byteLength ?? 0;
for (let i = 0; i < 3; i++) {
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((resolve) => setTimeout(resolve, 0));
}
const reachable = alive.filter((ref) => ref.deref() !== undefined).length;
console.log(JSON.stringify({ sent: produced, bytes, reachable }));
controller.abort();
await reader.cancel();
Deno.exit(0);
