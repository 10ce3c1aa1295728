import assert from "node:assert/strict";
import { createAdmissionGate } from "../../../lib/engine/admission/queue.ts";

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

/** Fake timers and clock: nothing here waits for real time. */
function fakeTime() {
  let now = 0;
  const timers = new Map<number, { at: number; callback: () => void }>();
  let id = 0;
  return {
    now: () => now,
    setTimer: (callback: () => void, ms: number) => {
      timers.set(++id, { at: now + ms, callback });
      return id;
    },
    clearTimer: (timer: number) => void timers.delete(timer),
    advance(ms: number) {
      now += ms;
      for (const [key, timer] of [...timers]) {
        if (timer.at <= now) {
          timers.delete(key);
          timer.callback();
        }
      }
    },
  };
}

Deno.test("issue 15: a full queue refuses with SERVICE_OVERLOADED and Retry-After; saturation shows, then clears", async () => {
  const time = fakeTime();
  const gate = createAdmissionGate(1, { maxQueueSize: 2, ...time });
  await gate.enter();
  const queued = [gate.enter(), gate.enter()];
  assert.equal(gate.saturated, true, "a full queue is saturation");
  await assert.rejects(
    gate.enter(),
    (error: Error & { code?: string; details?: Record<string, unknown> }) => {
      assert.equal(error.code, "SERVICE_OVERLOADED");
      assert.equal(error.details?.retry_after, 1);
      return true;
    },
  );
  assert.equal(gate.refused, 1);
  gate.leave();
  gate.leave();
  await Promise.all(queued);
  assert.equal(gate.waiting, 0);
  assert.equal(gate.saturated, true, "a refusal within the window keeps it");
  time.advance(1_001);
  assert.equal(gate.saturated, false);
  assert.equal(gate.admitted, 3);
});

Deno.test("issue 15: without a queue (max_queue_size: 0) the gate is saturated only while every slot is taken", async () => {
  const time = fakeTime();
  const gate = createAdmissionGate(1, { maxQueueSize: 0, ...time });
  assert.equal(gate.saturated, false, "idle: ready");
  await gate.enter();
  assert.equal(gate.saturated, true, "the one slot taken: the next request would be refused");
  gate.leave();
  assert.equal(gate.saturated, false);
});

Deno.test("issue 15: request-body bytes are held against maxBodyBytes; past it a counted refusal, nothing held", () => {
  const time = fakeTime();
  const gate = createAdmissionGate(1, { maxBodyBytes: 1000, ...time });
  gate.holdBody(800);
  assert.throws(
    () => gate.holdBody(201),
    (error: Error & { code?: string; details?: Record<string, unknown> }) => {
      assert.equal(error.code, "SERVICE_OVERLOADED");
      assert.equal(error.details?.reason, "body_bytes");
      assert.equal(error.details?.retry_after, 1);
      assert.match(error.message, /traffic_shaping\.router\.max_buffered_body_bytes/);
      return true;
    },
  );
  assert.equal(gate.bodyBytes, 800, "a refused chunk is not counted");
  assert.equal(gate.refused, 1);
  assert.equal(gate.saturated, true, "a refusal shows in readiness");
  gate.holdBody(200);
  gate.releaseBody(1000);
  assert.equal(gate.bodyBytes, 0);
  gate.holdBody(1000);
  assert.equal(gate.bodyBytes, 1000);
});

Deno.test("issue 15: a request waiting longer than max_queue_wait is refused and leaves the queue", async () => {
  const time = fakeTime();
  const gate = createAdmissionGate(1, { maxQueueWaitMs: 500, ...time });
  await gate.enter();
  const waiting = gate.enter();
  time.advance(499);
  assert.equal(gate.waiting, 1);
  time.advance(1);
  await assert.rejects(waiting, {
    code: "SERVICE_OVERLOADED",
    details: { reason: "queue_wait", retry_after: 1 },
  });
  assert.equal(gate.waiting, 0);
  gate.leave();
  assert.equal(gate.active, 0, "the slot did not go to the refused waiter");
});

Deno.test("issue 15: nothing is admitted while the memory budget is spent; a release admits again", async () => {
  let spent = true;
  const gate = createAdmissionGate(0, { blocked: () => spent });
  let admitted = false;
  const waiting = gate.enter().then(() => admitted = true);
  await Promise.resolve();
  assert.equal(admitted, false);
  assert.equal(gate.waiting, 1);
  spent = false;
  gate.pump();
  await waiting;
  assert.equal(gate.active, 1);
});

Deno.test("issue 15: a queue that never empties under sustained load keeps a bounded backlog (no leak)", async () => {
  const gate = createAdmissionGate(1);
  await gate.enter();
  let waiters = [gate.enter(), gate.enter()];
  for (let i = 0; i < 10_000; i++) {
    gate.leave(); // the oldest waiter takes the slot; one more arrives
    await waiters[0];
    waiters = [waiters[1]!, gate.enter()];
    assert.equal(gate.waiting, 2);
  }
  assert.ok(gate.backlog <= 2 * 1024 + 2, `queue array of ${gate.backlog} cells`);
});
