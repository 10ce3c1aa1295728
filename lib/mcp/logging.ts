/**
 * The MCP logging utility (`logging/setLevel`, `notifications/message`):
 * RFC 5424 severities in order, and the notification a session receives. Pure.
 *
 * @module
 */

/** The levels, least severe first. */
export const LOG_LEVELS = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
] as const;

/** One level. */
export type LogLevel = typeof LOG_LEVELS[number];

/**
 * Tells whether a value names a level.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isLogLevel } from "./logging.ts";
 * assert.equal(isLogLevel("warning"), true);
 * assert.equal(isLogLevel("warn"), false);
 * ```
 * @param value Any value.
 * @returns True for a level name.
 */
export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === "string" && (LOG_LEVELS as readonly string[]).includes(value);
}

/**
 * Tells whether a message at `level` passes a session's threshold (null: the
 * session never set one, and gets no log messages).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { passes } from "./logging.ts";
 * assert.equal(passes("error", "warning"), true);
 * assert.equal(passes("info", "warning"), false);
 * assert.equal(passes("emergency", null), false);
 * ```
 * @param level The message's level.
 * @param threshold The session's level.
 * @returns True when it is sent.
 */
export function passes(level: LogLevel, threshold: LogLevel | null): boolean {
  return threshold !== null && LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold);
}

/**
 * A `notifications/message`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { logNotification } from "./logging.ts";
 * assert.deepEqual(logNotification("info", { message: "hi" }), {
 *   jsonrpc: "2.0", method: "notifications/message",
 *   params: { level: "info", logger: "gw-router", data: { message: "hi" } },
 * });
 * ```
 * @param level The level.
 * @param data The payload.
 * @returns The notification.
 */
export function logNotification(level: LogLevel, data: unknown): Record<string, unknown> {
  return {
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { level, logger: "gw-router", data },
  };
}
