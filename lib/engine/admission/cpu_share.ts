/**
 * The CPU share of one sampling window, the one figure the admission gate's adaptive limit
 * and the subscriptions' capacity estimate read as "busy".
 *
 * What "busy" means (decided in `lib/state/thread_cpu.ts`, where it is read): the share of
 * the window the serving thread wanted a CPU (ran, or was runnable and waited for one). A
 * thread is in one state at a time, so the share of one thread is at most 1; a figure above
 * it (clock skew between the kernel's accounting and the window's clock, a process figure
 * divided by too few cores) is an error of measurement, and it is clamped here, where every
 * sampler divides, so that no figure above 100 % reaches a decision or a message.
 *
 * @module
 */

/**
 * The share of a window's capacity a CPU clock advanced by.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cpuShare } from "./cpu_share.ts";
 * assert.equal(cpuShare(50_000, { windowMs: 100, cores: 1 }), 0.5);
 * assert.equal(cpuShare(100_000, { windowMs: 100, cores: 2 }), 0.5); // a process figure over 2 cores
 * assert.equal(cpuShare(545_000, { windowMs: 100, cores: 1 }), 1); // never more than all of it
 * assert.equal(cpuShare(-5, { windowMs: 100, cores: 1 }), 0); // a clock read that went back
 * assert.equal(cpuShare(10, { windowMs: 0, cores: 1 }), 0); // no window: nothing measured
 * ```
 * @param spentMicros CPU time the clock advanced by over the window, µs.
 * @param window The window's length (ms) and the cores the clock's time is a share of.
 * @returns The share, within [0, 1].
 */
export function cpuShare(
  spentMicros: number,
  window: { readonly windowMs: number; readonly cores: number },
): number {
  const capacity = window.windowMs * 1000 * Math.max(1, window.cores);
  if (!(capacity > 0) || !Number.isFinite(spentMicros)) return 0;
  return Math.min(1, Math.max(0, spentMicros / capacity));
}
