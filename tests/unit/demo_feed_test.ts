/**
 * The demo's event feed (the live field's source): filters, the per-listener
 * bound, and that returning a listener detaches it at once.
 */
import assert from "node:assert/strict";
import { createFeed } from "../../demo/feed.ts";

Deno.test("issue 29: a feed listener gets the values its filter accepts, in order", async () => {
  const feed = createFeed<number>();
  const even = feed.listen((n) => n % 2 === 0);
  for (const n of [1, 2, 3, 4]) feed.publish(n);
  assert.deepEqual(await even.next(), { value: 2, done: false });
  assert.deepEqual(await even.next(), { value: 4, done: false });
  await even.return();
});

Deno.test("issue 29: a listener that falls maxQueued events behind is ended with FEED_LISTENER_TOO_SLOW, never buffered on", async () => {
  const feed = createFeed<number>({ maxQueued: 2 });
  const slow = feed.listen();
  for (const n of [1, 2, 3, 4, 5]) feed.publish(n);
  assert.equal(feed.listeners(), 0, "detached at the overflow");
  assert.deepEqual(await slow.next(), { value: 1, done: false });
  assert.deepEqual(await slow.next(), { value: 2, done: false });
  await assert.rejects(slow.next(), { code: "FEED_LISTENER_TOO_SLOW" });
  assert.deepEqual(await slow.next(), { value: undefined, done: true });
});

Deno.test("issue 29: returning a listener that waits for an event detaches it at once and ends the wait", async () => {
  const feed = createFeed<number>();
  const listener = feed.listen();
  const waiting = listener.next();
  assert.equal(feed.listeners(), 1);
  await listener.return();
  assert.equal(feed.listeners(), 0);
  assert.deepEqual(await waiting, { value: undefined, done: true });
});
