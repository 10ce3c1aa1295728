/**
 * The admission gate: at most `limit` operations execute at once in an
 * isolate, and none starts while the in-flight memory budget is spent; the
 * others wait in arrival order, in a bounded queue (`max_queue_size`) for a
 * bounded time (`max_queue_wait`). Beyond either the answer is a 503
 * `SERVICE_OVERLOADED` with `Retry-After` (Apollo's and Cosmo's floor): a
 * flood gets fast refusals instead of a queue that grows without end.
 *
 * Under CPU saturation, running every accepted request at once only
 * interleaves them: each holds its partial data for many times longer, that
 * data outlives young-generation collections and is promoted, and
 * old-generation collections then cost both memory and CPU. A waiting
 * operation holds only its request.
 *
 * The number of operations let run at once is either a fixed count
 * (`engine.max_concurrent_operations`) or, by default, an adaptive limit sized
 * by what the process can do (`adaptive_limit.ts`): while operations run or
 * wait, a timer samples the event-loop delay every `sampleIntervalMs` and
 * feeds it to the limit (and, with a fixed count too, looks again whether
 * `blocked` cleared while operations wait on it). An idle gate runs no timer.
 *
 * The gate keeps its counters as plain values (`admitted`, `refused`, …) for
 * whoever reports them; timers and the clock are injected.
 *
 * @module
 */
import { onAbort } from "../../cancellation.ts";
import type { AdaptiveLimit } from "./adaptive_limit.ts";
import { cpuShare } from "./cpu_share.ts";
import { RouterError } from "../../errors.ts";

/** An admission gate (see {@linkcode createAdmissionGate}). */
export interface AdmissionGate {
  /**
   * Waits for a slot. Resolves at once when one is free; rejects with a
   * `SERVICE_OVERLOADED` error when the queue is full or the wait passes
   * `maxQueueWaitMs`, and with the signal's reason when the caller goes away
   * while waiting (no slot taken in either case). Every resolved `enter` must
   * be paired with one `leave`.
   */
  enter(signal?: AbortSignal): Promise<void>;
  /** Frees the slot taken by `enter` (the next waiter gets it). */
  leave(): void;
  /**
   * Counts request-body bytes just read, before the request takes a slot: a
   * body is read (and held while queued and running) outside the slot, so a
   * client that sends it slowly holds no slot. Throws the `SERVICE_OVERLOADED`
   * error (a refusal, counted like the others) when the held bytes would pass
   * `maxBodyBytes`; nothing is counted then.
   */
  holdBody(bytes: number): void;
  /** Returns body bytes counted by `holdBody` (when the request is answered). */
  releaseBody(bytes: number): void;
  /** Request-body bytes held now. */
  readonly bodyBytes: number;
  /** Admits waiters while slots are free and nothing blocks (memory released). */
  pump(): void;
  /** Operations holding a slot. */
  readonly active: number;
  /** Operations allowed at once now (Infinity: no limit). */
  readonly limit: number;
  /** Operations waiting for one. */
  readonly waiting: number;
  /** Cells of the queue array, served ones included (bounded under sustained load). */
  readonly backlog: number;
  /** Operations admitted so far. */
  readonly admitted: number;
  /** Operations refused with `SERVICE_OVERLOADED` so far (queue full or wait over). */
  readonly refused: number;
  /**
   * True while the gate turns work away: its queue is full, or it refused an
   * operation within the last `saturationWindowMs` (readiness answers 503).
   */
  readonly saturated: boolean;
}

/** Options of {@linkcode createAdmissionGate}. */
export interface AdmissionOptions {
  /** Operations that may wait (`traffic_shaping.router.max_queue_size`). @default Infinity */
  readonly maxQueueSize?: number;
  /** How long one may wait, ms (`traffic_shaping.router.max_queue_wait`). @default Infinity */
  readonly maxQueueWaitMs?: number;
  /**
   * Request-body bytes all requests may hold, read and not yet answered
   * (`traffic_shaping.router.max_buffered_body_bytes`). @default Infinity
   */
  readonly maxBodyBytes?: number;
  /** While it returns true nothing is admitted (the memory budget is spent). */
  readonly blocked?: () => boolean;
  /**
   * Sizes the gate instead of the fixed `limit`: fed the event-loop delay
   * every `sampleIntervalMs` while operations run or wait.
   */
  readonly adaptive?: AdaptiveLimit;
  /** How often the adaptive limit is fed a sample, ms. @default 20 */
  readonly sampleIntervalMs?: number;
  /**
   * CPU time the serving threads used so far, µs (the adaptive limit grows only while they
   * have CPU to spare); absent: not measured.
   */
  readonly cpuTime?: () => number;
  /** Cores the serving threads have (`workers`), for the share `cpuTime` gives. @default 1 */
  readonly cores?: number;
  /** How long a refusal keeps {@linkcode AdmissionGate.saturated} true, ms. @default 1000 */
  readonly saturationWindowMs?: number;
  /** Monotonic clock, ms. @default performance.now */
  readonly now?: () => number;
  /** Timer functions (tests inject fakes). @default setTimeout/clearTimeout */
  readonly setTimer?: (callback: () => void, ms: number) => number;
  readonly clearTimer?: (id: number) => void;
}

