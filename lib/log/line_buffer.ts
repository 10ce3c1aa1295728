/**
 * Log lines written in batches. One write per line was one `write(2)` per
 * request with access logs on (the default): 6 % of the router's time under
 * the load benchmark (`op_write_sync` in `bench/load/profile.sh`). Lines are
 * kept in memory and written together when the batch reaches
 * {@linkcode LineBufferOptions.maxLength}, when {@linkcode LineBufferOptions.delayMs}
 * has passed since the first pending line, on `flush()`, and at once for a
 * line that asks for it (warnings and errors: what explains a crash is never
 * left in memory). Memory is bounded by `maxLength` (UTF-16 code units, so
 * also what one write carries).
 *
 * @module
 */

/** Options of {@linkcode createLineBuffer}. */
export interface LineBufferOptions {
  /** Writes the bytes completely (synchronously). */
  readonly write: (bytes: Uint8Array) => void;
  /** Pending text (UTF-16 code units) that forces a write. @default {65536} */
  readonly maxLength?: number;
  /** Longest a line waits, ms. @default {20} */
  readonly delayMs?: number;
  /** Schedules the delayed write. @default setTimeout */
  readonly setTimer?: (callback: () => void, ms: number) => unknown;
  /** Cancels it (a write came first). @default clearTimeout */
  readonly clearTimer?: (handle: unknown) => void;
}

/** A line buffer. */
export interface LineBuffer {
  /**
   * Adds a line (without its newline).
   * @param line The line.
   * @param now Write it (and everything before it) now.
   */
  add(line: string, now?: boolean): void;
  /** Writes what is pending. */
  flush(): void;
}

const encoder = new TextEncoder();

/**
 * Creates a line buffer.
 *
 * @example Batched until the size bound or a flush
 * ```ts
 * import assert from "node:assert/strict";
 * import { createLineBuffer } from "./line_buffer.ts";
 * const writes: string[] = [];
 * const buffer = createLineBuffer({
 *   write: (bytes) => writes.push(new TextDecoder().decode(bytes)),
 *   maxLength: 10,
 *   setTimer: () => 1, // never fires here
 *   clearTimer: () => {},
 * });
 * buffer.add("a");
 * buffer.add("b");
 * assert.deepEqual(writes, []);
 * buffer.add("0123456789");
 * assert.deepEqual(writes, ["a\nb\n0123456789\n"]);
 * buffer.add("c");
 * buffer.add("warn", true);
 * assert.deepEqual(writes.at(-1), "c\nwarn\n");
 * buffer.add("d");
 * buffer.flush();
 * assert.deepEqual(writes.at(-1), "d\n");
 * ```
 * @param options Writer, bounds, timer.
 * @returns The buffer.
 */
export function createLineBuffer(options: LineBufferOptions): LineBuffer {
  const maxLength = options.maxLength ?? 65_536;
  const delayMs = options.delayMs ?? 20;
  const setTimer = options.setTimer ?? setTimeout;
  const clearTimer = options.clearTimer ??
    ((handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>));
  let pending = "";
  let timer: unknown = null;
  function flush(): void {
    if (timer !== null) {
      clearTimer(timer);
      timer = null;
    }
    if (pending === "") return;
    const text = pending;
    pending = "";
    options.write(encoder.encode(text));
  }
  function timed(): void {
    timer = null;
    flush();
  }
  return {
    add(line, now = false) {
      pending += `${line}\n`;
      if (now || pending.length >= maxLength) {
        flush();
      } else if (timer === null) {
        timer = setTimer(timed, delayMs) ?? null;
      }
    },
    flush,
  };
}
