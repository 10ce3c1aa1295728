/**
 * The admission gate: at most `limit` operations execute at once in an
 * isolate; the others wait in arrival order. Under CPU saturation, running
 * every accepted request at once only interleaves them: each holds its
 * partial data for many times longer, that data outlives young-generation
 * collections and is promoted, and old-generation collections then cost
 * both memory and CPU. A waiting operation holds only its parsed request.
 *
 * @module
 */

/** An admission gate (see {@linkcode createAdmissionGate}). */
export interface AdmissionGate {
  /**
   * Waits for a slot. Resolves at once when one is free; rejects with the
   * signal's reason when the caller goes away while waiting (no slot taken).
   * Every resolved `enter` must be paired with one `leave`.
   */
  enter(signal?: AbortSignal): Promise<void>;
  /** Frees the slot taken by `enter` (the next waiter gets it). */
  leave(): void;
  /** Operations holding a slot. */
  readonly active: number;
  /** Operations waiting for one. */
  readonly waiting: number;
}

const ADMITTED: Promise<void> = Promise.resolve();

/**
 * Creates an admission gate.
 *
 * @example Two slots, a third caller waits for the first to leave
 * ```ts
 * import assert from "node:assert/strict";
 * import { createAdmissionGate } from "./admission.ts";
 * const gate = createAdmissionGate(2);
 * await gate.enter();
 * await gate.enter();
 * let third = false;
 * const waiting = gate.enter().then(() => { third = true; });
 * assert.equal(gate.waiting, 1);
 * gate.leave();
 * await waiting;
 * assert.ok(third);
 * assert.equal(gate.active, 2);
 * ```
 * @param limit Operations allowed at once; 0 (or less) = no limit.
 * @returns The gate.
 */
export function createAdmissionGate(limit: number): AdmissionGate {
  let active = 0;
  // FIFO of admit callbacks, an array with a moving head (no shifting); a
  // waiter that went away leaves null behind.
  let queue: ((() => void) | null)[] = [];
  let head = 0;
  let waiting = 0;
  function next(): (() => void) | null {
    while (head < queue.length) {
      const admit = queue[head];
      queue[head++] = null;
      if (admit) return admit;
    }
    queue = [];
    head = 0;
    return null;
  }
  return {
    enter(signal) {
      if (limit <= 0 || (active < limit && waiting === 0)) {
        active++;
        return ADMITTED;
      }
      if (signal?.aborted) return Promise.reject(signal.reason);
      return new Promise<void>((resolve, reject) => {
        const index = queue.length;
        const admit = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        const onAbort = () => {
          if (queue[index] !== admit) return;
          queue[index] = null;
          waiting--;
          reject(signal?.reason);
        };
        queue.push(admit);
        waiting++;
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    },
    leave() {
      const admit = next();
      if (admit === null) {
        active = Math.max(0, active - 1);
        return;
      }
      // The slot passes straight to the next waiter: `active` stays the same.
      waiting--;
      admit();
    },
    get active() {
      return active;
    },
    get waiting() {
      return waiting;
    },
  };
}
