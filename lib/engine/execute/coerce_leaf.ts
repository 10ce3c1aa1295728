/**
 * Response coercion of subgraph leaf values, as graphql-js serializes them
 * (`GraphQLInt.serialize` and friends): a value of the wrong kind is not
 * passed on. The error never echoes the value (it may be data the client
 * did not select). Pure.
 *
 * @module
 */
import {
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  type GraphQLScalarType,
  GraphQLString,
} from "graphql";
import { isRawNumber } from "../prepare/mod.ts";

const BUILT_IN: ReadonlyMap<string, GraphQLScalarType<unknown, unknown>> = new Map<
  string,
  GraphQLScalarType<unknown, unknown>
>([
  ["Int", GraphQLInt],
  ["Float", GraphQLFloat],
  ["String", GraphQLString],
  ["Boolean", GraphQLBoolean],
  ["ID", GraphQLID],
]);

const INTEGER = /^-?\d+$/;

/** Marks a value that cannot be coerced. */
export const NOT_COERCIBLE: unique symbol = Symbol("not coercible");

/**
 * Coerces a non-null leaf value for a scalar: built-in scalars as graphql-js
 * serializes them (an integral float for `Int`, a number for `ID`, …),
 * custom scalars passed through. An integer beyond 2^53 kept exact (a
 * {@linkcode RawNumber}) is an `ID` or `String` of its digits, a `Float`
 * rounded, never an `Int`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { coerceScalar, NOT_COERCIBLE } from "./coerce_leaf.ts";
 * import { parseJsonExact } from "../prepare/json_numbers.ts";
 * assert.equal(coerceScalar("Int", 3), 3);
 * assert.equal(coerceScalar("ID", 7), "7");
 * assert.equal(coerceScalar("Int", { ssn: "123" }), NOT_COERCIBLE);
 * assert.equal(coerceScalar("Int", 2 ** 40), NOT_COERCIBLE);
 * assert.deepEqual(coerceScalar("JSON", { any: 1 }), { any: 1 });
 * const [big] = parseJsonExact("[12345678901234567890]") as unknown[];
 * assert.equal(coerceScalar("ID", big), "12345678901234567890");
 * ```
 * @param name The scalar's name.
 * @param raw The subgraph's value (not null).
 * @returns The coerced value, or {@linkcode NOT_COERCIBLE}.
 */
export function coerceScalar(name: string, raw: unknown): unknown {
  // Fast paths: the right kind already (the common case).
  switch (name) {
    case "String":
      if (typeof raw === "string") return raw;
      break;
    case "ID":
      if (typeof raw === "string") return raw;
      break;
    case "Boolean":
      if (typeof raw === "boolean") return raw;
      break;
    case "Int":
      if (typeof raw === "number" && (raw | 0) === raw) return raw;
      break;
    case "Float":
      if (typeof raw === "number" && Number.isFinite(raw)) return raw;
      break;
    default:
      // A custom scalar as it came; a number past the doubles' range (short
      // enough to parse as ±Infinity) would print as null: refused instead.
      return typeof raw === "number" && !Number.isFinite(raw) ? NOT_COERCIBLE : raw;
  }
  if (isRawNumber(raw)) {
    // An integer's digits; a number past the doubles' range is no ID, String or Float.
    if (name === "ID" || name === "String") {
      return INTEGER.test(raw.rawJSON) ? raw.rawJSON : NOT_COERCIBLE;
    }
    const float = Number(raw.rawJSON);
    return name === "Float" && Number.isFinite(float) ? float : NOT_COERCIBLE;
  }
  const scalar = BUILT_IN.get(name)!;
  try {
    return scalar.serialize(raw);
  } catch {
    return NOT_COERCIBLE;
  }
}

