/**
 * The count of answers handed to clients and not yet taken
 * (`lib/engine/unsent_answers.ts`, issue 15): what it holds, what it ends
 * past its limit, and that a streamed answer is its text, byte for byte.
 */
import assert from "node:assert/strict";
import {
  createUnsentAnswers,
  STREAMED_ANSWER_BYTES,
} from "../../../lib/engine/admission/unsent_answers.ts";

const bytesOf = (text: string) => new TextEncoder().encode(text).length;

Deno.test("unsent answers: small ones and a limit of 0 pass as text; large ones stream their exact UTF-8, surrogate pairs whole", async () => {
  const off = createUnsentAnswers({ maxBytes: 0 });
  const large = "é😀".repeat(70_000);
  assert.equal(off.body(large, bytesOf(large)), large);
  const unsent = createUnsentAnswers({ maxBytes: 10_000_000 });
  assert.equal(unsent.body("{}", 2), "{}");
  const body = unsent.body(large, bytesOf(large));
  assert.ok(body instanceof ReadableStream);
  assert.equal(unsent.bytes, bytesOf(large));
  // Every slice boundary falls on a character: the text comes back unchanged.
  assert.equal(await new Response(body).text(), large);
  assert.equal(unsent.bytes, 0, "released once taken");
  assert.ok(bytesOf(large) > STREAMED_ANSWER_BYTES);
});

Deno.test("unsent answers: a client gone (the stream cancelled) releases its bytes", async () => {
  const unsent = createUnsentAnswers({ maxBytes: 10_000_000 });
  const text = "x".repeat(200_000);
  const body = unsent.body(text, text.length) as ReadableStream<Uint8Array>;
  const reader = body.getReader();
  await reader.read();
  assert.equal(unsent.bytes, 200_000);
  await reader.cancel();
  assert.equal(unsent.bytes, 0);
});

Deno.test("unsent answers: past the limit the oldest stalled ones are ended (no byte of them follows), the newest always goes out", async () => {
  const ended: number[] = [];
  let clock = 0;
  const unsent = createUnsentAnswers({
    maxBytes: 250_000,
    onEnded: (bytes) => ended.push(bytes),
    stallMs: 1000,
    now: () => clock,
  });
  const text = (n: number) => "y".repeat(n);
  const a = unsent.body(text(100_000), 100_000) as ReadableStream<Uint8Array>;
  const b = unsent.body(text(100_000), 100_000) as ReadableStream<Uint8Array>;
  assert.equal(unsent.ended, 0);
  clock += 1500; // neither client took a slice since
  // 300 000 would pass 250 000: the oldest (a) is ended.
  const c = unsent.body(text(100_000), 100_000) as ReadableStream<Uint8Array>;
  assert.deepEqual(ended, [100_000]);
  assert.equal(unsent.bytes, 200_000);
  // An answer larger than the limit ends all the others (stalled) and still goes out.
  clock += 1500;
  const d = unsent.body(text(400_000), 400_000) as ReadableStream<Uint8Array>;
  assert.deepEqual(ended, [100_000, 100_000, 100_000]);
  assert.equal(unsent.bytes, 400_000);
  assert.equal((await new Response(d).text()).length, 400_000);
  // An ended answer gives nothing more: its read stays pending (the guard closes the connection).
  const reader = a.getReader();
  const pending = reader.read();
  const outcome = await Promise.race([
    pending.then(() => "read"),
    new Promise((r) => setTimeout(() => r("pending"), 50)),
  ]);
  assert.equal(outcome, "pending");
  await reader.cancel();
  for (const stream of [b, c]) await stream.cancel();
  assert.equal(unsent.bytes, 0);
});

Deno.test("issue 33: a client that reads, however slowly, is never cut off; while readers fill the limit, `full` holds admission", async () => {
  const ended: number[] = [];
  let clock = 0;
  let released = 0;
  const unsent = createUnsentAnswers({
    maxBytes: 250_000,
    onEnded: (bytes) => ended.push(bytes),
    onRelease: () => released++,
    stallMs: 1000,
    now: () => clock,
  });
  const text = "z".repeat(200_000);
  const reading = unsent.body(text, 200_000) as ReadableStream<Uint8Array>;
  const reader = reading.getReader();
  clock += 900;
  await reader.read(); // one slice: progress
  clock += 900;
  // 1 800 ms after it was handed over, but its client took a slice 900 ms ago.
  const newest = unsent.body(text, 200_000) as ReadableStream<Uint8Array>;
  assert.deepEqual(ended, [], "the reader is not ended");
  assert.equal(unsent.bytes, 400_000, "over the limit: both go out");
  assert.equal(unsent.full, true, "admission waits");
  // The reader finishes: the bytes are released, admission resumes.
  let taken = 65_536;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    taken += value.length;
  }
  assert.equal(taken, 200_000);
  assert.equal(released, 1);
  assert.equal(unsent.full, false);
  // A client that stops reading is ended once it stalled, when the limit is needed.
  clock += 1500;
  assert.equal(unsent.bytes, 200_000);
  const third = unsent.body(text, 200_000) as ReadableStream<Uint8Array>;
  assert.deepEqual(ended, [200_000], "the stalled one (newest before) was ended");
  await newest.cancel();
  await third.cancel();
  assert.equal(unsent.bytes, 0);
});
