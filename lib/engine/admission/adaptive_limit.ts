/**
 * The adaptive concurrency limit of the admission gate (issue 33): how many
 * operations may run at once, sized by what the process can do rather than
 * by a fixed count. Its signal is the event-loop delay: how late a timer
 * fires. While the one JavaScript thread keeps up, a timer fires on time
 * whatever the operations wait for (slow subgraphs cost no CPU), and the
 * limit grows whenever it binds; once the thread is saturated every turn of
 * the loop runs the ready work of every running operation, the delay grows
 * with their number, and the limit shrinks toward what the thread finishes
 * in time (a gradient, as Netflix's concurrency-limits and Envoy's adaptive
 * concurrency filter do with latency; latency itself is no signal here, as
 * it includes the subgraphs' time). Operations over the limit wait in the
 * gate's bounded queue and are refused past it (503 + `Retry-After`).
 *
 * A delay counts when two samples in a row exceed the target: one pause (a
 * major garbage collection, one large `JSON.parse`) is not saturation.
 *
 * The delay alone does not see the point where more concurrency stops buying
 * throughput: under a saturating closed loop many small turns keep each timer
 * nearly on time while every operation in flight holds its data longer (the
 * federation benchmark ran 50 at once, 20–30 MiB more RSS and no more RPS than
 * 16). So the limit grows only while the serving threads have CPU to spare
 * (`busy`, when the gate measures it), and starts at twice its floor. Spare
 * means on average over the last {@linkcode SPARE_SAMPLES} samples: a
 * saturated thread still has 20 ms windows that look idle (every operation
 * waiting on its subgraphs at once), and growing on each of them made the
 * limit land at 20, 25, 32 or 40 in runs of one build (session 13), each with
 * its own throughput and RSS.
 *
 * Under saturation the limit also shrinks: when the serving thread has
 * wanted the CPU (run, or waited to run) at least {@linkcode SATURATED} of
 * the time on average over the last {@linkcode SPARE_SAMPLES} samples and
 * operations wait, it is cut by a tenth (once per such window), not below where it
 * started. Without this it only drifted up on the windows that looked idle
 * (to 150–320 at twice the `query50` shape's capacity, session 14): every
 * operation admitted beyond what keeps the thread busy only waits its turn
 * for the CPU, and the admitted requests' p99 passed a second. Cut, the
 * limit settles where the thread is just kept busy (the gap between
 * {@linkcode SATURATED} and `maxBusy` is the dead band that holds it) and
 * the surplus waits in the queue, or is refused, instead.
 *
 * Pure: samples are fed to it; no clock, no timer.
 *
 * @module
 */

/** An adaptive limit (see {@linkcode createAdaptiveLimit}). */
export interface AdaptiveLimit {
  /** Operations that may run at once now. */
  readonly limit: number;
  /**
   * Feeds one sample: how late the sampling timer fired, ms, and the load
   * at that moment.
   * @returns The new limit.
   */
  sample(delayMs: number, load: AdmissionLoad): number;
}

/** The gate's load when a sample is taken. */
export interface AdmissionLoad {
  /** Operations running. */
  readonly active: number;
  /** Operations waiting for a slot. */
  readonly waiting: number;
  /**
   * CPU the serving thread used or waited for since the last sample, as a
   * share of the time (1 = saturated; `lib/state/thread_cpu.ts`); undefined:
   * not measured.
   */
  readonly busy?: number | undefined;
}

/** Options of {@linkcode createAdaptiveLimit}. */
export interface AdaptiveLimitOptions {
  /** The event-loop delay tolerated, ms (`engine.adaptive_concurrency.target_delay`). @default 20 */
  readonly targetDelayMs?: number;
  /** The limit never goes below (`engine.adaptive_concurrency.min_concurrency`). @default 8 */
  readonly minLimit?: number;
  /** ... nor above (`engine.adaptive_concurrency.max_concurrency`). @default 1000 */
  readonly maxLimit?: number;
  /** The limit before the first sample. @default 2 × minLimit, within maxLimit */
  readonly initialLimit?: number;
  /** Above this `busy` share the limit does not grow (the CPU is the bottleneck). @default 0.85 */
  readonly maxBusy?: number;
}

/** Growth per sample while the limit binds and the loop keeps up. */
const GROWTH = 1.25;
/** The most one sample may cut the limit by (a factor). */
const MAX_CUT = 0.5;
/** Samples the CPU share is averaged over before the limit may grow (100 ms at the gate's 20 ms). */
export const SPARE_SAMPLES = 5;
/** The CPU share (averaged as above) from which the thread counts as saturated: the limit shrinks. */
export const SATURATED = 0.95;
/** The cut while saturated and operations wait (at most once per averaging window). */
const SATURATED_CUT = 0.9;
/**
 * Samples after a cut during which the limit grows by
 * {@linkcode CAREFUL_GROWTH} a sample, not by a quarter (1 s at the gate's
 * 20 ms), as TCP's congestion avoidance follows its slow start. Growing by a
 * quarter right after a cut overshot and cut again: a saw of 60 to 290 every
 * second at twice the `query50` shape's capacity (session 14).
 */
