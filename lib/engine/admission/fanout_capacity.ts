/**
 * Subscription admission by capacity (issue 39): whether the serving thread can take one more
 * subscription's share of the fan-out (every event delivered to every subscriber), judged
 * from what it costs now, and whether the router itself is behind its events.
 *
 * Its signals are the serving thread's CPU time (`lib/state/thread_cpu.ts`): the share of the
 * time it ran (`used`) and the share it ran or waited to run (`busy`, its demand, as the
 * adaptive limit reads it), averaged over the last {@linkcode CAPACITY_SAMPLES} samples, and
 * the subscriptions active meanwhile. While events flow, one subscription costs about
 * `used / active` of the thread (all of the thread's work is counted as the subscriptions':
 * a conservative estimate, so a router busy with queries admits fewer). A new subscription
 * is admitted while `used / active × (active now + 1)` stays within `maxShare`
 * (`subscriptions.admission.max_cpu_share`): the projection counts every subscription
 * admitted since the last sample, so a burst of subscribers does not overshoot while the
 * average catches up. The cost is the run time, not the demand: on a machine whose other
 * work keeps the thread waiting for its core, the wait would count as the subscriptions'
 * cost many times over (one wait per wake-up, whatever the work). Once the demand reaches
 * {@linkcode SATURATED_SHARE} of the time the thread is *behind*: nothing more is admitted,
 * and a subscriber whose results wait is not blamed for it (`subscription.ts`).
 *
 * The first {@linkcode MIN_ADMITTED} subscriptions are admitted whatever the estimate (with so
 * few, `busy / active` is mostly the router's other work), unless the thread is behind.
 *
 * Pure: samples are fed to it; no clock, no timer.
 *
 * @module
 */

/** Samples the CPU share is averaged over (0.5 s at the subscriptions' 100 ms). */
export const CAPACITY_SAMPLES = 5;
/** The CPU demand (averaged as above) from which the serving thread is behind its events. */
export const SATURATED_SHARE = 0.95;
/** Subscriptions admitted whatever the estimate (while the thread is not behind). */
export const MIN_ADMITTED = 16;

/** One sample of the fan-out. */
export interface FanoutSample {
  /** The serving thread's CPU demand (run + waiting) since the last sample, as a share of the time (1 = saturated). */
  readonly busy: number;
  /** The share of the time it ran (its own work, without waiting for a CPU). @default busy */
  readonly used?: number;
  /** Client subscriptions active at the sample. */
  readonly active: number;
  /** Events handed to client subscriptions since the last sample. */
  readonly pushes: number;
}

/** Why a subscription is refused. */
export interface FanoutRefusal {
  /** `behind`: the thread is saturated; `capacity`: one more would pass `maxShare`. */
  readonly reason: "behind" | "capacity";
  /** What the client is told (names the key). */
  readonly message: string;
}

/** The capacity estimate (see {@linkcode createFanoutCapacity}). */
export interface FanoutCapacity {
  /** Feeds one sample. */
  sample(sample: FanoutSample): void;
  /**
   * Whether one more subscription fits.
   * @param active Subscriptions active now.
   * @returns null: admit; else why not.
   */
  admit(active: number): FanoutRefusal | null;
  /** True while the serving thread is saturated and events flow: the router is behind. */
  readonly behind: boolean;
  /** The averaged CPU share (0 before the first sample). */
  readonly busy: number;
}

/** Options of {@linkcode createFanoutCapacity}. */
export interface FanoutCapacityOptions {
  /**
   * The share of the serving thread the subscriptions may be projected to take
   * (`subscriptions.admission.max_cpu_share`). @default 0.8
   */
  readonly maxShare?: number;
}

/**
 * Creates a capacity estimate.
 *
 * @example Events flow, 100 subscribers take 40 % of the thread: 199 fit at 80 %, not 201
 * ```ts
 * import assert from "node:assert/strict";
 * import { createFanoutCapacity } from "./fanout_capacity.ts";
 * const capacity = createFanoutCapacity({ maxShare: 0.8 });
 * for (let i = 0; i < 5; i++) capacity.sample({ busy: 0.4, active: 100, pushes: 1000 });
 * assert.equal(capacity.admit(150), null);
 * assert.equal(capacity.admit(198), null);
 * assert.equal(capacity.admit(200)?.reason, "capacity");
 * ```
 *
 * @example Saturated while events flow: behind, nothing admitted; no events: no fan-out to judge
 * ```ts
 * import assert from "node:assert/strict";
 * import { createFanoutCapacity } from "./fanout_capacity.ts";
 * const capacity = createFanoutCapacity();
 * for (let i = 0; i < 5; i++) capacity.sample({ busy: 1, active: 10, pushes: 50 });
 * assert.equal(capacity.behind, true);
 * assert.equal(capacity.admit(3)?.reason, "behind");
 * for (let i = 0; i < 5; i++) capacity.sample({ busy: 1, active: 10, pushes: 0 });
 * assert.equal(capacity.behind, false);
 * assert.equal(capacity.admit(1000), null);
 * ```
 * @example The cost is the run time: a thread that waits for its core is not charged for the wait
 * ```ts
 * import assert from "node:assert/strict";
 * import { createFanoutCapacity } from "./fanout_capacity.ts";
 * const capacity = createFanoutCapacity({ maxShare: 0.8 });
 * for (let i = 0; i < 5; i++) capacity.sample({ busy: 0.9, used: 0.2, active: 100, pushes: 500 });
 * assert.equal(capacity.admit(300), null); // 0.2 / 100 × 301 = 60 %
 * assert.equal(capacity.admit(400)?.reason, "capacity");
 * ```
 * @param options The share the subscriptions may take.
 * @returns The estimate.
 */
export function createFanoutCapacity(options: FanoutCapacityOptions = {}): FanoutCapacity {
  const maxShare = options.maxShare ?? 0.8;
  /** The last samples (a ring). */
  const ring: FanoutSample[] = [];
  let next = 0;
  let busy = 0;
  let used = 0;
  let active = 0;
  let pushes = 0;
  const flowing = () => pushes > 0;
  const behind = () => flowing() && busy >= SATURATED_SHARE;
  return {
    sample(sample) {
      ring[next] = sample;
      next = (next + 1) % CAPACITY_SAMPLES;
      busy = 0;
      used = 0;
      active = 0;
      pushes = 0;
      for (const s of ring) {
        busy += s.busy / ring.length;
        used += (s.used ?? s.busy) / ring.length;
        active += s.active / ring.length;
        pushes += s.pushes;
      }
    },
    admit(now) {
      if (behind()) {
        return {
          reason: "behind",
          message:
            `The router is behind the events of the subscriptions it serves (its serving thread is saturated: ${
              Math.round(busy * 100)
            } % busy); try again later`,
        };
      }
      if (!flowing() || now < MIN_ADMITTED || active < 1) return null;
      const projected = (used / active) * (now + 1);
      if (projected <= maxShare) return null;
      return {
        reason: "capacity",
        message:
          `The router serves as many subscriptions as its serving thread can deliver events to: one more would take it to ${
            Math.round(projected * 100)
          } % of its CPU (subscriptions.admission.max_cpu_share: ${
            Math.round(maxShare * 100)
          } %); try again later`,
      };
    },
    get behind() {
      return behind();
    },
    get busy() {
      return busy;
    },
  };
}
