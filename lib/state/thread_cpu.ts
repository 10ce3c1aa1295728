/**
 * What the admission gate's adaptive limit and the subscriptions' capacity estimate read as
 * "busy": how much of the time the serving thread wanted the CPU. On Linux that is the thread's
 * own `/proc/thread-self/schedstat` (nanoseconds run on a CPU, and nanoseconds runnable but
 * waiting for one): a thread that shares its core with V8's collector threads or with other
 * processes still reads 1 when it never idles, and the collector threads on another core do
 * not make an idle thread look busy. Elsewhere it is the process's CPU time
 * (`process.cpuUsage`) over one core per serving isolate (`cores`: every sampler divides by
 * it). Call {@linkcode servingThreadCpu} on the serving thread: `thread-self` is the caller's.
 *
 * A thread is running, waiting, or asleep, one at a time: its share of a window is at most 1,
 * and the samplers clamp it there (`lib/engine/admission/cpu_share.ts`).
 *
 * Waiting for a CPU counts as busy, by decision. A router whose thread waits for a core
 * delivers late whoever takes the core, and admitting by run time alone filled the nominal
 * capacity the neighbours then took (issue 39: p99 0.9 to 10 s against 95 ms by demand). The
 * price is that on a machine overloaded by other processes the reading is high even when the
 * router has next to no work: each wake-up waits its turn. Refusing then would be the
 * neighbours' fault and free nothing they would not take, so the reading alone never refuses
 * the router's first work: the adaptive limit never falls below `min_concurrency` (at least
 * one operation), and the first `MIN_ADMITTED` subscriptions are admitted whatever it says.
 *
 * Read every 20 ms while operations run (about 7 µs a read).
 *
 * @module
 */
import process from "node:process";

/** A clock of CPU time for the admission gate. */
export interface CpuSource {
  /** Time the serving thread ran or waited to run (or the process's CPU time), µs. */
  readonly time: () => number;
  /** The cores that time is a share of. */
  readonly cores: number;
}

const SCHEDSTAT = "/proc/thread-self/schedstat";

/**
 * Run plus runnable-waiting time of a `schedstat` line, µs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { demandMicros } from "./thread_cpu.ts";
 * assert.equal(demandMicros("18554502 2622463 20\n"), 21176.965);
 * assert.equal(demandMicros("not numbers"), null);
 * ```
 * @param text The file's text.
 * @returns µs, or null when the text is not a `schedstat` line.
 */
export function demandMicros(text: string): number | null {
  const [run, wait] = text.trim().split(" ", 2).map(Number);
  if (!Number.isFinite(run) || !Number.isFinite(wait)) return null;
  return (run! + wait!) / 1000;
}

/**
 * The CPU source of the isolate that calls it (call it on the serving thread).
 * @param workers Serving isolates (the process figure's cores).
 * @returns The thread's demand where the kernel gives it, else the process's CPU time.
 */
export function servingThreadCpu(workers: number): CpuSource {
  const read = (): number | null => {
    try {
      return demandMicros(Deno.readTextFileSync(SCHEDSTAT));
    } catch {
      return null;
    }
  };
  if (read() !== null) {
    let last = 0;
    // A read that fails later (unlikely) repeats the last figure: that window reads idle.
    return { time: () => last = read() ?? last, cores: 1 };
  }
  return {
    time: () => {
      const usage = process.cpuUsage();
      return usage.user + usage.system;
    },
    cores: Math.max(1, workers),
  };
}