export const CAREFUL_SAMPLES = 50;
/** Growth per sample within {@linkcode CAREFUL_SAMPLES} of a cut (a quarter per averaging window). */
const CAREFUL_GROWTH = 1.05;

/**
 * Creates an adaptive limit.
 *
 * @example It grows while operations wait and the loop keeps up, and shrinks under sustained delay
 * ```ts
 * import assert from "node:assert/strict";
 * import { createAdaptiveLimit } from "./adaptive_limit.ts";
 * const limit = createAdaptiveLimit({ targetDelayMs: 20, minLimit: 4, initialLimit: 16 });
 * assert.equal(limit.sample(2, { active: 16, waiting: 10 }), 20); // every slot taken
 * assert.equal(limit.sample(60, { active: 20, waiting: 0 }), 20); // one late timer: a pause
 * assert.equal(limit.sample(40, { active: 20, waiting: 0 }), 10); // sustained: cut by 20/40
 * assert.equal(limit.sample(2, { active: 10, waiting: 5, busy: 0.97 }), 10); // no CPU to spare
 * for (let i = 0; i < 3; i++) limit.sample(2, { active: 10, waiting: 5, busy: 0.97 });
 * assert.equal(limit.sample(2, { active: 10, waiting: 5, busy: 0.4 }), 10); // one idle window: no room yet
 * assert.equal(limit.sample(2, { active: 10, waiting: 5, busy: 0.4 }), 11); // room: it grows, by 5 % (at least one) so soon after a cut
 * ```
 *
 * @example Saturated with operations waiting, it shrinks back toward where it started
 * ```ts
 * import assert from "node:assert/strict";
 * import { createAdaptiveLimit } from "./adaptive_limit.ts";
 * const limit = createAdaptiveLimit({ minLimit: 8, initialLimit: 16 });
 * for (let i = 0; i < 10; i++) limit.sample(2, { active: limit.limit, waiting: 50, busy: 0.5 });
 * const grown = limit.limit; // slow subgraphs, CPU to spare: it grew
 * assert.ok(grown > 100);
 * for (let i = 0; i < 60; i++) limit.sample(2, { active: limit.limit, waiting: 50, busy: 1 });
 * assert.ok(limit.limit < grown); // the thread has been saturated: fewer at once
 * for (let i = 0; i < 300; i++) limit.sample(2, { active: limit.limit, waiting: 50, busy: 1 });
 * assert.equal(limit.limit, 16); // not below where it started
 * ```
 * @param options Target delay and bounds.
 * @returns The limit.
 */
export function createAdaptiveLimit(options: AdaptiveLimitOptions = {}): AdaptiveLimit {
  const target = options.targetDelayMs ?? 20;
  const min = Math.max(1, options.minLimit ?? 8);
  const max = Math.max(min, options.maxLimit ?? 1000);
  const initial = Math.min(max, Math.max(min, options.initialLimit ?? 2 * min));
  let limit = initial;
  const maxBusy = options.maxBusy ?? 0.85;
  let previous = 0;
  /** Samples since the limit was last cut. */
  let sinceCut = CAREFUL_SAMPLES;
  /** The CPU shares of the last samples (a ring), and their sum. */
  const shares: number[] = [];
  let sharesSum = 0;
  let next = 0;
  return {
    get limit() {
      return limit;
    },
    sample(delayMs, { active, waiting, busy }) {
      const sustained = Math.min(delayMs, previous);
      previous = delayMs;
      if (busy !== undefined) {
        sharesSum += busy - (shares[next] ?? 0);
        shares[next] = busy;
        next = (next + 1) % SPARE_SAMPLES;
      }
      const spare = shares.length === 0 || sharesSum / shares.length <= maxBusy;
      const saturated = shares.length === SPARE_SAMPLES && sharesSum / SPARE_SAMPLES >= SATURATED;
      sinceCut++;
      if (sustained > target) {
        // Cut from what runs now (a limit far above it means nothing).
        const base = Math.min(limit, Math.max(active, min));
        limit = Math.max(min, Math.floor(base * Math.max(MAX_CUT, target / sustained)));
        sinceCut = 0;
      } else if (saturated && waiting > 0 && limit > initial && sinceCut > SPARE_SAMPLES) {
        // More at once would only wait for the CPU: fewer, the rest queue (or are refused).
        // Once per averaging window: the average still holds the samples before the cut.
        limit = Math.max(initial, Math.floor(limit * SATURATED_CUT));
        sinceCut = 0;
      } else if (delayMs <= target && active >= limit && spare) {
        // It binds (operations wait for it), the loop keeps up and the CPU has had room: more.
        const grown = Math.ceil(limit * (sinceCut < CAREFUL_SAMPLES ? CAREFUL_GROWTH : GROWTH));
        limit = Math.min(max, Math.max(limit + 1, grown));
      }
      return limit;
    },
  };
}
