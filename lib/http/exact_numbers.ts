/**
 * Integers a JSON request writes beyond 2^53 lose digits in `JSON.parse`
 * (`9007199254740993` becomes `…992`): an `ID` variable sent as such a number
 * would fetch another record than the one asked for. They are found here, so
 * the request is refused instead of run with a different value.
 *
 * @module
 */

/** Digits in a row before an integer can be beyond 2^53 (9007199254740992 has 16). */
const LONG_DIGITS = /\d{16}/;
const INTEGER = /^-?\d+$/;

/**
 * The first integer literal of JSON text that `JSON.parse` cannot represent
 * exactly, as written, or null. Texts without 16 digits in a row are not
 * parsed again; others are, with a reviver reading each number's source.
 * Numbers written with a fraction or an exponent are floats by intent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findInexactInteger } from "./exact_numbers.ts";
 * assert.equal(findInexactInteger('{"id": 9007199254740993}'), "9007199254740993");
 * assert.equal(findInexactInteger('{"id": 9007199254740992, "f": 1e400, "s": "12345678901234567"}'), null);
 * assert.equal(findInexactInteger('{"big": 100000000000000000000}'), null);
 * ```
 * @param text JSON text that `JSON.parse` accepts.
 * @returns The integer as written, or null.
 */
export function findInexactInteger(text: string): string | null {
  if (!LONG_DIGITS.test(text)) return null;
  let found: string | null = null;
  JSON.parse(text, (_key, value: unknown, context?: { source?: string }) => {
    const source = context?.source;
    if (
      found === null && typeof value === "number" && !Number.isSafeInteger(value) &&
      source !== undefined && INTEGER.test(source) && BigInt(source) !== exactly(value)
    ) {
      found = source;
    }
    return value;
  });
  return found;
}

function exactly(value: number): bigint | null {
  return Number.isInteger(value) ? BigInt(value) : null;
}
