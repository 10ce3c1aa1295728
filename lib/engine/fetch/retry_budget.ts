/**
 * The retry budget of one subgraph (issue 34): retries on by default must not
 * multiply an outage. Every fetch deposits `retry_percent` of a retry, every
 * retry withdraws one, and deposits count for `ttl` only, so over any `ttl`
 * the retries sent are at most `retry_percent` of the fetches plus a reserve
 * of `min_per_sec × ttl` (for a subgraph that sees few requests). The model
 * and the defaults (`ttl` 10 s, `min_per_sec` 10, `retry_percent` 0.2) are
 * Apollo Router's `experimental_retry`, which is Tower's `TpsBudget`: the
 * window is ten slots of `ttl / 10`; a withdrawal is recorded in the current
 * slot, so it, too, is forgotten after `ttl`.
 *
 * Pure but stateful: the clock is a parameter; one budget per subgraph, made
 * with the router state (a reload starts a new one).
 *
 * @module
 */

/** `traffic_shaping.{all,subgraphs.<name>}.retry` budget keys. */
export interface RetryBudgetPolicy {
  /** How long a deposit counts, ms (1 s to 60 s). */
  readonly ttlMs: number;
  /** Retries always allowed per second, on top of the deposits. */
  readonly minPerSec: number;
  /** Retries earned per fetch, 0 to 1 (0.2: one retry per five fetches). */
  readonly retryPercent: number;
}

/** A subgraph's retry budget. */
export interface RetryBudget {
  /** Records a fetch (its first attempt). */
  deposit(): void;
  /** Takes one retry if the budget allows it. @returns Whether the retry may be sent. */
  withdraw(): boolean;
}

/** Slots of the window, as in Tower. */
const SLOTS = 10;

/**
 * Builds a retry budget.
 *
 * @example Five fetches earn one retry at 20 %, beyond a reserve of none
 * ```ts
 * import assert from "node:assert/strict";
 * import { createRetryBudget } from "./retry_budget.ts";
 * let now = 0;
 * const budget = createRetryBudget({ ttlMs: 1000, minPerSec: 0, retryPercent: 0.2 }, { now: () => now });
 * for (let i = 0; i < 5; i++) budget.deposit();
 * assert.equal(budget.withdraw(), true);
 * assert.equal(budget.withdraw(), false);
 * now = 2000; // the deposits have expired
 * for (let i = 0; i < 4; i++) budget.deposit();
 * assert.equal(budget.withdraw(), false);
 * ```
 * @param policy Window, reserve and ratio.
 * @param options The monotonic clock, ms.
 * @returns The budget.
 */
export function createRetryBudget(
  policy: RetryBudgetPolicy,
  options: { readonly now: () => number },
): RetryBudget {
  const { now } = options;
  const window = policy.ttlMs / SLOTS;
  const reserve = policy.minPerSec * (policy.ttlMs / 1000);
  // Whole units, as in Tower: at 0.2 a fetch deposits 1 and a retry costs 5 (no float drift).
  const scale = policy.retryPercent > 0 ? Math.round(1 / Math.min(1, policy.retryPercent)) : 1;
  const deposit = policy.retryPercent > 0 ? 1 : 0;
  const slots = new Array<number>(SLOTS).fill(0);
  let index = 0;
  let slotStart = now();
  let balance = 0;
  const expire = () => {
    const t = now();
    let elapsed = t - slotStart;
    if (elapsed < window) return;
    // Each slot passed is cleared (what it held is forgotten), at most the whole ring.
    for (let k = 0; elapsed >= window && k < SLOTS; k++, elapsed -= window) {
      index = (index + 1) % SLOTS;
      balance -= slots[index]!;
      slots[index] = 0;
    }
    slotStart = t;
  };
  const put = (amount: number) => {
    slots[index] = slots[index]! + amount;
    balance += amount;
  };
  return {
    deposit() {
      expire();
      put(deposit);
    },
    withdraw() {
      expire();
      if (balance + reserve * scale < scale) return false;
      put(-scale);
      return true;
    },
  };
}
