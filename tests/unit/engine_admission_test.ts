import assert from "node:assert/strict";
import { createAdmissionGate } from "../../lib/engine/admission.ts";
import { createEngine, execute, prepare } from "../../lib/engine/mod.ts";
import { buildSupergraph } from "../../lib/supergraph/mod.ts";

const MODEL = buildSupergraph(
  Deno.readTextFileSync(new URL("../../schema/supergraph.graphql", import.meta.url)),
);

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

Deno.test("issue 8: engine.max_concurrent_operations holds the next operation until one finishes", async () => {
  let started = 0;
  const releases: (() => void)[] = [];
  const engine = createEngine(MODEL, {
    maxConcurrentOperations: 1,
    enableSingleFlight: false,
    fetch: () => {
      started++;
      return new Promise((resolve) =>
        releases.push(() => resolve(Response.json({ data: { users: [{ id: "1" }] } })))
      );
    },
  });
  const prepared = prepare(engine, { query: "{ users { id } }" });
  assert.ok(prepared.ok);
  const first = execute(engine, prepared.operation);
  const second = execute(engine, prepared.operation);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(started, 1, "the second operation waits for a slot: no subgraph request yet");
  assert.equal(engine.admission.waiting, 1);
  releases.shift()?.();
  assert.deepEqual(await first, { data: { users: [{ id: "1" }] } });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(started, 2);
  releases.shift()?.();
  assert.deepEqual(await second, { data: { users: [{ id: "1" }] } });
  assert.equal(engine.admission.active, 0);
});
