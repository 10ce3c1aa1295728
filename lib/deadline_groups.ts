/**
 * Deadlines in groups: the work started within one {@linkcode SLACK_MS}
 * window shares one timer, which aborts what is still running after
 * `timeoutMs` (+ up to the slack). Finished work leaves its group at once, so
 * nothing of it outlives it: a timer or a dependent `AbortSignal` per request
 * would keep it alive for the whole timeout (30 s for a subgraph fetch, 60 s
 * for a client request), which under load is most of the old-generation heap.
 * Used for subgraph fetches (`engine.subgraph_request_timeout`) and client
 * requests (`traffic_shaping.router.request_timeout`).
 *
 * @module
 */
import { refTimer, type TimerHandle, unrefTimer } from "./timers.ts";

/** Granularity of the deadlines, ms. */
export const SLACK_MS = 50;

/** Options of {@linkcode deadlineGroups}. */
export interface DeadlineGroupsOptions {
  /** The abort reason of work past its deadline. */
  readonly reason: () => unknown;
}

/**
 * Creates a deadline tracker.
 *
 * @example Work that finishes in time leaves its group
 * ```ts
 * import assert from "node:assert/strict";
 * import { deadlineGroups } from "./deadline_groups.ts";
 * const track = deadlineGroups(10, { reason: () => new Error("late") });
 * const done = new AbortController();
 * track(done)(); // finished at once
 * const slow = new AbortController();
 * track(slow);
 * await new Promise((resolve) => slow.signal.addEventListener("abort", resolve));
 * assert.equal(slow.signal.reason.message, "late");
 * assert.equal(done.signal.aborted, false);
 * ```
 * @param timeoutMs The deadline after the start, ms.
 * @param options The abort reason.
 * @returns `track(controller)`, which returns the function that untracks it.
 */
export function deadlineGroups(
  timeoutMs: number,
  options: DeadlineGroupsOptions,
): (controller: AbortController) => () => void {
  let group: { readonly started: Set<AbortController>; readonly timer: TimerHandle } | null = null;
  let groupEnd = 0;
  return (controller) => {
    const now = performance.now();
    let current = group;
    if (current === null || now >= groupEnd) {
      const started = new Set<AbortController>();
      const timer = setTimeout(() => {
        const reason = options.reason();
        for (const c of started) c.abort(reason);
        started.clear();
      }, timeoutMs + SLACK_MS);
      current = { started, timer };
      group = current;
      groupEnd = now + SLACK_MS;
    }
    const { started, timer } = current;
    started.add(controller);
    // The timer keeps the process alive only while work of its group runs.
    if (started.size === 1) refTimer(timer);
    return () => {
      if (started.delete(controller) && started.size === 0) unrefTimer(timer);
    };
  };
}
