import assert from "node:assert/strict";
import { demandMicros, servingThreadCpu } from "../../lib/state/thread_cpu.ts";

Deno.test("issue 33: the admission's CPU figure is the serving thread's own run + runnable-wait time on Linux", () => {
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
  while (performance.now() - start < 30) {
    // Busy: this thread wants the CPU for 30 ms.
  }
  const spent = source.time() - before;
  assert.ok(spent >= 25_000, `${spent} µs for 30 ms of busy work`);
  // An idle thread (waiting on a timer) wants none.
  const idle = source.time();
  return new Promise<void>((resolve) =>
    setTimeout(() => {
      assert.ok(source.time() - idle < 10_000, "a sleeping thread reads idle");
      resolve();
    }, 30)
  );
});
