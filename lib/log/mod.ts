/**
 * Structured logging: one JSON object per line (`level`, `msg`, `time`, then
 * the fields), filtered by a threshold (`log_level`, env `LOG_LEVEL`). Pure
 * modules never log, they return; the edges (`lib/http`, `lib/cli`) do.
 *
 * @module
 */
import type { LogLevel } from "../config/mod.ts";
import { createLineBuffer, type LineBuffer } from "./line_buffer.ts";

export type { LogLevel };

/** A structured logger. */
export interface Logger {
  /** Logs at `debug`. */
  debug(msg: string, fields?: Record<string, unknown>): void;
  /** Logs at `info`. */
  info(msg: string, fields?: Record<string, unknown>): void;
  /** Logs at `warn`. */
  warn(msg: string, fields?: Record<string, unknown>): void;
  /** Logs at `error`. */
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Options for {@linkcode createLogger}. */
export interface LoggerOptions {
  /**
   * Lowest level written.
   * @default {"info"}
   */
  readonly level?: LogLevel;
  /**
   * Receives each finished line (without the newline).
   * @default {stdout, in batches: a line waits at most 20 ms, warnings and errors none (see {@linkcode flushLogs})}
   */
  readonly write?: (line: string) => void;
  /**
   * The clock, for `time`.
   * @default {() => new Date()}
   */
  readonly now?: () => Date;
  /** Fields added to every line (after `time`, before the call's fields). */
  readonly fields?: Readonly<Record<string, unknown>>;
}

const RANK: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * Creates a JSON-lines logger. Lines below the threshold cost one comparison.
 * `Error` values in fields are written as `{name, message, code?}`; values
 * that cannot be serialized are written as strings, never thrown.
 *
 * @example Threshold and line shape
 * ```ts
 * import assert from "node:assert/strict";
 * import { createLogger } from "./mod.ts";
 * const lines: string[] = [];
 * const log = createLogger({
 *   level: "info",
 *   write: (line) => lines.push(line),
 *   now: () => new Date(0),
 * });
 * log.debug("hidden");
 * log.info("Router listening", { url: "http://127.0.0.1:3002" });
 * assert.deepEqual(lines.map((line) => JSON.parse(line)), [{
 *   level: "info",
 *   msg: "Router listening",
 *   time: "1970-01-01T00:00:00.000Z",
 *   url: "http://127.0.0.1:3002",
 * }]);
 * ```
 * @param options Threshold, writer, clock, fixed fields.
 * @returns The logger.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const threshold = RANK[options.level ?? "info"];
  const write = options.write;
  const now = options.now ?? (() => new Date());
  const fixed = options.fields ?? {};
  function emit(level: LogLevel, msg: string, fields?: Record<string, unknown>): void {
    if (RANK[level] < threshold) return;
    const record = { level, msg, time: now().toISOString(), ...fixed, ...fields };
    const line = stringify(record);
    if (write !== undefined) write(line);
    else stdoutLines().add(line, RANK[level] >= RANK.warn);
  }
  return {
    debug: (msg, fields) => emit("debug", msg, fields),
    info: (msg, fields) => emit("info", msg, fields),
    warn: (msg, fields) => emit("warn", msg, fields),
    error: (msg, fields) => emit("error", msg, fields),
  };
}

/**
 * A logger that drops everything (tests and library use).
 *
 * @example
 * ```ts
 * import { silentLogger } from "./mod.ts";
 * silentLogger.error("nobody hears this");
 * ```
 */
export const silentLogger: Logger = Object.freeze({
  debug() {},
  info() {},
  warn() {},
  error() {},
});

function stringify(record: Record<string, unknown>): string {
  // A replacer function takes V8 off its fast JSON path (the access log's
  // line cost twice as much); records of plain values, like that one, need none.
  if (plain(record)) return JSON.stringify(record);
  try {
    return JSON.stringify(record, replacer);
  } catch {
    const safe: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(record)) {
      try {
        JSON.stringify(value, replacer);
        safe[key] = value;
      } catch {
        safe[key] = String(value);
      }
    }
    return JSON.stringify(safe, replacer);
  }
}

/** True when no field needs {@linkcode replacer}: strings, numbers, booleans and nulls only. */
function plain(record: Record<string, unknown>): boolean {
  for (const key in record) {
    const value = record[key];
    if (value === null) continue;
    const type = typeof value;
    if (type !== "string" && type !== "number" && type !== "boolean") return false;
  }
  return true;
}

function replacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return {
      name: value.name,
      message: value.message,
      ...(typeof code === "string" ? { code } : {}),
      ...(value.cause === undefined ? {} : { cause: String(value.cause) }),
    };
  }
  if (typeof value === "bigint") return value.toString();
  return value;
}

let stdout: LineBuffer | undefined;

/** The process's stdout lines, made on first use (written at exit too). */
function stdoutLines(): LineBuffer {
  if (stdout === undefined) {
    const buffer = createLineBuffer({ write: writeStdout });
    stdout = buffer;
    // Deno.exit() dispatches `unload`: the last lines are not lost.
    globalThis.addEventListener("unload", () => buffer.flush());
  }
  return stdout;
}

/**
 * Writes a batch to stdout. A stdout that fails (a log reader gone: broken
 * pipe) drops the batch instead of throwing: lines are also written from a
 * timer, where an error would end the process. Said once on stderr.
 */
function writeStdout(bytes: Uint8Array): void {
  try {
    let written = 0;
    while (written < bytes.length) written += Deno.stdout.writeSync(bytes.subarray(written));
  } catch (error) {
    if (stdoutFailed) return;
    stdoutFailed = true;
    try {
      console.error(`GW Router: log lines dropped, stdout failed: ${String(error)}`);
    } catch {
      // stderr is gone too: nothing left to tell.
    }
  }
}

let stdoutFailed = false;

/**
 * Writes the log lines still pending for stdout (the default writer batches
 * them). `serve` calls it when it stops; `Deno.exit` does too.
 *
 * @example
 * ```ts
 * import { flushLogs } from "./mod.ts";
 * flushLogs();
 * ```
 */
export function flushLogs(): void {
  stdout?.flush();
}
