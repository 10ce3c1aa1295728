/**
 * Subscription admission by capacity (issue 39): whether the serving thread can take one more
 * subscription's share of the fan-out (every event delivered to every subscriber), judged
 * from what it costs now, and whether the router itself is behind its events.
 *
 * Its signal is the serving thread's CPU demand (run plus runnable-waiting time, as the
 * adaptive limit reads it, `lib/state/thread_cpu.ts`; a share of one thread, never above 1,
 * `lib/engine/admission/cpu_share.ts`). One subscription's cost is the slope of `busy`
 * against `active` (least squares through zero: `Σ busy × active / Σ active²`) over those of
 * the last {@linkcode CAPACITY_SAMPLES} samples in which events were handed to subscribers,
 * each sample with its own `active`: `busy / active` while the count holds still, and
 * weighted toward the samples with the most subscribers while it grows. All of the thread's
 * CPU in them is counted as the subscriptions' (a conservative estimate, so a router busy
 * with queries admits fewer). A new subscription is admitted while `cost × (active now + 1)`
 * stays within `maxShare` (`subscriptions.admission.max_cpu_share`).
 *
 * Two mistakes of the first estimate (issue 39) are fixed here. It divided the averaged busy
 * share by the *averaged* active count and multiplied by the count *now*: while subscribers
 * crowd in, the average lags the count, and the projection multiplied the lag (1 000
 * subscribers connecting: one of the first was refused at "545 %" of the thread,
 * bench/subscriptions/results.md). And it counted a window in which nothing was delivered (subscribers connecting, the feed paused, any event
 * in the last half second) as fan-out: the CPU of the connections' handshakes and planning
 * read as the cost of delivering events. A sample without deliveries is now no evidence of
 * the fan-out's cost.
 *
 * "Busy" is the demand, waiting for a CPU included, by decision: a router whose thread waits
 * for a core delivers late whoever's fault the wait is, and admitting by run time alone
 * (tried, issue 39) filled the core's nominal capacity that the neighbours then took: 282 to
 * 437 of 1 000 subscribers admitted at 100 events/s with a p99 of 0.9 to 10 s, against 113
 * and a p99 of 95 ms by demand (bench/subscriptions/results.md). On a machine overloaded by
 * other processes that reading is high even for a router with little work of its own, so a
 * refusal for saturation needs the router's own load too: the first {@linkcode MIN_ADMITTED}
 * subscriptions are admitted whatever the reading, behind or not (their refusal would be the
 * neighbours' fault, and refusing them frees nothing the neighbours do not take). Once the
 * thread is saturated (demand at least {@linkcode SATURATED_SHARE} of the time) while events
 * flow it is *behind*: nothing more is admitted past that floor, and a subscriber whose
 * results wait is not blamed for it (`event_stream.ts`).
 *
 * Pure: samples are fed to it; no clock, no timer.
 *
 * @module
 */

/** Samples the CPU share is averaged over (0.5 s at the subscriptions' 100 ms). */
export const CAPACITY_SAMPLES = 5;
/** The CPU demand (averaged as above) from which the serving thread is behind its events. */
export const SATURATED_SHARE = 0.95;
/** Subscriptions admitted whatever the estimate and whether or not the thread is behind. */
export const MIN_ADMITTED = 16;

/** One sample of the fan-out. */
export interface FanoutSample {
  /** The serving thread's CPU demand since the last sample, as a share of the time (1 = saturated). */
  readonly busy: number;
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
 * @example Saturated while events flow: behind, nothing admitted past the floor; no events: no fan-out to judge
 * ```ts
 * import assert from "node:assert/strict";
 * import { createFanoutCapacity, MIN_ADMITTED } from "./fanout_capacity.ts";
 * const capacity = createFanoutCapacity();
 * for (let i = 0; i < 5; i++) capacity.sample({ busy: 1, active: 20, pushes: 50 });
 * assert.equal(capacity.behind, true);
 * assert.equal(capacity.admit(20)?.reason, "behind");
 * assert.equal(capacity.admit(MIN_ADMITTED - 1), null); // so few are not the cause
 * assert.equal(capacity.admit(0), null); // one subscription is never refused
 * for (let i = 0; i < 5; i++) capacity.sample({ busy: 1, active: 10, pushes: 0 });
 * assert.equal(capacity.behind, false);
 * assert.equal(capacity.admit(1000), null);
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
  let pushes = 0;
  /** One subscription's share of the thread, from the samples with deliveries (null: none). */
  let cost: number | null = null;
  const flowing = () => pushes > 0;
  const behind = () => flowing() && busy >= SATURATED_SHARE;
  return {
    sample(sample) {
      ring[next] = sample;
      next = (next + 1) % CAPACITY_SAMPLES;
      busy = 0;
      pushes = 0;
      let busyByActive = 0;
      let activeSquared = 0;
      for (const s of ring) {
        busy += s.busy / ring.length;
        pushes += s.pushes;
        // Each sample with its own count (an average of counts lags a crowd coming in), and
        // only those with deliveries (else the CPU went to something other than the fan-out).
        if (s.pushes > 0 && s.active > 0) {
          busyByActive += s.busy * s.active;
          activeSquared += s.active * s.active;
        }
      }
      cost = activeSquared === 0 ? null : busyByActive / activeSquared;
    },
    admit(now) {
      // The router's own load first: so few are no cause of saturation, whatever the reading.
      if (now < MIN_ADMITTED) return null;
      if (behind()) {
        return {
          reason: "behind",
          message:
            `The router is behind the events of the subscriptions it serves (its serving thread is saturated: ${
              Math.round(busy * 100)
            } % busy); try again later`,
        };
      }
      if (cost === null) return null;
      const projected = cost * (now + 1);
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