const ADMITTED: Promise<void> = Promise.resolve();

/**
 * The refusal of an overloaded gate: 503 `SERVICE_OVERLOADED` with `Retry-After`.
 * @param reason Why: the queue is full, the wait was too long, or bodies fill their budget.
 * @returns The error.
 */
export function overloaded(reason: OverloadReason): RouterError {
  return new RouterError(
    "SERVICE_OVERLOADED",
    `The router is overloaded: ${OVERLOAD_MESSAGES[reason]}`,
    {
      details: { reason, retry_after: 1 },
    },
  );
}

/**
 * Why the router refuses: the queue is full, the wait was too long (for a slot
 * or for memory), request bodies fill their budget, or (the connection guard)
 * connections fill theirs.
 */
export type OverloadReason =
  | "queue_full"
  | "queue_wait"
  | "memory_wait"
  | "body_bytes"
  | "max_connections";

const OVERLOAD_MESSAGES: Readonly<Record<OverloadReason, string>> = {
  queue_full: "its queue is full (traffic_shaping.router.max_queue_size)",
  queue_wait: "the request waited too long for a slot (traffic_shaping.router.max_queue_wait)",
  memory_wait:
    "the request waited too long for memory (traffic_shaping.router.max_in_flight_bytes, max_queue_wait)",
  body_bytes:
    "the request bodies it holds would pass traffic_shaping.router.max_buffered_body_bytes",
  max_connections:
    "it holds as many client connections as it may (traffic_shaping.router.max_connections)",
};

interface Waiter {
  admit: (() => void) | null;
}

/** What an admitted waiter's queue cell holds. */
const GONE: Waiter = Object.freeze({ admit: null }) as Waiter;

/**
 * Creates an admission gate.
 *
 * @example Two slots, a queue of one: the fourth caller is refused
 * ```ts
 * import assert from "node:assert/strict";
 * import { createAdmissionGate } from "./queue.ts";
 * const gate = createAdmissionGate(2, { maxQueueSize: 1 });
 * await gate.enter();
 * await gate.enter();
 * const third = gate.enter();
 * await assert.rejects(gate.enter(), { code: "SERVICE_OVERLOADED" });
 * assert.equal(gate.saturated, true);
 * gate.leave();
 * await third;
 * assert.equal(gate.active, 2);
 * assert.equal(gate.refused, 1);
 * ```
 * @param limit Operations allowed at once; 0 (or less) = no limit.
 * @param options Queue bounds, memory block, clock and timers.
 * @returns The gate.
 */
