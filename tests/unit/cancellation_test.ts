/**
 * Issue 15/16: request cancellation by callbacks, not `EventTarget` listeners
 * (`lib/cancellation.ts`): per-request listener records let V8 pretenure
 * their allocation site and put the load benchmark into a slow GC regime.
 */
import assert from "node:assert/strict";
import { Cancellation, onAbort, signalOf, withSignal } from "../../lib/cancellation.ts";
import { deadlineGroups } from "../../lib/deadline_groups.ts";
import { createHandler } from "../../lib/http/mod.ts";
import { edgeState, graphqlPost } from "./_edge_fixture.ts";

Deno.test("cancellation: callbacks run once, in order, after the abort event; unregistered ones never", () => {
  const cancel = new Cancellation();
  const seen: string[] = [];
  cancel.signal.addEventListener("abort", () => seen.push("event"));
  onAbort(cancel.signal, () => seen.push(`first:${(cancel.signal.reason as Error).message}`));
  const off = onAbort(cancel.signal, () => seen.push("removed"));
  onAbort(cancel.signal, () => seen.push("second"));
  off();
  off();
  cancel.abort(new Error("gone"));
  cancel.abort(new Error("again"));
  assert.deepEqual(seen, ["event", "first:gone", "second"]);
  // Nothing is registered on an aborted signal; its unregister is harmless.
  onAbort(cancel.signal, () => seen.push("late"))();
  assert.equal(seen.length, 3);
});

Deno.test("cancellation: a deadline group's abort reaches the callbacks", async () => {
  const track = deadlineGroups(1, { reason: () => new Error("late") });
  const cancel = new Cancellation();
  const fired = Promise.withResolvers<unknown>();
  onAbort(cancel.signal, () => fired.resolve(cancel.signal.reason));
  const untrack = track(cancel);
  try {
    assert.equal(((await fired.promise) as Error).message, "late");
  } finally {
    untrack();
  }
});

Deno.test("cancellation: another signal gets an event listener; a request copy names its source", () => {
  const controller = new AbortController();
  let calls = 0;
  const off = onAbort(controller.signal, () => calls++);
  off();
  onAbort(controller.signal, () => calls++);
  controller.abort();
  assert.equal(calls, 1);
  const cancel = new Cancellation();
  const copy = withSignal(new Request("http://x.test/", { signal: cancel.signal }), cancel.signal);
  assert.equal(signalOf(copy), cancel.signal);
  const plain = new Request("http://x.test/");
  assert.equal(signalOf(plain), plain.signal);
});

Deno.test("issue 15: an admitted federated request adds no abort listener but the client's own", async () => {
  // Entity fetches shared between concurrent requests (single flight) and a queue
  // (one slot): every place that waits on the request's signal is on this path.
  const answer = (subgraph: string) =>
    subgraph === "products"
      ? { data: { topProducts: [{ __typename: "Product", upc: "1" }] } }
      : { data: { _entities: [{ reviews: [{ body: "ok" }] }] } };
  const state = await edgeState({ engine: { max_concurrent_operations: 1 } }, { answer });
  const stop = new Cancellation();
  const handle = createHandler(() => state, { stop: stop.signal });
  const query = "{ topProducts { upc reviews { body } } }";
  const original = EventTarget.prototype.addEventListener;
  let listeners = 0;
  EventTarget.prototype.addEventListener = function (
    this: EventTarget,
    ...args: Parameters<EventTarget["addEventListener"]>
  ) {
    if (args[0] === "abort") listeners++;
    return original.apply(this, args);
  };
  const requests = 4;
  let responses: Response[];
  try {
    responses = await Promise.all(
      Array.from({ length: requests }, () => handle(graphqlPost({ query }))),
    );
  } finally {
    EventTarget.prototype.addEventListener = original;
  }
  for (const response of responses) {
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), {
      data: { topProducts: [{ upc: "1", reviews: [{ body: "ok" }] }] },
    });
  }
  // One per request: the client's signal is Deno's, not a Cancellation.
  assert.ok(listeners <= requests, `${listeners} abort listeners for ${requests} requests`);
});

Deno.test("cancellation: a callback that throws is reported, as a listener's error is, and the others run", () => {
  const cancel = new Cancellation();
  const seen: string[] = [];
  const reported: unknown[] = [];
  const onError = (event: ErrorEvent) => {
    reported.push(event.error);
    event.preventDefault();
  };
  globalThis.addEventListener("error", onError);
  try {
    onAbort(cancel.signal, () => {
      throw new Error("faulty");
    });
    onAbort(cancel.signal, () => seen.push("second"));
    cancel.abort(); // never throws, like AbortController#abort
  } finally {
    globalThis.removeEventListener("error", onError);
  }
  assert.deepEqual(seen, ["second"]);
  assert.equal((reported[0] as Error).message, "faulty");
  assert.equal(cancel.signal.aborted, true);
});
