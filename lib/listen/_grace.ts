/**
 * The end of a graceful shutdown, shared by the serving isolate
 * (`serve.ts`) and the supervisor (`workers.ts`): wait for the listener to
 * drain, at most `grace_period`.
 *
 * @module
 */
import type { Logger } from "../log/mod.ts";

/**
 * Waits for `drained`, at most `graceMs`. Past it, `expire` answers the
 * requests still running (503) and their answers get one more second to go
 * out before this resolves (a stream that never ends is cut then).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { drainWithin } from "./_grace.ts";
 * let expired = false;
 * await drainWithin(new Promise(() => {}), { graceMs: 10, expire: () => expired = true, expiredDelayMs: 0 });
 * assert.ok(expired);
 * ```
 * @param drained Resolves when every in-flight request is answered.
 * @param options The grace, what answers the rest, where that is logged.
 */
export async function drainWithin(
  drained: Promise<unknown>,
  options: {
    readonly graceMs: number;
    readonly expire: () => void;
    readonly log?: Logger;
    /** @default {1000} */
    readonly expiredDelayMs?: number;
  },
): Promise<void> {
  let grace: ReturnType<typeof setTimeout> | undefined;
  let last: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<void>((resolve) => {
    grace = setTimeout(() => {
      options.log?.warn("Shutdown grace period over; answering 503 to requests still running");
      options.expire();
      last = setTimeout(resolve, options.expiredDelayMs ?? 1_000);
    }, options.graceMs);
  });
  try {
    await Promise.race([drained, expired]);
  } finally {
    clearTimeout(grace);
    clearTimeout(last);
  }
}
