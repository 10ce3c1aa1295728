/**
 * Logging contract: one JSON object per line (`level`, `msg`, `time`, fields).
 * The implementation lives in `logger.ts`; pure modules never log, they return.
 *
 * @module
 */
import type { LogLevel } from "../config/types.ts";

/** A structured logger. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export type { LogLevel };
