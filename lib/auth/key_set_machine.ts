/**
 * The state machine of one JWKS URL key source, pure (the clock is an
 * argument, nothing is fetched here; `jwks_source.ts` runs it):
 *
 * - `loading` (never loaded) → `ok` on the first good fetch; `ok` ⇄ `failing`
 *   on fetch outcomes. The last good keys serve while `failing`
 *   (stale-if-error); a log line is due only when the status changes.
 * - Background fetches are due `refresh_interval` after a success, and after a
 *   failure with exponential backoff (`baseBackoffMs · 2^(n−1)`, at most
 *   `maxBackoffMs`).
 * - Refetches for an unknown `kid` draw from a token bucket (Cosmo's
 *   `refresh_unknown_kid`: one credit per `interval`, at most `burst`); a
 *   request may wait for the next credit up to `max_wait`, never longer.
 *
 * @module
 */

/** Where a key source stands. */
export type KeySetStatus = "loading" | "ok" | "failing";

/** Settings of the machine (from `jwks[]`). */
export interface KeySetPolicy {
  /** Milliseconds between background refreshes after a success. */
  readonly refreshIntervalMs: number;
  /** First backoff after a failure, milliseconds. @default {1000} */
  readonly baseBackoffMs?: number;
  /** Longest backoff, milliseconds. @default {refreshIntervalMs} */
  readonly maxBackoffMs?: number;
  /** `refresh_unknown_kid`. */
  readonly unknownKid: {
    readonly enabled: boolean;
    readonly intervalMs: number;
    readonly burst: number;
    readonly maxWaitMs: number;
  };
}

/** The machine's state (plain data, replaced on every transition). */
export interface KeySetState {
  readonly status: KeySetStatus;
  /** When the last good set was loaded, or null. */
  readonly loadedAt: number | null;
  /** Failures since the last success. */
  readonly failures: number;
  /** When the next background fetch is due. */
  readonly nextFetchAt: number;
  /** Unknown-`kid` credits at `creditsAt` (may be negative: reserved by waiters). */
  readonly credits: number;
  readonly creditsAt: number;
}

/** A transition's result: the new state and, on a status change, what to log. */
export interface KeySetTransition {
  readonly state: KeySetState;
  /** Set when the status changed (log once per change). */
  readonly changed: { readonly from: KeySetStatus; readonly to: KeySetStatus } | null;
}

/**
 * The state of a new key source: loading, its first fetch due now, a full bucket.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { initialKeySetState } from "./key_set_machine.ts";
 * const state = initialKeySetState({ now: 5, burst: 2 });
 * assert.equal(state.status, "loading");
 * assert.equal(state.nextFetchAt, 5);
 * assert.equal(state.credits, 2);
 * ```
 * @param options The clock and the bucket size.
 * @returns The state.
 */
export function initialKeySetState(
  options: { readonly now: number; readonly burst: number },
): KeySetState {
  return {
    status: "loading",
    loadedAt: null,
    failures: 0,
    nextFetchAt: options.now,
    credits: options.burst,
    creditsAt: options.now,
  };
}

function transition(state: KeySetState, next: KeySetState): KeySetTransition {
  return {
    state: next,
    changed: next.status === state.status ? null : { from: state.status, to: next.status },
  };
}

/**
 * A fetch succeeded: `ok`, next background fetch one refresh interval away.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fetchSucceeded, initialKeySetState } from "./key_set_machine.ts";
 * const policy = { refreshIntervalMs: 60_000, unknownKid: { enabled: true, intervalMs: 1, burst: 1, maxWaitMs: 0 } };
 * const { state, changed } = fetchSucceeded(initialKeySetState({ now: 0, burst: 1 }), { now: 10, policy });
 * assert.equal(state.nextFetchAt, 60_010);
 * assert.deepEqual(changed, { from: "loading", to: "ok" });
 * ```
 * @param state The current state.
 * @param options The clock and the policy.
 * @returns The transition.
 */
export function fetchSucceeded(
  state: KeySetState,
  options: { readonly now: number; readonly policy: KeySetPolicy },
): KeySetTransition {
  return transition(state, {
    ...state,
    status: "ok",
    loadedAt: options.now,
    failures: 0,
    nextFetchAt: options.now + options.policy.refreshIntervalMs,
  });
}

/**
 * The backoff after `failures` consecutive failures.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { backoffMs } from "./key_set_machine.ts";
 * const policy = { refreshIntervalMs: 10_000, unknownKid: { enabled: true, intervalMs: 1, burst: 1, maxWaitMs: 0 } };
 * assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => backoffMs(n, policy)), [1000, 2000, 4000, 8000, 10_000, 10_000]);
 * ```
 * @param failures Consecutive failures (≥ 1).
 * @param policy The policy.
 * @returns Milliseconds until the next attempt.
 */
export function backoffMs(failures: number, policy: KeySetPolicy): number {
  const base = policy.baseBackoffMs ?? 1000;
  const max = Math.max(base, policy.maxBackoffMs ?? policy.refreshIntervalMs);
  return Math.min(max, base * 2 ** Math.min(30, Math.max(0, failures - 1)));
}

