/**
 * The bytes of answers handed to clients but not yet taken by them (issue
 * 15). An answer leaves the router only as fast as its client reads it; a
 * client that stops reading keeps the whole answer in memory until its
 * connection ends (`keep_alive_timeout` without progress), so many such
 * clients asking for large answers held memory without bound.
 *
 * An answer of at least {@linkcode STREAMED_ANSWER_BYTES} is therefore sent
 * as a stream of slices of its text, and its bytes count until the last
 * slice is taken (or the client goes away). When the count would pass
 * `traffic_shaping.router.max_unsent_answer_bytes`, the oldest unsent answers
 * whose clients made no progress (took no slice) for `stallMs` are ended
 * (their text is let go and no byte of it follows; the connection guard
 * closes such a connection after `keep_alive_timeout` without progress;
 * Envoy's overload manager likewise resets the streams holding the most
 * memory). A client that reads, however slowly, is never cut off (issue 33):
 * while the answers being read fill the limit, {@linkcode UnsentAnswers.full}
 * is true and the admission gate starts no new operation (they wait in its
 * queue, bounded by `max_queue_wait`), so the bytes held stay within the
 * limit plus one answer, and clients that do not read cannot keep the others
 * waiting. The newest answer always goes out. Smaller answers are sent as
 * the text itself (`Deno.serve` copies it in Rust: the fastest path).
 *
 * No I/O; the clock is injected.
 *
 * @module
 */

/** Answers from this size on (UTF-8 bytes) are counted until their client took them. */
export const STREAMED_ANSWER_BYTES = 65_536;
/** Characters of the text encoded per slice. */
const SLICE_CHARS = 65_536;

/** The unsent answers (see {@linkcode createUnsentAnswers}). */
export interface UnsentAnswers {
  /**
   * The body for an answer: `text` itself when small or without a limit,
   * else a stream of its slices, counted until taken.
   * @param text The answer's text.
   * @param bytes Its UTF-8 length.
   * @param taken Called once its bytes are let go (taken, cancelled or ended); never for a text body.
   */
  body(text: string, bytes: number, taken?: () => void): BodyInit;
  /** Bytes of the answers being taken now. */
  readonly bytes: number;
  /**
   * True while the answers being taken fill the limit (admission waits); first
   * ends those whose clients stalled.
   */
  readonly full: boolean;
  /** Answers ended before their client took them, so far. */
  readonly ended: number;
  /** The limit, bytes (0: none). */
  readonly maxBytes: number;
}

/** Options of {@linkcode createUnsentAnswers}. */
export interface UnsentAnswersOptions {
  /** `traffic_shaping.router.max_unsent_answer_bytes` (0: no limit, nothing counted). */
  readonly maxBytes: number;
  /** Called with the bytes of each answer ended to make room. */
  readonly onEnded?: (bytes: number) => void;
  /** Called when an answer's bytes are released (taken, cancelled or ended: admission resumes). */
  readonly onRelease?: () => void;
  /** A client that took no slice for this long has stalled, ms. @default 2000 */
  readonly stallMs?: number;
  /** Monotonic clock, ms. @default performance.now */
  readonly now?: () => number;
}

interface Unsent {
  readonly bytes: number;
  /** When its client last took a slice (or when it was handed over), ms. */
  progress: number;
  /** Ends the stream (its connection closes). */
  readonly end: () => void;
  /** Told when its bytes are let go. */
  readonly taken?: () => void;
}

/**
 * Creates the count of unsent answers.
 *
 * @example Past the limit, the oldest stalled answer is ended for the newest
 * ```ts
 * import assert from "node:assert/strict";
 * import { createUnsentAnswers } from "./unsent_answers.ts";
 * let clock = 0;
 * const unsent = createUnsentAnswers({ maxBytes: 150_000, stallMs: 1000, now: () => clock });
 * const text = "x".repeat(100_000);
 * assert.equal(unsent.body("small", 5), "small");
 * const first = unsent.body(text, text.length) as ReadableStream<Uint8Array>;
 * clock += 5000; // its client took nothing for 5 s
 * const second = unsent.body(text, text.length) as ReadableStream<Uint8Array>;
 * assert.equal(unsent.ended, 1);
 * assert.equal(unsent.bytes, 100_000);
 * await first.cancel();
 * // The newest is taken whole; then nothing is held.
 * assert.equal((await new Response(second).text()).length, 100_000);
 * assert.equal(unsent.bytes, 0);
 * ```
 * @param options The limit and what to tell when an answer is ended.
 * @returns The count.
 */
export function createUnsentAnswers(options: UnsentAnswersOptions): UnsentAnswers {
  const max = options.maxBytes > 0 ? options.maxBytes : 0;
  const stallMs = options.stallMs ?? 2000;
  const now = options.now ?? (() => performance.now());
  /** Insertion order: the oldest first. */
  const unsent = new Set<Unsent>();
  let bytes = 0;
  let ended = 0;
  const encoder = new TextEncoder();

  function release(entry: Unsent): void {
    if (!unsent.delete(entry)) return;
    bytes -= entry.bytes;
    entry.taken?.();
    options.onRelease?.();
  }
  /** Ends the oldest stalled answers until `more` bytes fit (or none is stalled). */
  function endStalled(more: number): void {
    const stalledBefore = now() - stallMs;
    for (const old of unsent) {
      if (bytes + more <= max) break;
      if (old.progress > stalledBefore) continue;
      ended++;
      options.onEnded?.(old.bytes);
      old.end();
    }
  }

  return {
    body(text, size, taken) {
      if (max === 0 || size < STREAMED_ANSWER_BYTES) return text;
      let at = 0;
      /** The text left to send; null once the answer was ended. */
      let rest: string | null = text;
      const entry: Unsent = {
        bytes: size,
        ...(taken ? { taken } : {}),
        progress: now(),
        end: () => {
          // The text is let go and no byte follows: the client sees its answer
          // cut off (chunked, without the last chunk), and the connection guard
          // closes it after keep_alive_timeout without progress. Erroring the
          // stream would end it at once, but Deno.serve prints every such error.
          release(entry);
          rest = null;
        },
      };
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (rest === null) return new Promise<void>(() => {});
          entry.progress = now();
          let end = Math.min(rest.length, at + SLICE_CHARS);
          // A surrogate pair stays whole (a lone half would encode as U+FFFD).
          const last = rest.charCodeAt(end - 1);
          if (end < rest.length && last >= 0xd800 && last <= 0xdbff) end--;
          controller.enqueue(encoder.encode(rest.slice(at, end)));
          at = end;
          if (at >= rest.length) {
            release(entry);
            controller.close();
          }
        },
        cancel() {
          release(entry);
          rest = null;
        },
      }, { highWaterMark: 0 });
      endStalled(size);
      unsent.add(entry);
      bytes += size;
      return stream;
    },
    get bytes() {
      return bytes;
    },
    get full() {
      if (max === 0 || bytes < max) return false;
      endStalled(0);
      return bytes >= max;
    },
    get ended() {
      return ended;
    },
    maxBytes: max,
  };
}
