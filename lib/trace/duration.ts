/**
 * Durations as Cosmo's ART prints them: Go's `time.Duration.String()`.
 *
 * @module
 */

/**
 * Formats nanoseconds like Go's `time.Duration.String()` (`"5ns"`, `"1.5µs"`,
 * `"2.5ms"`, `"1m30s"`, `"0s"`), the `*_pretty` form of Cosmo's ART.
 *
 * @example Go's formatting
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatDuration } from "./duration.ts";
 * assert.equal(formatDuration(0), "0s");
 * assert.equal(formatDuration(5), "5ns");
 * assert.equal(formatDuration(1_500), "1.5µs");
 * assert.equal(formatDuration(2_500_000), "2.5ms");
 * assert.equal(formatDuration(90e9), "1m30s");
 * assert.equal(formatDuration(3600e9), "1h0m0s");
 * ```
 *
 * @param nanoseconds A duration in nanoseconds (rounded to an integer).
 * @returns The Go-style text.
 */
export function formatDuration(nanoseconds: number): string {
  const rounded = Math.round(nanoseconds);
  const sign = rounded < 0 ? "-" : "";
  const value = Math.abs(rounded);
  if (value === 0) return "0s";
  if (value < 1e3) return `${sign}${value}ns`;
  if (value < 1e6) return `${sign}${fraction(value, 3)}µs`;
  if (value < 1e9) return `${sign}${fraction(value, 6)}ms`;
  const seconds = `${fraction(value % 60e9, 9)}s`;
  const minutes = Math.floor(value / 60e9);
  if (minutes === 0) return `${sign}${seconds}`;
  const hours = Math.floor(minutes / 60);
  return `${sign}${hours > 0 ? `${hours}h` : ""}${minutes % 60}m${seconds}`;
}

function fraction(value: number, digits: number): string {
  const unit = 10 ** digits;
  const whole = Math.floor(value / unit);
  const rest = value % unit;
  if (rest === 0) return String(whole);
  return `${whole}.${String(rest).padStart(digits, "0").replace(/0+$/, "")}`;
}