export function createAdmissionGate(limit: number, options: AdmissionOptions = {}): AdmissionGate {
  const adaptive = options.adaptive;
  let max = adaptive ? adaptive.limit : limit > 0 ? limit : Infinity;
  const interval = options.sampleIntervalMs ?? 20;
  const maxQueue = options.maxQueueSize ?? Infinity;
  const maxWait = options.maxQueueWaitMs ?? Infinity;
  const maxBodyBytes = options.maxBodyBytes ?? Infinity;
  let bodyBytes = 0;
  const blocked = options.blocked ?? (() => false);
  const window = options.saturationWindowMs ?? 1000;
  const now = options.now ?? (() => performance.now());
  const setTimer = options.setTimer ?? ((callback, ms) => Number(setTimeout(callback, ms)));
  const clearTimer = options.clearTimer ?? ((id) => clearTimeout(id));
  let active = 0;
  let admitted = 0;
  let refused = 0;
  let lastRefusal = -Infinity;
  // FIFO with a moving head (no shifting); a waiter that left has admit = null.
  let queue: Waiter[] = [];
  let head = 0;
  let waiting = 0;
  /** The sampling timer of the adaptive limit (undefined: idle) and when it is due. */
  let sampler: number | undefined;
  let due = 0;
  const cpuTime = options.cpuTime;
  const cores = Math.max(1, options.cores ?? 1);
  let cpuSeen = cpuTime?.() ?? 0;
  let cpuSeenAt = now();
  /** The CPU share used since the last sample, or undefined when not measured. */
  function busy(at: number): number | undefined {
    if (cpuTime === undefined) return undefined;
    const cpu = cpuTime();
    const share = cpuShare(cpu - cpuSeen, { windowMs: at - cpuSeenAt, cores });
    cpuSeen = cpu;
    cpuSeenAt = at;
    return share;
  }
  function sample(): void {
    sampler = undefined;
    if (adaptive) {
      const at = now();
      max = adaptive.sample(Math.max(0, at - due), { active, waiting, busy: busy(at) });
    }
    pump();
    sampling();
  }
  /** Stops the sampler once nothing runs or waits (an idle router holds no timer). */
  function settle(): void {
    if (sampler === undefined || active > 0 || waiting > 0) return;
    clearTimer(sampler);
    sampler = undefined;
  }
  /**
   * Keeps the sampler running while there is work, and only then; without an
   * adaptive limit, while operations wait on a block (what blocks may clear
   * with time: answers whose clients stalled are ended then).
   */
  function sampling(): void {
    if (sampler !== undefined || (active === 0 && waiting === 0)) return;
    if (adaptive === undefined && (waiting === 0 || !blocked())) return;
    due = now() + interval;
    // A sampler that starts after an idle spell measures the CPU from now on.
    if (cpuTime !== undefined && due - cpuSeenAt > 4 * interval) {
      cpuSeen = cpuTime();
      cpuSeenAt = due - interval;
    }
    sampler = setTimer(sample, interval);
  }
  function refuse(reason: OverloadReason): RouterError {
    refused++;
    lastRefusal = now();
    return overloaded(reason);
  }
  function pump(): void {
    while (waiting > 0 && active < max && !blocked()) {
      const waiter = queue[head];
      queue[head++] = GONE;
      const admit = waiter?.admit;
      if (!admit) continue;
      waiting--;
      active++;
      admitted++;
      admit();
    }
    if (waiting === 0 && head > 0) {
      queue = [];
      head = 0;
    } else if (head >= 1024 && head * 2 >= queue.length) {
      // Under sustained load the queue is never empty: drop the served head
      // now and then, or the array would grow by one cell per queued request.
      queue = queue.slice(head);
      head = 0;
    }
  }
  return {
    enter(signal) {
      if (waiting === 0 && active < max && !blocked()) {
        active++;
        admitted++;
        if (sampler === undefined && adaptive) sampling();
        return ADMITTED;
      }
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (waiting >= maxQueue) return Promise.reject(refuse("queue_full"));
      return new Promise<void>((resolve, reject) => {
        const waiter: Waiter = { admit: null };
        let timer: number | undefined;
        let offAbort: () => void = () => {};
        const leaveQueue = () => {
          waiter.admit = null;
          waiting--;
          if (timer !== undefined) clearTimer(timer);
          offAbort();
          settle();
        };
        waiter.admit = () => {
          waiter.admit = null;
          if (timer !== undefined) clearTimer(timer);
          offAbort();
          resolve();
        };
        if (Number.isFinite(maxWait)) {
          timer = setTimer(() => {
            timer = undefined;
            if (waiter.admit === null) return;
            leaveQueue();
            reject(refuse("queue_wait"));
          }, maxWait);
        }
        queue.push(waiter);
        waiting++;
        if (sampler === undefined) sampling();
        if (signal) {
          // A callback, not an event listener, on the request's path (cancellation.ts).
          offAbort = onAbort(signal, () => {
            if (waiter.admit === null) return;
            leaveQueue();
            reject(signal.reason);
          });
        }
      });
    },
    leave() {
      active = Math.max(0, active - 1);
      pump();
      settle();
    },
    pump,
    holdBody(bytes) {
      if (bodyBytes + bytes > maxBodyBytes) throw refuse("body_bytes");
      bodyBytes += bytes;
    },
    releaseBody(bytes) {
      bodyBytes = Math.max(0, bodyBytes - bytes);
    },
    get bodyBytes() {
      return bodyBytes;
    },
    get active() {
      return active;
    },
    get limit() {
      return max;
    },
    get waiting() {
      return waiting;
    },
    get backlog() {
      return queue.length;
    },
    get admitted() {
      return admitted;
    },
    get refused() {
      return refused;
    },
    get saturated() {
      // Full: every slot taken and no room to wait (with no queue, the slots alone).
      return (active >= max && waiting >= maxQueue) || now() - lastRefusal < window;
    },
  };
}