/**
 * True when a subgraph's value is already what a built-in scalar position
 * answers, as {@linkcode coerceScalar} would return it unchanged: a string for
 * `String` and `ID`, a boolean for `Boolean`, a 32-bit integer for `Int`, a
 * finite number for `Float`. False for anything else (null, another kind,
 * a custom scalar, an unnamed scalar): those take {@linkcode coerceScalar}.
 * The shaper's fast path (issue 45): most leaves of a big answer are this.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keptAsIs } from "./coerce_leaf.ts";
 * assert.equal(keptAsIs("Float", 0.5), true);
 * assert.equal(keptAsIs("Int", 0.5), false);
 * assert.equal(keptAsIs("ID", 7), false);
 * assert.equal(keptAsIs("Float", Infinity), false);
 * assert.equal(keptAsIs("JSON", "any"), false);
 * assert.equal(keptAsIs("String", null), false);
 * ```
 * @param name The scalar's name (undefined: an unnamed scalar).
 * @param raw The subgraph's value.
 * @returns Whether it is kept as it is.
 */
export function keptAsIs(name: string | undefined, raw: unknown): boolean {
  switch (name) {
    case "String":
    case "ID":
      return typeof raw === "string";
    case "Float":
      return typeof raw === "number" && Number.isFinite(raw);
    case "Int":
      return typeof raw === "number" && (raw | 0) === raw;
    case "Boolean":
      return typeof raw === "boolean";
    default:
      return false;
  }
}

/**
 * How many of a list's first items {@linkcode keptAsIs} keeps: one loop per
 * scalar, no call per item (the shaper's lists of leaves, issue 45).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keptPrefix } from "./coerce_leaf.ts";
 * assert.equal(keptPrefix("Int", [1, 2, 3]), 3);
 * assert.equal(keptPrefix("Int", [1, 2.5, 3]), 1);
 * assert.equal(keptPrefix("Float", [0.5, null]), 1);
 * assert.equal(keptPrefix("String", ["a", 1]), 1);
 * assert.equal(keptPrefix("Boolean", [true, false]), 2);
 * assert.equal(keptPrefix("JSON", [{}]), 0);
 * ```
 * @param name The scalar's name (undefined: an unnamed scalar).
 * @param list The subgraph's list.
 * @returns The length of its longest prefix kept as it is.
 */
export function keptPrefix(name: string | undefined, list: readonly unknown[]): number {
  const n = list.length;
  let i = 0;
  switch (name) {
    case "Float":
      for (; i < n; i++) {
        const v = list[i];
        if (typeof v !== "number" || !Number.isFinite(v)) break;
      }
      return i;
    case "Int":
      for (; i < n; i++) {
        const v = list[i];
        if (typeof v !== "number" || (v | 0) !== v) break;
      }
      return i;
    case "String":
    case "ID":
      while (i < n && typeof list[i] === "string") i++;
      return i;
    case "Boolean":
      while (i < n && typeof list[i] === "boolean") i++;
      return i;
    default:
      return 0;
  }
}

/**
 * The kind of a value, for error messages that must not echo the value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { kindOf } from "./coerce_leaf.ts";
 * assert.equal(kindOf([1]), "a list");
 * assert.equal(kindOf({ a: 1 }), "an object");
 * assert.equal(kindOf(1.5), "a number");
 * ```
 * @param value Any JSON value.
 * @returns "a list", "an object", "a string", "a number" or "a boolean".
 */
export function kindOf(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  if (isRawNumber(value)) return "a number";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

/**
 * True when a custom scalar's value (a JSON object or list) nests deeper than
 * `limit` levels. Walked with a stack of its own (no recursion): the value
 * came whole from a subgraph, and printing one nested thousands of levels deep
 * overflows `JSON.stringify`'s stack once the response is large.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nestedDeeperThan } from "./coerce_leaf.ts";
 * assert.equal(nestedDeeperThan({ a: [{ b: 1 }] }, 3), false);
 * assert.equal(nestedDeeperThan({ a: [{ b: {} }] }, 3), true);
 * assert.equal(nestedDeeperThan("flat", 0), false);
 * ```
 * @param value The value.
 * @param limit Levels of objects and lists allowed.
 * @returns Whether it nests deeper.
 */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop()!;
    if (typeof v !== "object" || v === null || isRawNumber(v)) continue;
    if (depth >= limit) return true;
    const items = Array.isArray(v) ? v : Object.values(v);
    for (const item of items) {
      if (typeof item !== "object" || item === null) continue;
      values.push(item);
      depths.push(depth + 1);
    }
  }
  return false;
}