/**
 * A fetch failed: `failing` when keys were loaded (they keep serving), still
 * `loading` otherwise; the next background fetch backs off exponentially.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fetchFailed, fetchSucceeded, initialKeySetState } from "./key_set_machine.ts";
 * const policy = { refreshIntervalMs: 60_000, unknownKid: { enabled: true, intervalMs: 1, burst: 1, maxWaitMs: 0 } };
 * const ok = fetchSucceeded(initialKeySetState({ now: 0, burst: 1 }), { now: 0, policy }).state;
 * const once = fetchFailed(ok, { now: 100, policy });
 * assert.deepEqual(once.changed, { from: "ok", to: "failing" });
 * const twice = fetchFailed(once.state, { now: 1100, policy });
 * assert.equal(twice.changed, null); // logged once per state change
 * assert.equal(twice.state.nextFetchAt, 3100);
 * assert.equal(twice.state.loadedAt, 0); // the last good set still serves
 * ```
 * @param state The current state.
 * @param options The clock and the policy.
 * @returns The transition.
 */
export function fetchFailed(
  state: KeySetState,
  options: { readonly now: number; readonly policy: KeySetPolicy },
): KeySetTransition {
  const failures = state.failures + 1;
  return transition(state, {
    ...state,
    status: state.loadedAt === null ? "loading" : "failing",
    failures,
    nextFetchAt: options.now + backoffMs(failures, options.policy),
  });
}

/** What an unknown-`kid` token may do: refetch now, after a wait, or not at all. */
export type UnknownKidDecision =
  | { readonly kind: "now" }
  | { readonly kind: "wait"; readonly ms: number }
  | { readonly kind: "denied" };

/**
 * Draws an unknown-`kid` refetch credit (a token bucket, as Go's `rate.Limiter`
 * reserves): a credit now, else the next one if it comes within `max_wait`
 * (reserved), else denied. Disabled → always denied.
 *
 * @example Burst 2, one credit per 10 s, wait at most 1 s
 * ```ts
 * import assert from "node:assert/strict";
 * import { initialKeySetState, takeUnknownKidCredit } from "./key_set_machine.ts";
 * const policy = { refreshIntervalMs: 60_000, unknownKid: { enabled: true, intervalMs: 10_000, burst: 2, maxWaitMs: 1000 } };
 * let state = initialKeySetState({ now: 0, burst: 2 });
 * const kinds: string[] = [];
 * for (let i = 0; i < 5; i++) {
 *   const taken = takeUnknownKidCredit(state, { now: 0, policy });
 *   state = taken.state;
 *   kinds.push(taken.decision.kind);
 * }
 * assert.deepEqual(kinds, ["now", "now", "denied", "denied", "denied"]);
 * const later = takeUnknownKidCredit(state, { now: 9_500, policy });
 * assert.deepEqual(later.decision, { kind: "wait", ms: 500 });
 * ```
 * @param state The current state.
 * @param options The clock and the policy.
 * @returns The new state and the decision.
 */
export function takeUnknownKidCredit(
  state: KeySetState,
  options: { readonly now: number; readonly policy: KeySetPolicy },
): { readonly state: KeySetState; readonly decision: UnknownKidDecision } {
  const { enabled, intervalMs, burst, maxWaitMs } = options.policy.unknownKid;
  if (!enabled) return { state, decision: { kind: "denied" } };
  const interval = Math.max(1, intervalMs);
  const elapsed = Math.max(0, options.now - state.creditsAt);
  const credits = Math.min(burst, state.credits + elapsed / interval);
  if (credits >= 1) {
    return {
      state: { ...state, credits: credits - 1, creditsAt: options.now },
      decision: { kind: "now" },
    };
  }
  const waitMs = Math.ceil((1 - credits) * interval - 1e-6); // float noise must not add 1 ms
  if (waitMs > maxWaitMs) {
    return { state: { ...state, credits, creditsAt: options.now }, decision: { kind: "denied" } };
  }
  return {
    state: { ...state, credits: credits - 1, creditsAt: options.now },
    decision: { kind: "wait", ms: waitMs },
  };
}

/**
 * Seconds a client should wait before retrying while no keys are loaded
 * (`Retry-After`): until the next fetch attempt, at least 1.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { initialKeySetState, retryAfterSeconds } from "./key_set_machine.ts";
 * assert.equal(retryAfterSeconds({ ...initialKeySetState({ now: 0, burst: 1 }), nextFetchAt: 2500 }, { now: 0 }), 3);
 * assert.equal(retryAfterSeconds(initialKeySetState({ now: 0, burst: 1 }), { now: 0 }), 1);
 * ```
 * @param state The current state.
 * @param options The clock.
 * @returns Whole seconds, ≥ 1.
 */
export function retryAfterSeconds(state: KeySetState, options: { readonly now: number }): number {
  return Math.max(1, Math.ceil((state.nextFetchAt - options.now) / 1000));
}
