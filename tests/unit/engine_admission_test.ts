import assert from "node:assert/strict";
import { createAdmissionGate } from "../../lib/engine/admission.ts";

Deno.test("issue 8: the admission gate lets `limit` in and the rest wait in arrival order", async () => {
  const gate = createAdmissionGate(2);
  await gate.enter();
  await gate.enter();
  const order: number[] = [];
  const waiting = [3, 4, 5].map((n) => gate.enter().then(() => order.push(n)));
  assert.equal(gate.active, 2);
  assert.equal(gate.waiting, 3);
  gate.leave();
  await waiting[0];
  assert.deepEqual(order, [3]);
  assert.equal(gate.active, 2, "a freed slot passes to the next waiter");
  gate.leave();
  gate.leave();
  await Promise.all(waiting);
  assert.deepEqual(order, [3, 4, 5]);
  assert.equal(gate.waiting, 0);
  gate.leave();
  gate.leave();
  assert.equal(gate.active, 0);
});

Deno.test("issue 8: a caller that goes away while waiting leaves the queue without a slot", async () => {
  const gate = createAdmissionGate(1);
  await gate.enter();
  const controller = new AbortController();
  const gone = gate.enter(controller.signal);
  const next = gate.enter();
  controller.abort(new Error("client gone"));
  await assert.rejects(gone, /client gone/);
  assert.equal(gate.waiting, 1);
  gate.leave();
  await next; // the slot skipped the aborted caller
  assert.equal(gate.active, 1);
  // Already aborted: rejected at once, nothing queued.
  await assert.rejects(gate.enter(AbortSignal.abort(new Error("late"))), /late/);
  assert.equal(gate.waiting, 0);
});

Deno.test("issue 8: limit 0 admits everyone", async () => {
  const gate = createAdmissionGate(0);
  await Promise.all(Array.from({ length: 100 }, () => gate.enter()));
  assert.equal(gate.active, 100, "counted, never queued");
  assert.equal(gate.waiting, 0);
});
