/**
 * Subgraph JSON with integers beyond 2^53 kept exact. `JSON.parse` turns
 * `12345678901234567890` into the nearest double (`12345678901234567000`): a
 * `Long` scalar or a numeric key would reach the client, or the next
 * subgraph's representation, silently changed. Such numbers are parsed as
 * `JSON.rawJSON` values instead, which `JSON.stringify` prints digit for digit
 * (Rust routers keep 64-bit integers; JavaScript gateways lose them).
 *
 * The check costs a strided scan (every 16th character; an integer that
 * cannot be exact has at least 16 digits), and only a body with such a run
 * of digits is parsed again with a reviver.
 *
 * @module
 */
import {
  type GraphQLInputType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
} from "graphql";

/** `JSON.rawJSON` / `JSON.isRawJSON` (ES2026, in V8): not in TypeScript's lib yet. */
const RAW = JSON as unknown as {
  rawJSON(text: string): RawNumber;
  isRawJSON(value: unknown): value is RawNumber;
};

/** A number kept as its JSON text (a frozen, prototype-less `{ rawJSON }`). */
export interface RawNumber {
  readonly rawJSON: string;
}

/** Fewest digits of an integer that may not be exact as a double (2^53 has 16). */
const DIGITS = 16;

/**
 * Parses JSON text; integers beyond `Number.MAX_SAFE_INTEGER`, and numbers
 * written with so many digits that they pass the doubles' range, become
 * {@linkcode RawNumber}s holding their exact text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseJsonExact } from "./json_numbers.ts";
 * const value = parseJsonExact('{"id":12345678901234567890,"n":1}');
 * assert.equal(JSON.stringify(value), '{"id":12345678901234567890,"n":1}');
 * ```
 * @param text JSON text.
 * @returns The value.
 * @throws {SyntaxError} When the text is not JSON.
 */
export function parseJsonExact(text: string): unknown {
  if (!mayHoldInexactInteger(text)) return JSON.parse(text);
  return JSON.parse(text, keepExact);
}

function keepExact(this: unknown, _key: string, value: unknown, context?: { source?: string }) {
  // Unsafe integers, and numbers past the doubles' range (which parse as
  // ±Infinity and would print as null).
  if (
    typeof value === "number" && (!Number.isFinite(value) || !Number.isSafeInteger(value)) &&
    (Number.isInteger(value) || !Number.isFinite(value)) && context?.source !== undefined
  ) {
    return RAW.rawJSON(context.source);
  }
  return value;
}

/**
 * True when the text has a run of at least 16 digits (inside a string or not:
 * a false positive only costs a slower parse) that is not a plain fraction: a
 * run after a `.` with no exponent behind it (`0.2857142857142857`, what
 * printing most doubles gives) is the fraction of a number whose integer part
 * is a run of its own (checked on its own), so it is neither an integer nor
 * past the doubles' range. With an exponent (`1.2345678901234567e19`) it may
 * be an integer beyond 2^53.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mayHoldInexactInteger } from "./json_numbers.ts";
 * assert.equal(mayHoldInexactInteger('{"f":0.2857142857142857}'), false);
 * assert.equal(mayHoldInexactInteger('{"i":12345678901234567890}'), true);
 * assert.equal(mayHoldInexactInteger('{"e":1.2345678901234567e19}'), true);
 * ```
 * @param text JSON text.
 * @returns Whether a number in it may not be exact as a double.
 */
export function mayHoldInexactInteger(text: string): boolean {
  // Any run of 16 digits covers one of the positions 15, 31, 47, …
  for (let i = DIGITS - 1; i < text.length; i += DIGITS) {
    if (!isDigit(text.charCodeAt(i))) continue;
    let start = i;
    while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--;
    let end = i + 1;
    while (end < text.length && isDigit(text.charCodeAt(end))) end++;
    if (end - start < DIGITS) continue;
    const after = text.charCodeAt(end) | 0x20;
    if (start > 0 && text.charCodeAt(start - 1) === DOT && after !== LOWER_E) continue;
    return true;
  }
  return false;
}

/** `.` and `e` (a character code `| 0x20` folds `E` into it). */
const DOT = 46;
const LOWER_E = 101;

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/**
 * True for a number kept as its text by {@linkcode parseJsonExact}.
 *
 * @param value Any value.
 * @returns Whether it is a {@linkcode RawNumber}.
 */
export function isRawNumber(value: unknown): value is RawNumber {
  return typeof value === "object" && value !== null && RAW.isRawJSON(value);
}

/**
 * A client's variable value with the exact integers of {@linkcode parseJsonExact} fitted to the
 * type they are given for, before graphql-js coerces it: an `ID` gets the digits (graphql-js
 * would print the rounded double), a custom scalar keeps the exact number for the subgraph, any
 * other scalar the double (its usual coercion and errors). Returns `value` itself when it holds
 * no exact integer. The nesting is bounded by the caller (`checkVariablesDepth`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GraphQLID, GraphQLList } from "graphql";
 * import { exactInput, parseJsonExact } from "./json_numbers.ts";
 * const ids = parseJsonExact("[12345678901234567891, 7]");
 * assert.deepEqual(exactInput(ids, new GraphQLList(GraphQLID)), ["12345678901234567891", 7]);
 * ```
 * @param value The variable's value (from the client's JSON).
 * @param type The variable's (or the input field's) type.
 * @returns The value to coerce.
 */
export function exactInput(value: unknown, type: GraphQLInputType): unknown {
  const named = isNonNullType(type) ? type.ofType : type;
  if (isRawNumber(value)) {
    if (isListType(named)) return exactInput(value, named.ofType);
    if (!isScalarType(named) || !BUILT_IN_SCALARS.has(named.name)) return value;
    return named.name === "ID" ? value.rawJSON : Number(value.rawJSON);
  }
  if (typeof value !== "object" || value === null) return value;
  if (isListType(named)) {
    if (!Array.isArray(value)) return exactInput(value, named.ofType);
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item = exactInput(value[i], named.ofType);
      if (item !== value[i]) (copy ??= value.slice())[i] = item;
    }
    return copy ?? value;
  }
  if (!isInputObjectType(named) || Array.isArray(value)) return value;
  const fields = named.getFields();
  let copy: Record<string, unknown> | null = null;
  for (const [key, field] of Object.entries(value)) {
    const input = fields[key];
    if (input === undefined) continue;
    const fitted = exactInput(field, input.type);
    if (fitted !== field) (copy ??= { ...value })[key] = fitted;
  }
  return copy ?? value;
}

const BUILT_IN_SCALARS = new Set(["ID", "Int", "Float", "String", "Boolean"]);
