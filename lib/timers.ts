/**
 * Keeping a timer from holding the process open. Deno 2.9's `setTimeout` and
 * `setInterval` return a Node-style `Timeout` object; `Deno.unrefTimer` on its
 * `Number(...)` id is silently ignored there, so a "background" timer kept the
 * process alive for its whole delay (60 s for every request's deadline group).
 * These helpers use the handle's own `ref`/`unref` when it has them, and Deno's
 * functions for a plain numeric id.
 *
 * @module
 */

/**
 * The longest delay a timer holds (2^31 − 1 ms, about 24.8 days): a longer one
 * fires at once. Durations from config and clients are bounded by it.
 */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** What `setTimeout` / `setInterval` return, whichever typings are in force. */
export type TimerHandle = ReturnType<typeof setTimeout> | number;

interface RefCounted {
  ref(): unknown;
  unref(): unknown;
}

function refCounted(handle: TimerHandle): RefCounted | null {
  const candidate = handle as unknown as Partial<RefCounted> | null;
  return typeof candidate === "object" && candidate !== null &&
      typeof candidate.unref === "function" && typeof candidate.ref === "function"
    ? candidate as RefCounted
    : null;
}

/**
 * Lets the process exit while this timer is pending (it still fires if the
 * process lives on).
 *
 * @example A background interval does not keep a script running
 * ```ts
 * import { unrefTimer } from "./timers.ts";
 * const id = setInterval(() => {}, 60_000);
 * unrefTimer(id);
 * clearInterval(id);
 * ```
 * @param handle What `setTimeout` or `setInterval` returned.
 */
export function unrefTimer(handle: TimerHandle): void {
  const timer = refCounted(handle);
  if (timer !== null) timer.unref();
  else Deno.unrefTimer(handle as number);
}

/**
 * Makes a timer keep the process alive again (the default of a new timer).
 *
 * @example
 * ```ts
 * import { refTimer, unrefTimer } from "./timers.ts";
 * const id = setTimeout(() => {}, 10);
 * unrefTimer(id);
 * refTimer(id);
 * clearTimeout(id);
 * ```
 * @param handle What `setTimeout` or `setInterval` returned.
 */
export function refTimer(handle: TimerHandle): void {
  const timer = refCounted(handle);
  if (timer !== null) timer.ref();
  else Deno.refTimer(handle as number);
}
