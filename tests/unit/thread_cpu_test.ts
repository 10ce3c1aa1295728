import assert from "node:assert/strict";
import { demandMicros, servingThreadCpu } from "../../lib/state/thread_cpu.ts";

// The bounds are shares of the wall time, not fixed figures: on a loaded machine
// a woken thread waits (runnable) for a core, and the kernel books the running
// slice up to a tick late, so small windows read noisy. A busy thread reads at
// least half of a 200 ms window; a sleeping one at most half of a 300 ms one
// (a wall-clock or whole-process figure reads all of it).
const BUSY_MS = 200;
const IDLE_MS = 300;

Deno.test("issue 33: the admission's CPU figure is the serving thread's own run + runnable-wait time on Linux", async () => {
  assert.equal(demandMicros("1000000 500000 7"), 1500);
  assert.equal(demandMicros(""), null);
  const source = servingThreadCpu(4);
  if (Deno.build.os !== "linux") {
    assert.equal(source.cores, 4, "the process figure: a core per serving isolate");
    return;
  }
  assert.equal(source.cores, 1, "one thread: a share of one core");
  const before = source.time();
  const start = performance.now();
  while (performance.now() - start < BUSY_MS) {
    // Busy: this thread wants the CPU for the whole window.
  }
  const spent = source.time() - before;
  assert.ok(spent >= BUSY_MS * 500, `${spent} µs for ${BUSY_MS} ms of busy work`);
  // An idle thread (waiting on a timer) wants next to none of the window.
  const idle = source.time();
  const slept = performance.now();
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const wall = (performance.now() - slept) * 1000;
  const wanted = source.time() - idle;
  assert.ok(wanted < wall / 2, `a sleeping thread reads idle: ${wanted} µs of ${wall} µs`);
});
